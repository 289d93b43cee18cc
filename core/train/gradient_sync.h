// GradientSync: the StepHooks of a data-parallel training step. After the backward pass it turns
// every rank's mean gradient into the mean over the whole global batch (weight, cast to the
// allreduce dtype, sum over ranks, cast back); after the finite check it takes the MAX of
// found_inf over the ranks, so either every rank applies the update or every rank skips it.
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

    // Before each step: this rank's share of the batch (BatchShard::weight) and the step number.
    void begin_step(double weight, std::int64_t step);
    // Test hook: after the allreduce of `step`, rank `rank` alone sees an inf gradient, as if its
    // own copy had overflowed; the MAX of found_inf must make every rank skip that step.
    void inject_nonfinite(int rank, std::int64_t step) {
        m_inject_rank = rank;
        m_inject_step = step;
    }

    void gradients_ready(Backend& backend) override;
    void finite_check_done(Backend& backend) override;

    double last_ms() const { return m_last_ms; }       // the last step's exchange, wall time
    std::int64_t bytes_per_step() const { return static_cast<std::int64_t>(m_wire_bytes.size()); }
    DType wire() const { return m_wire; }

private:
    Plan& m_plan;
    Communicator& m_comm;
    DType m_wire;
    std::vector<Tensor*> m_grads;
    std::size_t m_elements = 0;
    std::vector<unsigned char> m_raw;        // one gradient as stored
    std::vector<double> m_values;            // one gradient, weighted, in float64
    std::vector<unsigned char> m_wire_bytes; // all gradients in the allreduce dtype
    double m_weight = 1.0;
    std::int64_t m_step = 0;
    double m_last_ms = 0;
    int m_inject_rank = -1;
    std::int64_t m_inject_step = 0;
};

} // namespace mantissa
