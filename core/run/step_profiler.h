// One training step of an experiment timed plan step by plan step, beside the device's measured
// roof (issue 26's instrument): what `mantissa-cli profile` prints and what the Plan view's
// Measured and Roof columns show, so the developers' instrument and the lesson's are one.
#pragma once

#include <functional>
#include <optional>

#include "core/backend/backend.h"
#include "core/data/mnist.h"
#include "core/plan/step_profile.h"
#include "core/train/experiment.h"

namespace mantissa {

struct StepProfilerOptions {
    int steps = 5;  // profiled steps; each row is the median of its times over them
    int warmup = 2; // ordinary training steps first (allocator, cuBLASLt plans, caches)
    // Polled between steps (the caller's thread); true ends the profile early, without a result.
    std::function<bool()> cancelled;
    // After each warmup or profiled step: (steps done, steps in all).
    std::function<void(int done, int total)> progress;
};

// Builds `experiment`'s run on `backend` with `data`, trains `warmup` steps, times `steps` steps
// (Plan::train_step_timed: device events between plan steps, or the host's clock), measures the
// roof in the policy's compute dtype and returns the rows. Empty when `cancelled` said so. Errors
// are the run's own (a stack that does not fit, a device out of memory). The steps train the
// session's own model, which is dropped: nothing a user trained is touched.
std::optional<StepProfile> profile_training_step(const Experiment& experiment, Backend& backend,
                                                 const Mnist& data,
                                                 const StepProfilerOptions& options = {});

} // namespace mantissa
