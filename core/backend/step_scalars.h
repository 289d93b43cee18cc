// StepScalars: the per-step values that live in device memory so a training step never waits
// for the host; the loss-scale update and the skip decision happen where the gradients are.
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace mantissa {

// Plain data, identical on host and device. One copy per Plan, in the workspace category.
struct StepScalars {
    double loss_scale = 1.0;     // the scale the NEXT step will use
    double scale_used = 1.0;     // the scale the last finished step used
    double loss_sum = 0.0;       // sum of per-example losses over valid rows (unscaled)
    std::int64_t correct = 0;    // correctly classified examples
    std::int64_t examples = 0;   // examples counted (valid rows)
    std::int64_t good_steps = 0; // consecutive finite steps (dynamic loss scaling)
    std::int64_t iterations = 0; // optimizer updates applied (Adam's t), skipped steps excluded
    std::int64_t skipped_total = 0;
    std::int32_t found_inf = 0; // set by unscale_and_check_finite when any gradient is inf/NaN
    std::int32_t skipped = 0;   // 1 when the last finished step's update was skipped
    // The skipped-step ledger (issue 27): bit i set when gradient i of the unscale list held an
    // inf or NaN (bit 63 stands for every gradient from the 64th on). Set beside found_inf by the
    // same check, cleared by begin_step, read with the other scalars: no extra host sync.
    std::uint64_t nonfinite_mask = 0;
    // Where the next training batch starts in the epoch's permutation (issue 26: one CUDA Graph
    // for every batch position). A training step's gather reads it on the device and finish_step
    // advances it by batch_stride, back to 0 once it reaches epoch_examples, exactly as the
    // Trainer's host offset moves. batch_stride 0 leaves it alone (plans outside a Trainer).
    std::int64_t batch_position = 0;
    std::int64_t batch_stride = 0;
    std::int64_t epoch_examples = 0;
};

// finish_step's last act on every engine: the next batch's position.
MANTISSA_HD inline void advance_batch_position(StepScalars& s) {
    if (s.batch_stride <= 0) return;
    s.batch_position += s.batch_stride;
    if (s.batch_position >= s.epoch_examples) s.batch_position = 0;
}

// The ledger bit of gradient `index` in the unscale list.
constexpr std::uint64_t nonfinite_bit(std::int64_t index) {
    return std::uint64_t{1} << (index < 63 ? index : 63);
}

} // namespace mantissa
