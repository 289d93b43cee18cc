// `mantissa-cli bench`: ms/step and samples/s per policy for one experiment (warm-up excluded,
// median of N steps), and `--gemm`: the engine's raw matrix-product throughput per dtype.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <vector>

#include "app/cli/args.h"
#include "app/cli/cli_device.h"
#include "app/cli/commands.h"
#include "app/cli/experiment_options.h"
#include "app/cli/plan_summary.h"
#include "core/backend/factory/backend_factory.h"
#include "core/backend/gemm_timing.h"
#include "core/data/mnist.h"
#include "core/error.h"
#include "core/numeric/policy.h"
#include "core/run/run_session.h"

namespace mantissa::cli {

namespace {

using Clock = std::chrono::steady_clock;

double percentile(std::vector<double> values, double q) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const std::size_t index =
        static_cast<std::size_t>(q * static_cast<double>(values.size() - 1) + 0.5);
    return values[std::min(index, values.size() - 1)];
}

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream stream(text);
    std::string item;
    while (std::getline(stream, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

struct PolicyResult {
    std::string policy;
    double median_ms = 0, p10_ms = 0, p90_ms = 0, samples_per_s = 0, gflops = 0;
    std::size_t memory = 0;
};

int bench_gemm(const ArgParser& parser, Backend& backend) {
    std::vector<std::int64_t> sizes;
    for (const std::string& s : split_list(parser.value("--sizes", "256,512,1024,2048")))
        sizes.push_back(std::stoll(s));
    std::vector<DType> dtypes;
    for (const std::string& d :
         split_list(parser.value("--dtypes", "float32,float16,bfloat16,float64")))
        dtypes.push_back(dtype_from_name(d));
    const int repeats = static_cast<int>(parser.int_value("--steps", 10, 1, 100000));
    const bool json = parser.has("--json");
    if (!json)
        std::printf("%-10s %6s %6s %6s %10s %10s\n", "dtype", "m", "n", "k", "ms", "GFLOP/s");
    for (DType dtype : dtypes)
        for (std::int64_t size : sizes) {
            const std::vector<double> ms = time_square_gemm(backend, dtype, size, repeats);
            const double median_ms = percentile(ms, 0.5);
            const double gflops = 2.0 * size * size * size / (median_ms * 1e6);
            if (json)
                std::printf("{\"type\":\"gemm\",\"device\":\"%s\",\"dtype\":\"%s\",\"m\":%lld,"
                            "\"n\":%lld,\"k\":%lld,"
                            "\"ms\":%.4f,\"gflops\":%.2f}\n",
                            backend.info().name.c_str(), std::string(dtype_name(dtype)).c_str(),
                            static_cast<long long>(size), static_cast<long long>(size),
                            static_cast<long long>(size), median_ms, gflops);
            else
                std::printf("%-10s %6lld %6lld %6lld %10.3f %10.1f\n",
                            std::string(dtype_name(dtype)).c_str(), static_cast<long long>(size),
                            static_cast<long long>(size), static_cast<long long>(size), median_ms,
                            gflops);
        }
    return 0;
}

} // namespace

int run_bench(const Args& args) {
    ArgParser parser("bench", "Measure ms/step and samples/s per policy (median of --steps after "
                              "--warmup), or the raw GEMM throughput with --gemm.");
    add_experiment_options(parser);
    parser.add_option("--policies", "LIST",
                      "comma-separated policies (default: the config's policy); list float32 first "
                      "to get the speedup column");
    parser.add_option("--steps", "N", "measured steps per policy (default 30)");
    parser.add_option("--warmup", "N", "unmeasured steps first (default 3)");
    parser.add_flag("--gemm", "measure square GEMM throughput instead of training steps");
    parser.add_option("--sizes", "LIST", "with --gemm: square sizes (default 256,512,1024,2048)");
    parser.add_option("--dtypes", "LIST",
                      "with --gemm: dtypes (default float32,float16,bfloat16,float64)");
    parser.add_flag("--json", "one JSON object per line instead of a table");
    parser.add_flag("--tf32", "float32 matmuls and convolutions on TF32 tensor cores (CUDA only)");
    parser.add_flag("--graph", "replay each step as a captured CUDA Graph (CUDA only; compare "
                               "with a run without it)");
    parser.parse(args);
    if (parser.help_requested()) {
        std::printf("%s", parser.help().c_str());
        return 0;
    }
    if (parser.has("--gemm")) {
        DeviceChoice choice = open_cli_device(parser.value("--device", "auto"));
        return bench_gemm(parser, *choice.backend);
    }
    Experiment base = experiment_from_options(parser);
    if (parser.has("--tf32")) base.tf32 = true;
    if (parser.has("--graph")) base.graph = true;
    std::vector<std::string> policies = split_list(parser.value("--policies", base.policy));
    for (const std::string& p : policies) {
        try {
            policy_from_name(p);
        } catch (const Error& e) {
            throw UsageError(std::string("--policies: ") + e.what());
        }
    }
    const int steps = static_cast<int>(parser.int_value("--steps", 30, 1, 1000000));
    const int warmup = static_cast<int>(parser.int_value("--warmup", 3, 0, 1000000));
    const bool json = parser.has("--json");

    DeviceChoice choice = open_cli_device(base.device);
    Backend& backend = *choice.backend;
    const Mnist data = load_mnist(find_data_dir(parser.value("--data")));
    if (!json) {
        std::printf("bench: %s on %s, batch %lld, %d steps after %d warm-up\n", base.name.c_str(),
                    backend.info().name.c_str(), static_cast<long long>(base.batch_size), steps,
                    warmup);
        if (!choice.note.empty()) std::printf("note: %s\n", choice.note.c_str());
        std::printf("%-16s %10s %10s %10s %12s %10s %12s %10s\n", "policy", "ms/step", "p10", "p90",
                    "samples/s", "GFLOP/s", "memory", "speedup");
    }
    std::vector<PolicyResult> results;
    double float32_ms = 0;
    for (const std::string& policy : policies) {
        Experiment e = base;
        e.policy = policy;
        // The config's recipe belongs to its own policy (as in the app's policy comparison): the
        // others, float32 or mixed_bfloat16 beside mixed_float8 say, run with their defaults.
        if (policy != base.policy) e.recipe.reset();
        RunSessionOptions options;
        options.experiment = e;
        options.engine.backend = &backend;
        options.data.data = &data;
        RunSession session(std::move(options));
        Trainer& trainer = session.trainer(); // timed step by step, not run()
        trainer.wrap_at_full_batches();       // the offsets below skip the short last batch
        // Full batches only, as bench/peer_torch.py times them (a padded short batch costs a full
        // step here but less in PyTorch; neither side times it).
        const std::int64_t full = std::max<std::int64_t>(1, data.train.count / e.batch_size);
        const std::int64_t per_epoch = std::min(trainer.steps_per_epoch(), full);
        std::int64_t next = 0;
        auto offset = [&] { return (next++ % per_epoch) * e.batch_size; };
        for (int i = 0; i < warmup; ++i) trainer.step_once(offset());
        std::vector<double> ms;
        if (backend.info().is_gpu) {
            // A GPU step is only enqueued: time the whole run of steps with one synchronisation
            // at the end (as a training run goes), and report the mean as every percentile.
            backend.synchronize();
            const auto start = Clock::now();
            for (int i = 0; i < steps; ++i) trainer.enqueue_step(offset());
            backend.synchronize();
            const double total =
                std::chrono::duration<double, std::milli>(Clock::now() - start).count();
            ms.assign(static_cast<std::size_t>(steps), total / steps);
        } else {
            for (int i = 0; i < steps; ++i) {
                const auto start = Clock::now();
                trainer.step_once(offset());
                ms.push_back(
                    std::chrono::duration<double, std::milli>(Clock::now() - start).count());
            }
        }
        PolicyResult r;
        r.policy = policy;
        r.median_ms = percentile(ms, 0.5);
        r.p10_ms = percentile(ms, 0.1);
        r.p90_ms = percentile(ms, 0.9);
        r.samples_per_s = static_cast<double>(e.batch_size) / (r.median_ms / 1000.0);
        r.gflops = trainer.plan().train_flops_per_step() / (r.median_ms * 1e6);
        r.memory = trainer.memory().total();
        if (policy == "float32") float32_ms = r.median_ms;
        results.push_back(r);
        if (json)
            std::printf("{\"type\":\"bench\",\"config\":\"%s\",\"device\":\"%s\",\"policy\":\"%s\","
                        "\"batch\":%lld,"
                        "\"steps\":%d,\"median_ms\":%.4f,\"p10_ms\":%.4f,\"p90_ms\":%.4f,\"samples_"
                        "per_s\":%.1f,"
                        "\"gflops\":%.2f,\"memory_bytes\":%zu,\"device_bytes_in_use\":%zu}\n",
                        e.name.c_str(), backend.info().name.c_str(), policy.c_str(),
                        static_cast<long long>(e.batch_size), steps, r.median_ms, r.p10_ms,
                        r.p90_ms, r.samples_per_s, r.gflops, r.memory, backend.memory_in_use());
        else
            std::printf("%-16s %10.3f %10.3f %10.3f %12.0f %10.1f %12s %10s\n", policy.c_str(),
                        r.median_ms, r.p10_ms, r.p90_ms, r.samples_per_s, r.gflops,
                        human_bytes(r.memory).c_str(),
                        float32_ms > 0
                            ? (std::to_string(float32_ms / r.median_ms).substr(0, 4) + "x").c_str()
                            : "-");
        std::fflush(stdout);
    }
    return 0;
}

} // namespace mantissa::cli
