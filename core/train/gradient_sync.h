// GradientSync: the StepHooks of a data-parallel training step. Each rank's loss gradient is
// scaled by loss_scale * (its rows / the global batch's rows), so every row's gradient is exactly
// what one process would compute for it; after the backward pass the ranks' gradients are summed
// (cast to the allreduce dtype, sum, cast back), which is the global batch's mean; after the
// finite check found_inf is MAXed over the ranks, so every rank applies or every rank skips.
#pragma once

#include <cstdint>
#include <vector>

#include "core/parallel/communicator.h"
#include "core/plan/plan.h"

namespace mantissa {

class GradientSync final : public StepHooks {
public:
    // `wire` is the allreduce dtype: float32, float64, bfloat16 or float16.
    GradientSync(Plan& plan, Communicator& communicator, DType wire);

    // Before each step: this rank's share of the batch (BatchShard::weight) goes into the loss
    // scale the loss gradient reads; gradients_ready() puts the true scale back before the
    // unscale. Per-row gradients then equal one process's, so a float16 gradient overflows on a
    // rank exactly when it would in one process (a rank's mean over B/N rows would be N times
    // larger per row and overflow sooner).
    void begin_step(Backend& backend, double weight, std::int64_t step);
    // Test hook: after the allreduce of `step`, rank `rank` alone sees an inf gradient, as if its
    // own copy had overflowed; the MAX of found_inf must make every rank skip that step.
    void inject_nonfinite(int rank, std::int64_t step) {
        m_inject_rank = rank;
        m_inject_step = step;
    }

    void gradients_ready(Backend& backend) override;
    void finite_check_done(Backend& backend) override;

    double last_ms() const { return m_last_ms; } // the last step's exchange, wall time
    std::int64_t bytes_per_step() const { return static_cast<std::int64_t>(m_wire_bytes.size()); }
    DType wire() const { return m_wire; }

private:
    Plan& m_plan;
    Communicator& m_comm;
    DType m_wire;
    std::vector<Tensor*> m_grads;
    std::size_t m_elements = 0;
    std::vector<unsigned char> m_raw;        // one gradient as stored
    std::vector<unsigned char> m_wire_bytes; // all gradients in the allreduce dtype
    double m_true_scale = 1.0; // the step's loss scale, while the scalars hold the weighted one
    std::int64_t m_step = 0;
    double m_last_ms = 0;
    int m_inject_rank = -1;
    std::int64_t m_inject_step = 0;
};

} // namespace mantissa
