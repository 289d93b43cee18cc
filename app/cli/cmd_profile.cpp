// `mantissa-cli profile`: one training step of an experiment, plan step by plan step: each step's
// measured time (the median over --steps profiled steps: on a GPU the device's time between
// events recorded after each plan step, the steps back to back; on the CPU engine the host's
// clock around each step), its FLOPs and bytes, and the time the device's measured roof allows for
// them (a GEMM in the policy's compute dtype, a copy), with which of the two bounds it. The
// developers' instrument for issue 26 and a lesson's: a GEMM on the tensor cores shows as
// compute-bound near its roof, an elementwise step as memory-bound at some multiple of it. The rows
// are then summed by work (matrix math, casts and quantisation, everything else): a format's own
// speed is its matrix math's, apart from what the engine spends feeding it. --against POLICY
// profiles the same step under a second policy and sets the two side by side, work by work: does
// the format pay on this device, and what does feeding it cost.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/args.h"
#include "app/cli/cli_device.h"
#include "app/cli/commands.h"
#include "app/cli/experiment_options.h"
#include "core/data/mnist.h"
#include "core/error.h"
#include "core/numeric/policy.h"
#include "core/plan/step_profile.h"
#include "core/run/step_profiler.h"

namespace mantissa::cli {

namespace {

// `text` cut to `width` characters, the cut marked.
std::string fit(const std::string& text, std::size_t width) {
    return text.size() <= width ? text : text.substr(0, width - 1) + "~";
}

void print_table(const StepProfile& p, const std::string& config, const std::string& policy,
                 const std::string& device) {
    const DeviceRoof& r = p.roof;
    std::printf("profile: %s under %s on %s\n", config.c_str(), policy.c_str(), device.c_str());
    std::printf("roof: %.1f GFLOP/s (%s GEMM %lldx%lldx%lld), %.1f GB/s (copy of %zu MiB)\n",
                r.flops_per_s / 1e9, std::string(dtype_name(r.dtype)).c_str(),
                static_cast<long long>(r.gemm_size), static_cast<long long>(r.gemm_size),
                static_cast<long long>(r.gemm_size), r.bytes_per_s / 1e9, r.copy_bytes >> 20);
    std::printf("%4s %-8s %-10s %-44s %10s %10s %10s %10s %8s %7s\n", "#", "phase", "layer", "op",
                "ms", "GFLOP", "MB", "roof ms", "bound", "x roof");
    for (const StepProfileRow& row : p.rows)
        std::printf(
            "%4zu %-8s %-10s %-44s %10.4f %10.4f %10.3f %10.4f %8s %7s\n", row.index,
            step_phase_name(row.phase), fit(row.layer, 10).c_str(), fit(row.op, 44).c_str(), row.ms,
            row.flops / 1e9, row.bytes / 1e6, row.roof_ms, row.compute_bound ? "compute" : "memory",
            row.roof_ms > 0 ? (std::to_string(row.ms / row.roof_ms).substr(0, 5)).c_str() : "-");
    std::printf("step: %.4f ms measured step by step, %.4f ms at the roof (%.2fx)\n", p.step_ms,
                p.roof_ms, p.roof_ms > 0 ? p.step_ms / p.roof_ms : 0.0);
    // The format's own speed is the matrix math's; what feeding it costs is the conversions'.
    std::printf("where the step goes:\n");
    for (int k = 0; k < kStepWorkCount; ++k) {
        const auto work = static_cast<StepWork>(k);
        const StepWorkTotal t = p.total(work);
        std::printf("  %-34s %3d steps %10.4f ms %6.1f%%   roof %10.4f ms (%sx)\n",
                    step_work_title(work), t.steps, t.ms,
                    p.step_ms > 0 ? 100 * t.ms / p.step_ms : 0, t.roof_ms,
                    t.roof_ms > 0 ? std::to_string(t.ms / t.roof_ms).substr(0, 5).c_str() : "-");
    }
}

// The totals by work, as JSON (the profile's and --against's).
nlohmann::json work_json(const StepProfile& p) {
    nlohmann::json by_work = nlohmann::json::object();
    for (int k = 0; k < kStepWorkCount; ++k) {
        const auto work = static_cast<StepWork>(k);
        const StepWorkTotal t = p.total(work);
        by_work[step_work_name(work)] = {{"ms", t.ms}, {"roof_ms", t.roof_ms}, {"steps", t.steps}};
    }
    return by_work;
}

void print_json(const StepProfile& p, const std::string& config, const std::string& policy,
                const std::string& device, const StepProfile* against,
                const std::string& against_policy) {
    nlohmann::json rows = nlohmann::json::array();
    for (const StepProfileRow& row : p.rows)
        rows.push_back({{"index", row.index},
                        {"phase", step_phase_name(row.phase)},
                        {"layer", row.layer},
                        {"op", row.op},
                        {"ms", row.ms},
                        {"flops", row.flops},
                        {"bytes", row.bytes},
                        {"roof_ms", row.roof_ms},
                        {"bound", row.compute_bound ? "compute" : "memory"},
                        {"work", step_work_name(row.work)}});
    nlohmann::json out = {{"type", "profile"},
                          {"config", config},
                          {"policy", policy},
                          {"device", device},
                          {"roof",
                           {{"dtype", std::string(dtype_name(p.roof.dtype))},
                            {"gflops", p.roof.flops_per_s / 1e9},
                            {"gbytes_per_s", p.roof.bytes_per_s / 1e9},
                            {"gemm_size", p.roof.gemm_size},
                            {"copy_bytes", p.roof.copy_bytes}}},
                          {"step_ms", p.step_ms},
                          {"roof_ms", p.roof_ms},
                          {"by_work", work_json(p)},
                          {"steps", rows}};
    if (against)
        out["against"] = {{"policy", against_policy},
                          {"step_ms", against->step_ms},
                          {"roof_ms", against->roof_ms},
                          {"by_work", work_json(*against)}};
    std::printf("%s\n", out.dump().c_str());
}

// The step under --policy beside the same step under --against, work by work, and what it means
// for the format: its matrix math's ratio to the other policy's, and whether the conversions it
// adds cost more than its matrix math saves.
void print_against(const StepProfile& p, const std::string& policy, const StepProfile& q,
                   const std::string& against) {
    auto ratio = [](double r) {
        return r > 0 ? std::to_string(r).substr(0, 5) + "x" : std::string("-");
    };
    auto ratio_of = [&](double a, double b) { return ratio(b > 0 ? a / b : 0.0); };
    std::printf("against %s (the same step on the same device):\n", against.c_str());
    std::printf("  %-34s %14s %14s %8s\n", "", fit(policy, 14).c_str(), fit(against, 14).c_str(),
                "ratio");
    for (int k = 0; k < kStepWorkCount; ++k) {
        const auto work = static_cast<StepWork>(k);
        const double a = p.total(work).ms, b = q.total(work).ms;
        std::printf("  %-34s %11.4f ms %11.4f ms %8s\n", step_work_title(work), a, b,
                    ratio_of(a, b).c_str());
    }
    std::printf("  %-34s %11.4f ms %11.4f ms %8s\n", "step", p.step_ms, q.step_ms,
                ratio_of(p.step_ms, q.step_ms).c_str());
    const StepComparison c = compare_steps(p, q);
    std::printf("%s's matrix math takes %s of %s's; its step %s. ", policy.c_str(),
                ratio(c.matrix_math_ratio).c_str(), against.c_str(), ratio(c.step_ratio).c_str());
    char conversions[96];
    if (c.conversions_added_ms >= 0)
        std::snprintf(conversions, sizeof conversions, "its casts and quantisation add %.4f ms",
                      c.conversions_added_ms);
    else
        std::snprintf(conversions, sizeof conversions,
                      "its casts and quantisation take %.4f ms less", -c.conversions_added_ms);
    if (c.conversions_outweigh_savings())
        std::printf("Its matrix math saves %.4f ms, but %s: more than it saves.\n", c.math_saved_ms,
                    conversions);
    else if (c.math_saved_ms > 0)
        std::printf("Its matrix math saves %.4f ms; %s.\n", c.math_saved_ms, conversions);
    else
        std::printf("Its matrix math is no faster here; %s.\n", conversions);
}

} // namespace

int run_profile(const Args& args) {
    ArgParser parser("profile",
                     "Time one training step plan step by plan step (the median of --steps "
                     "profiled steps after --warmup), beside each step's FLOPs and bytes and the "
                     "time the device's measured roof allows for them; then the step's time "
                     "by work: matrix math (GEMMs, convolutions), casts and quantisation, "
                     "everything else.");
    add_experiment_options(parser);
    parser.add_option("--steps", "N", "profiled steps (default 5)");
    parser.add_option("--warmup", "N", "unprofiled steps first (default 2)");
    parser.add_option("--against", "POLICY",
                      "profile the same step under POLICY too (with its own defaults: the "
                      "config's recipe applies to --policy only) and set the two side by side, "
                      "work by work");
    parser.add_flag("--json", "one JSON object instead of a table");
    parser.parse(args);
    if (parser.help_requested()) {
        std::printf("%s", parser.help().c_str());
        return 0;
    }
    Experiment e = experiment_from_options(parser);
    const int steps = static_cast<int>(parser.int_value("--steps", 5, 1, 100000));
    const int warmup = static_cast<int>(parser.int_value("--warmup", 2, 0, 100000));
    const bool json = parser.has("--json");

    DeviceChoice choice = open_cli_device(e.device);
    Backend& backend = *choice.backend;
    const Mnist data = load_mnist(find_data_dir(parser.value("--data")));
    StepProfilerOptions options;
    options.steps = steps;
    options.warmup = warmup;
    std::optional<Experiment> other;
    if (parser.has("--against")) {
        other = e;
        other->policy = parser.value("--against");
        other->recipe.reset();
        try {
            policy_from_name(other->policy);
        } catch (const Error& err) {
            throw Error(ErrorKind::Config, std::string("--against: ") + err.what());
        }
    }
    const StepProfile profile = *profile_training_step(e, backend, data, options);
    std::optional<StepProfile> against;
    if (other) against = *profile_training_step(*other, backend, data, options);
    if (!json && !choice.note.empty()) std::printf("note: %s\n", choice.note.c_str());
    if (json) {
        print_json(profile, e.name, e.policy, backend.info().name, against ? &*against : nullptr,
                   other ? other->policy : std::string());
        return 0;
    }
    print_table(profile, e.name, e.policy, backend.info().name);
    if (against) print_against(profile, e.policy, *against, other->policy);
    return 0;
}

} // namespace mantissa::cli
