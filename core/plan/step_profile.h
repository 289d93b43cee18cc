// A training step, plan step by plan step (issue 26's instrument, `mantissa-cli profile`): each
// step's measured time beside its work (FLOPs from the PlanSpec, bytes from its tensors) and the
// time the device's roof allows for that work, so a reader sees which steps run at the hardware's
// pace and which are overhead. The roof is measured on the device itself: a large GEMM in the
// policy's compute dtype for FLOP/s and a large copy for bytes/s.
#pragma once

#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/plan/plan.h"

namespace mantissa {

// The device's measured ceilings.
struct DeviceRoof {
    double flops_per_s = 0; // a square GEMM's throughput in `dtype`
    double bytes_per_s = 0; // a copy's bytes read plus written per second
    DType dtype = DType::Float32;
    std::int64_t gemm_size = 0; // the GEMM's m = n = k
    std::size_t copy_bytes = 0; // the copied buffer's size
};

// Measures the roof on `backend` (a few GEMMs and copies; well under a second on a GPU, about one
// on two CPU cores). Sizes: 4096 and 256 MiB on a GPU, 768 and 32 MiB on a CPU.
DeviceRoof measure_roof(Backend& backend, DType dtype);

// What a plan step's time is spent on, for the question a format decision asks: does the format
// make the matrix math faster, and what does feeding it (casts, quantisation) cost on top?
enum class StepWork {
    MatrixMath, // GEMMs and convolutions (StepSpec::matrix_math): what tensor cores speed up
    Conversion, // casts and quantisation the policy inserted (StepSpec::is_cast)
    Other,      // activations, loss, normalisation, the optimizer, the batch gather, ...
};
constexpr int kStepWorkCount = 3;
const char* step_work_name(StepWork work);  // "matrix_math", "conversion", "other" (JSON)
const char* step_work_title(StepWork work); // "matrix math (GEMMs, convolutions)", ... (tables)

// One plan step's row.
struct StepProfileRow {
    std::size_t index = 0;
    StepPhase phase = StepPhase::Forward;
    std::string layer, op;
    double ms = 0;              // median over the profiled steps
    double flops = 0;           // per execution (PlanSpec)
    double bytes = 0;           // its input and output tensors, each read or written once
    double roof_ms = 0;         // the larger of flops / flops_per_s and bytes / bytes_per_s
    bool compute_bound = false; // the FLOPs decide roof_ms
    StepWork work = StepWork::Other;
};

// The rows of one kind of work added up.
struct StepWorkTotal {
    double ms = 0, roof_ms = 0;
    int steps = 0;
};

struct StepProfile {
    std::vector<StepProfileRow> rows; // in execution order
    double step_ms = 0;               // the rows' sum
    double roof_ms = 0;               // the rows' roofs summed
    DeviceRoof roof;

    StepWorkTotal total(StepWork work) const; // the rows of that work, added up
};

// A step beside the same step under another policy (`profile --against`, the Plan view's
// "against"): does the format's matrix math pay on this device, and what do its conversions add?
struct StepComparison {
    double matrix_math_ratio = 0; // this step's matrix math / the other's (0: the other has none)
    double step_ratio = 0;        // this step / the other (0: the other took no time)
    double math_saved_ms = 0;     // the other's matrix math - this one's
    double conversions_added_ms = 0; // this one's casts and quantisation - the other's
    // The conversions added cost more than the matrix math saves (the format does not pay yet).
    bool conversions_outweigh_savings() const {
        return math_saved_ms > 0 && conversions_added_ms > math_saved_ms;
    }
};
StepComparison compare_steps(const StepProfile& mine, const StepProfile& other);

// Rows for `plan` from per-step times of several profiled steps (Trainer::profile_step's
// results, each one time per plan step): the median of each step's times.
StepProfile make_step_profile(const Plan& plan, const std::vector<std::vector<double>>& times,
                              const DeviceRoof& roof);

} // namespace mantissa
