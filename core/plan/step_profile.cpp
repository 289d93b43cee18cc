// The step profile: the roof measurement and the rows (step_profile.h).
#include "core/plan/step_profile.h"

#include <algorithm>
#include <chrono>

#include "core/backend/gemm_timing.h"
#include "core/error.h"

namespace mantissa {

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The best of `repeats` timed calls of `work` (after one untimed call), in seconds: the roof is
// what the device can do, so the fastest run is the fairest measure of it (the GEMM's best of
// time_square_gemm likewise).
template <class Work>
double best_seconds(Backend& backend, int repeats, Work work) {
    work();
    backend.synchronize();
    double best = 0;
    for (int r = 0; r < repeats; ++r) {
        const auto start = Clock::now();
        work();
        backend.synchronize();
        const double s = std::chrono::duration<double>(Clock::now() - start).count();
        best = r == 0 ? s : std::min(best, s);
    }
    return best;
}

struct StepWorkNames {
    const char* name;  // JSON
    const char* title; // tables and the Plan view
};
constexpr StepWorkNames kStepWorkNames[kStepWorkCount] = {
    {"matrix_math", "matrix math (GEMMs, convolutions)"},
    {"conversion", "casts and quantisation"},
    {"other", "everything else"},
};

} // namespace

const char* step_work_name(StepWork work) {
    return kStepWorkNames[static_cast<int>(work)].name;
}

const char* step_work_title(StepWork work) {
    return kStepWorkNames[static_cast<int>(work)].title;
}

StepWorkTotal StepProfile::total(StepWork work) const {
    StepWorkTotal t;
    for (const StepProfileRow& row : rows) {
        if (row.work != work) continue;
        t.ms += row.ms;
        t.roof_ms += row.roof_ms;
        ++t.steps;
    }
    return t;
}

StepComparison compare_steps(const StepProfile& mine, const StepProfile& other) {
    StepComparison c;
    const double math = mine.total(StepWork::MatrixMath).ms;
    const double other_math = other.total(StepWork::MatrixMath).ms;
    c.matrix_math_ratio = other_math > 0 ? math / other_math : 0.0;
    c.step_ratio = other.step_ms > 0 ? mine.step_ms / other.step_ms : 0.0;
    c.math_saved_ms = other_math - math;
    c.conversions_added_ms =
        mine.total(StepWork::Conversion).ms - other.total(StepWork::Conversion).ms;
    return c;
}

DeviceRoof measure_roof(Backend& backend, DType dtype) {
    DeviceRoof roof;
    roof.dtype = dtype;
    const bool gpu = backend.info().is_gpu;
    roof.gemm_size = gpu ? 4096 : 768;
    roof.copy_bytes = gpu ? (std::size_t(256) << 20) : (std::size_t(32) << 20);

    const std::int64_t n = roof.gemm_size;
    const std::vector<double> gemm_ms = time_square_gemm(backend, dtype, n, gpu ? 10 : 3);
    const double gemm_s = *std::min_element(gemm_ms.begin(), gemm_ms.end()) / 1e3;
    roof.flops_per_s = 2.0 * static_cast<double>(n) * static_cast<double>(n) *
                       static_cast<double>(n) / std::max(gemm_s, 1e-9);

    // A copy between two float32 buffers: cast() of equal dtypes is the engine's own copy.
    const auto count = static_cast<std::int64_t>(roof.copy_bytes / sizeof(float));
    Tensor src{"roof src", DType::Float32, {count}, MemCategory::Workspace, nullptr};
    Tensor dst{"roof dst", DType::Float32, {count}, MemCategory::Workspace, nullptr};
    Buffer bs = backend.allocate(src.bytes()), bd = backend.allocate(dst.bytes());
    src.data = bs.data();
    dst.data = bd.data();
    backend.fill(src, 1.0);
    const double copy_s = best_seconds(backend, gpu ? 10 : 3, [&] { backend.cast(src, dst); });
    roof.bytes_per_s = 2.0 * static_cast<double>(src.bytes()) / std::max(copy_s, 1e-9);
    return roof;
}

StepProfile make_step_profile(const Plan& plan, const std::vector<std::vector<double>>& times,
                              const DeviceRoof& roof) {
    StepProfile profile;
    profile.roof = roof;
    for (const std::vector<double>& t : times)
        if (t.size() != plan.steps.size())
            throw Error(ErrorKind::Internal, "step profile: a timing has " +
                                                 std::to_string(t.size()) + " steps, the plan " +
                                                 std::to_string(plan.steps.size()));
    for (std::size_t i = 0; i < plan.steps.size(); ++i) {
        const PlanStep& step = plan.steps[i];
        StepProfileRow row;
        row.index = i;
        row.phase = step.phase;
        row.layer = step.layer;
        row.op = step.op;
        std::vector<double> ms;
        for (const std::vector<double>& t : times) ms.push_back(t[i]);
        row.ms = median(ms);
        row.flops = step.flops;
        // Each distinct tensor once: an in-place step (input and output the same) moves its
        // bytes in and out, so it counts twice, as a read and a write.
        for (TensorId id : step.inputs) row.bytes += static_cast<double>(plan.tensor(id).bytes());
        for (TensorId id : step.outputs) row.bytes += static_cast<double>(plan.tensor(id).bytes());
        const double compute_ms = roof.flops_per_s > 0 ? row.flops / roof.flops_per_s * 1e3 : 0.0;
        const double memory_ms = roof.bytes_per_s > 0 ? row.bytes / roof.bytes_per_s * 1e3 : 0.0;
        row.roof_ms = std::max(compute_ms, memory_ms);
        row.compute_bound = compute_ms > memory_ms;
        // A fused step counts as its main work: a ReLU gradient that also writes FP8 codes is
        // the activation's step, a GEMM with a bias and activation epilogue the GEMM's.
        row.work = step.matrix_math ? StepWork::MatrixMath
                   : step.is_cast   ? StepWork::Conversion
                                    : StepWork::Other;
        profile.step_ms += row.ms;
        profile.roof_ms += row.roof_ms;
        profile.rows.push_back(std::move(row));
    }
    return profile;
}

} // namespace mantissa
