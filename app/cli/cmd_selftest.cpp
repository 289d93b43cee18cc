// `mantissa-cli selftest`: checks that every policy trains on each engine this build has and that
// each engine recovers from running out of memory, then runs the op-case table (core/check): CUDA
// against the CPU engine and a few training steps on a GPU, else the CPU engine against its float64
// reference.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "app/cli/args.h"
#include "app/cli/cli_device.h"
#include "app/cli/commands.h"
#include "core/backend/factory/backend_factory.h"
#include "core/check/float64_reference.h"
#include "core/check/op_cases.h"
#include "core/check/parity.h"
#include "core/data/synthetic_mnist.h"
#include "core/error.h"
#include "core/numeric/policy.h"
#include "core/run/run_session.h"

namespace mantissa::cli {

namespace {

// The small MLP every check here trains: the parity model (float32 softmax, as Keras keeps it).
ModelSpec mlp_spec() {
    return parity_model("float32");
}

ModelSpec cnn_spec() {
    ModelSpec spec = mlp_spec();
    LayerSpec conv;
    conv.type = LayerType::Conv2D;
    conv.filters = 8;
    conv.activation = Activation::Relu;
    LayerSpec pool;
    pool.type = LayerType::MaxPool2D;
    spec.layers.insert(spec.layers.begin(), {conv, pool});
    return spec;
}

// A session of `experiment` on an engine and data the check already holds.
RunSessionOptions on_engine(const Experiment& experiment, Backend& engine, const Mnist& data) {
    RunSessionOptions options;
    options.experiment = experiment;
    options.engine.backend = &engine;
    options.data.data = &data;
    return options;
}

// Every case of the op table on two engines, one line each; returns the failures. `exact`: every
// error must be 0 (the same engine twice).
int run_op_table(Backend& reference, Backend& candidate, const char* title, bool exact) {
    int failures = 0;
    std::printf("\n%-58s %-9s %10s %9s  %-14s %s\n", title, "dtype", "max rel err", "tolerance",
                "choice", "result");
    for (const OpCase& c : op_cases()) {
        const CaseResult r = run_case(c, reference, candidate);
        const bool ok = exact ? r.failure.empty() && r.error == 0 : r.ok();
        failures += ok ? 0 : 1;
        std::string verdict = ok ? "ok" : (r.failure.empty() ? "FAIL" : "FAIL: " + r.failure);
        if (!ok && r.failure.empty() && !r.worst.empty()) verdict += " at " + r.worst;
        if (!r.skipped.empty()) verdict = "skipped: " + r.skipped;
        std::printf("%-58s %-9s %10.3g %9.1g  %-14s %s\n", r.name.c_str(),
                    std::string(dtype_name(r.dtype)).c_str(), r.error, exact ? 0.0 : r.tolerance,
                    r.choice.empty() ? "-" : r.choice.c_str(), verdict.c_str());
    }
    return failures;
}

// A few training steps of every main policy on both engines, the loss compared step by step.
// The frontier policies are there too: a quantised step end to end (its quantise steps, the
// CUDA engine's FP8 GEMMs under mixed_float8's `auto` against the CPU's fake quantisation,
// stochastic rounding's streams), where the op cases check each op alone.
int run_training_parity(Backend& reference, Backend& candidate, const Mnist& data, bool exact) {
    int failures = 0;
    std::printf("\n%-36s %-15s %12s %10s  %s\n", "training steps (3)", "policy", "loss rel err",
                "tolerance", "result");
    for (const char* policy : {"float64", "float32", "mixed_float16", "mixed_bfloat16",
                               "mixed_float8", "mxfp8_e4m3", "nvfp4"}) {
        const TrainingParity r = training_parity(reference, candidate, data, policy, 3);
        const bool ok = exact ? r.failure.empty() && r.max_loss_rel_error == 0 : r.ok();
        failures += ok ? 0 : 1;
        const std::string verdict = ok ? "ok" : (r.failure.empty() ? "FAIL" : "FAIL: " + r.failure);
        std::printf("%-36s %-15s %12.3g %10.1g  %s\n", "mlp step", policy, r.max_loss_rel_error,
                    exact ? 0.0 : r.tolerance, verdict.c_str());
    }
    return failures;
}

// CUDA Graph replay against eager steps on the same engine (issue 17 §4): the same experiment,
// seed and batches, once with the `graph` flag and once without, over two epochs so every batch
// position is captured and then replayed. Every step's loss, scale and skip must be identical:
// a replay runs the very kernels the capture recorded.
int check_graph_replay(Backend& engine, const Mnist& data) {
    int failures = 0;
    // The count of differing steps comes right after the policy, as the error does in the other
    // tables (tst_cuda_selftest reads that column).
    std::printf("\n%-36s %-15s %12s %10s  %s\n", "graph replay vs eager (2 epochs)", "policy",
                "steps differ", "of steps", "result");
    for (const char* policy : {"float32", "mixed_float16"}) {
        Experiment eager;
        eager.name = "selftest-graph";
        eager.model = mlp_spec();
        eager.policy = policy;
        eager.optimizer = optimizer_defaults(OptimizerType::Adam);
        eager.batch_size = 64;
        eager.epochs = 2;
        eager.device = engine.info().id;
        Experiment graph = eager;
        graph.graph = true;
        std::string verdict = "ok";
        std::vector<StepRecord> steps[2];
        int differ = 0;
        try {
            for (int side = 0; side < 2; ++side) {
                RunSessionOptions options = on_engine(side ? graph : eager, engine, data);
                options.callbacks.on_step = [&steps, side](const StepRecord& r) {
                    steps[side].push_back(r);
                };
                RunSession session(std::move(options));
                TrainControl control;
                session.run(control);
            }
            if (steps[0].size() != steps[1].size()) verdict = "FAIL: the step counts differ";
            for (std::size_t i = 0; i < std::min(steps[0].size(), steps[1].size()); ++i) {
                const StepRecord &a = steps[0][i], &b = steps[1][i];
                // Bitwise, NaN included: a replay must not differ in any way.
                if (std::memcmp(&a.loss, &b.loss, sizeof a.loss) != 0 ||
                    a.loss_scale != b.loss_scale || a.skipped != b.skipped)
                    ++differ;
            }
            if (differ && verdict == "ok") verdict = "FAIL: replayed steps differ from eager ones";
        } catch (const std::exception& err) {
            verdict = std::string("FAIL: ") + err.what();
        }
        failures += verdict == "ok" ? 0 : 1;
        std::printf("%-36s %-15s %12d %10zu  %s\n", "mlp, Adam", policy, differ, steps[0].size(),
                    verdict.c_str());
    }
    return failures;
}

int check_gpu(Backend& gpu, const Mnist& data) {
    BackendChoice cpu = create_backend("cpu");
    return run_op_table(*cpu.backend, gpu, "op (cuda vs cpu)", false) +
           run_training_parity(*cpu.backend, gpu, data, false) + check_graph_replay(gpu, data);
}

// Out of memory, then on as normal: an allocation beyond the device and a run whose batch cannot
// fit both fail with Error(OutOfMemory), leave nothing more allocated, and a normal run trains
// after them on the same engine (on a GPU the error must not be sticky). Prints one row; returns
// the failures.
int check_out_of_memory(Backend& engine, const Mnist& data) {
    std::string verdict = "ok";
    const std::size_t in_use_before = engine.memory_in_use(); // cached workspaces may stay
    auto expect_oom = [&](const char* what, const std::function<void()>& call) {
        try {
            call();
            verdict = std::string("FAIL: ") + what + " was granted";
        } catch (const Error& err) {
            if (err.kind() != ErrorKind::OutOfMemory)
                verdict = std::string("FAIL: ") + what + ": " + err.what();
        }
        if (verdict == "ok" && engine.memory_in_use() != in_use_before)
            verdict = std::string("FAIL: ") + what + " left memory allocated";
    };
    expect_oom("an allocation beyond the device", [&] {
        Buffer b = engine.allocate(engine.info().memory_total + (std::size_t{1} << 30));
    });
    Experiment e;
    e.name = "selftest-oom";
    e.model = mlp_spec();
    e.policy = "float32";
    e.batch_size = 64;
    e.epochs = 1;
    e.max_steps = 3;
    e.device = engine.info().id;
    Experiment huge = e;
    huge.batch_size = 1000000;                 // the most the experiment reader accepts
    for (LayerSpec& layer : huge.model.layers) // activations alone: 262 GB
        if (layer.type == LayerType::Dense && layer.units > 10) layer.units = 65536;
    if (verdict == "ok")
        expect_oom("a batch of 10^6 on Dense 65536",
                   [&] { RunSession session(on_engine(huge, engine, data)); });
    if (verdict == "ok") {
        try {
            RunSession session(on_engine(e, engine, data));
            TrainControl control;
            const RunSummary summary = session.run(control).summary;
            if (summary.status != RunStatus::Completed || summary.steps != 3)
                verdict = "FAIL: the run after the OOM did not complete: " + summary.message;
        } catch (const Error& err) {
            verdict = std::string("FAIL: the run after the OOM: ") + err.what();
        }
    }
    std::printf("%-8s %-63s  %s\n", engine.info().id.c_str(),
                "out of memory (an allocation beyond the device, a 10^6 batch), then a run",
                verdict.c_str());
    return verdict == "ok" ? 0 : 1;
}

// Short training runs of every policy on one engine; prints one row each, returns the failures.
int train_policies(const char* engine, Backend& backend, const Mnist& data) {
    int failures = 0;
    for (const char* model : {"mlp", "cnn"})
        for (const Policy& policy : all_policies()) {
            // The frontier policies (issue 18) train on every engine with quantise kernels (the
            // CPU engine and, since fake_quantize.cu, the CUDA engine).
            if (policy.quant && !backend.supports_fake_quantize()) continue;
            Experiment e;
            e.name = std::string("selftest-") + model;
            e.model = std::string(model) == "mlp" ? mlp_spec() : cnn_spec();
            e.policy = policy.name;
            e.optimizer = optimizer_defaults(OptimizerType::Adam);
            e.optimizer.learning_rate = 0.003;
            e.batch_size = 64;
            e.epochs = 3;
            e.device = engine;
            std::string verdict = "ok";
            double first = NAN, last = NAN, accuracy = 0;
            try {
                RunSessionOptions options = on_engine(e, backend, data);
                options.callbacks.on_step = [&](const StepRecord& r) {
                    if (std::isnan(first) && !r.skipped) first = r.loss;
                    if (!r.skipped) last = r.loss;
                };
                RunSession session(std::move(options));
                TrainControl control;
                const RunSummary summary = session.run(control).summary;
                accuracy = summary.val_accuracy;
                // Pure 16-bit policies may train poorly; they must still produce finite numbers.
                const bool pure16 = policy.name == "float16" || policy.name == "bfloat16";
                if (summary.status != RunStatus::Completed || !std::isfinite(last))
                    verdict = "FAIL: " + summary.message;
                else if (!pure16 && !(last < first && accuracy > 0.5))
                    verdict = "FAIL: did not learn";
            } catch (const Error& err) {
                verdict = std::string("FAIL: ") + err.what();
            }
            if (verdict != "ok") ++failures;
            std::printf("%-8s %-6s %-16s %10.4f %10.4f %9.1f%%  %s\n", engine, model,
                        policy.name.c_str(), first, last, 100.0 * accuracy, verdict.c_str());
        }
    return failures;
}

} // namespace

int run_selftest(const Args& args) {
    ArgParser parser("selftest", "Check that every policy trains on each engine of this build, and "
                                 "every op against a reference.");
    parser.add_flag("--skip-code",
                    "exit with 77 (ctest's 'skipped') when no GPU engine could be checked");
    parser.add_flag("--require-gpu",
                    "exit with 3, saying why, when no CUDA device can be checked (a GPU machine's "
                    "scripts: a GPU that does not open must not pass)");
    parser.add_flag("--list", "print the op cases, one a line, and exit");
    parser.add_flag("--qualify",
                    "check the CUDA engine on one GPU (the op-case table against the CPU engine, "
                    "then short training runs) and record the verdict, so that --device auto may "
                    "use that GPU; exits 0 passed, 1 failed, 3 no GPU");
    parser.add_option("--device", "ID",
                      "with --qualify: the GPU to check (default cuda, i.e. cuda:0)");
    parser.add_flag("--self-parity",
                    "only the op table and the training steps, with a second CPU engine as the "
                    "candidate (checks the checker where no GPU exists: every error must be 0)");
    parser.parse(args);
    if (parser.help_requested()) {
        std::printf("%s", parser.help().c_str());
        return 0;
    }
    if (parser.has("--list")) {
        for (const OpCase& c : op_cases()) std::printf("%s\n", describe(c).c_str());
        return 0;
    }
    if (parser.has("--qualify")) return run_qualification(parser.value("--device", "cuda"));
    const Mnist data = synthetic_mnist(512, 256);
    if (parser.has("--self-parity")) {
        BackendChoice reference = create_backend("cpu"), other = create_backend("cpu");
        const int failures =
            run_op_table(*reference.backend, *other.backend, "op (cpu vs cpu)", true) +
            run_training_parity(*reference.backend, *other.backend, data, true) +
            check_graph_replay(*other.backend, data);
        std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "passed", failures);
        return failures ? 1 : 0;
    }
    // The GPU first, so that --require-gpu fails at once when there is none.
    std::unique_ptr<Backend> gpu;
    std::string gpu_missing;
    try {
        gpu = create_backend("cuda").backend;
    } catch (const Error& err) {
        gpu_missing = err.what();
    }
    if (!gpu && parser.has("--require-gpu")) {
        std::fprintf(stderr, "selftest --require-gpu: no CUDA device was checked: %s\n",
                     gpu_missing.c_str());
        return 3;
    }
    int failures = 0;
    std::printf("%-8s %-6s %-16s %10s %10s %10s  %s\n", "engine", "model", "policy", "loss@1",
                "loss@end", "accuracy", "result");
    BackendChoice cpu = create_backend("cpu");
    failures += train_policies("cpu", *cpu.backend, data);
    failures += check_out_of_memory(*cpu.backend, data);

    if (gpu) { // from here on, any error is a failure, never a skip
        try {
            failures += train_policies(gpu->info().id.c_str(), *gpu, data);
            failures += check_out_of_memory(*gpu, data);
            failures += check_gpu(*gpu, data);
        } catch (const std::exception& err) {
            std::printf("cuda     FAIL: %s\n", err.what());
            ++failures;
        }
    } else {
        std::printf("cuda     skipped: %s\n", gpu_missing.c_str());
        Float64Reference reference;
        failures += run_op_table(reference, *cpu.backend, "op (cpu vs float64 reference)", false);
    }
    std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "passed", failures);
    if (failures) return 1;
    if (!gpu && parser.has("--skip-code")) return 77;
    return 0;
}

} // namespace mantissa::cli
