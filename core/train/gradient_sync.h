// GradientSync: the StepHooks of a data-parallel training step. Each rank's loss gradient is
// scaled by loss_scale * (its rows / the global batch's rows), so every row's gradient is exactly
// what one process would compute for it; after the backward pass the ranks' gradients are summed
// (cast to the allreduce dtype, sum, cast back), which is the global batch's mean; after the
// finite check found_inf is MAXed over the ranks, so every rank applies or every rank skips.
// Two paths: host staging (MPI, the CPU engine) and, when the communicator reduces device memory
// (NCCL), the same three exchanges as engine ops and collectives on the engine's stream, with no
// read back to the host inside the step.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "core/parallel/communicator.h"
#include "core/plan/plan.h"
#include "core/tensor/buffer.h"

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

    // The last step's exchange, wall time. On the device path only the time to enqueue it: the
    // collectives themselves run later on the engine's stream and show in the step's device time.
    double last_ms() const { return m_last_ms; }
    std::int64_t bytes_per_step() const {
        return static_cast<std::int64_t>(m_elements * dtype_size(m_wire));
    }
    DType wire() const { return m_wire; }

private:
    void prepare_device(Backend& backend);
    Tensor loss_scale_view();

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

    // Device path (m_comm.reduces_on_device()): one engine buffer holding the true loss scale,
    // this step's weight, a 1x1 GEMM's workspace and every gradient in the wire dtype, so the
    // exchange is one collective (a bucket, as PyTorch's DDP sends).
    bool m_device = false;
    Buffer m_device_memory;
    Tensor m_saved_scale, m_weight; // (1, 1) float64
    Tensor m_wire_all;              // (m_elements) in m_wire
    Workspace m_gemm_workspace;
    double m_uploaded_weight = std::numeric_limits<double>::quiet_NaN(); // what m_weight holds
};

} // namespace mantissa
