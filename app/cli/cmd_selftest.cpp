// `mantissa-cli selftest`: checks that every policy trains on each engine this build has.
// The CPU engine always runs; the CUDA check is reported as skipped when no GPU engine is present.
#include <cmath>
#include <cstdio>

#include "app/cli/args.h"
#include "app/cli/commands.h"
#include "core/backend/factory/backend_factory.h"
#include "core/data/synthetic_mnist.h"
#include "core/error.h"
#include "core/numeric/policy.h"
#include "core/train/trainer.h"

namespace mantissa::cli {

namespace {

ModelSpec mlp_spec() {
    ModelSpec spec;
    LayerSpec flatten;
    flatten.type = LayerType::Flatten;
    LayerSpec hidden;
    hidden.type = LayerType::Dense;
    hidden.units = 32;
    hidden.activation = Activation::Relu;
    LayerSpec out;
    out.type = LayerType::Dense;
    out.units = 10;
    LayerSpec softmax;
    softmax.type = LayerType::Activation;
    softmax.activation = Activation::Softmax;
    softmax.dtype = "float32";
    spec.layers = {flatten, hidden, out, softmax};
    return spec;
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

} // namespace

int run_selftest(const Args& args) {
    ArgParser parser("selftest", "Check that every policy trains on each engine of this build.");
    parser.add_flag("--skip-code",
                    "exit with 77 (ctest's 'skipped') when no GPU engine could be checked");
    parser.parse(args);
    if (parser.help_requested()) {
        std::printf("%s", parser.help().c_str());
        return 0;
    }
    const Mnist data = synthetic_mnist(512, 256);
    int failures = 0;
    std::printf("%-8s %-6s %-16s %10s %10s %10s  %s\n", "engine", "model", "policy", "loss@1",
                "loss@end", "accuracy", "result");
    BackendChoice cpu = create_backend("cpu");
    for (const char* model : {"mlp", "cnn"})
        for (const Policy& policy : all_policies()) {
            Experiment e;
            e.name = std::string("selftest-") + model;
            e.model = std::string(model) == "mlp" ? mlp_spec() : cnn_spec();
            e.policy = policy.name;
            e.optimizer = optimizer_defaults(OptimizerType::Adam);
            e.optimizer.learning_rate = 0.003;
            e.batch_size = 64;
            e.epochs = 3;
            e.device = "cpu";
            std::string verdict = "ok";
            double first = NAN, last = NAN, accuracy = 0;
            try {
                Trainer trainer(e, data, *cpu.backend);
                TrainControl control;
                TrainerCallbacks callbacks;
                callbacks.on_step = [&](const StepRecord& r) {
                    if (std::isnan(first) && !r.skipped) first = r.loss;
                    if (!r.skipped) last = r.loss;
                };
                RunSummary summary = trainer.run(control, callbacks);
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
            std::printf("%-8s %-6s %-16s %10.4f %10.4f %9.1f%%  %s\n", "cpu", model,
                        policy.name.c_str(), first, last, 100.0 * accuracy, verdict.c_str());
        }

    bool gpu_checked = false;
    try {
        BackendChoice gpu = create_backend("cuda");
        gpu_checked = gpu.backend != nullptr; // reached only once the CUDA engine exists
    } catch (const Error& err) {
        std::printf("cuda     skipped: %s\n", err.what());
    }
    std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "passed", failures);
    if (failures) return 1;
    if (!gpu_checked && parser.has("--skip-code")) return 77;
    return 0;
}

} // namespace mantissa::cli
