// GradientSync. The gradients are staged through the host (download, convert, allreduce,
// upload): exact for the CPU engine, whose "device" memory is host memory; the CUDA engine would
// use NCCL on its stream instead and never comes here.
#include "core/train/gradient_sync.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "core/error.h"
#include "core/numeric/convert.h"

namespace mantissa {

GradientSync::GradientSync(Plan& plan, Communicator& communicator, DType wire)
    : m_plan(plan), m_comm(communicator), m_wire(wire) {
    if (wire != DType::Float32 && wire != DType::Float64 && wire != DType::BFloat16 &&
        wire != DType::Float16)
        throw Error(ErrorKind::Config, "allreduce dtype: expected float32, float64, bfloat16 or "
                                       "float16, got " +
                                           std::string(dtype_name(wire)));
    for (const PlanParam& p : m_plan.params) {
        Tensor& grad = m_plan.tensor(p.grad);
        m_grads.push_back(&grad);
        const auto n = static_cast<std::size_t>(grad.numel());
        m_elements += n;
    }
    m_wire_bytes.resize(m_elements * dtype_size(wire));
}

void GradientSync::begin_step(Backend& backend, double weight, std::int64_t step) {
    m_step = step;
    Tensor& tensor = m_plan.tensor(m_plan.scalars);
    StepScalars scalars = backend.read_scalars(tensor);
    m_true_scale = scalars.loss_scale;
    scalars.loss_scale = m_true_scale * weight; // exact for a power-of-two rank count
    backend.write_scalars(scalars, tensor);
}

void GradientSync::gradients_ready(Backend& backend) {
    const auto start = std::chrono::steady_clock::now();
    Tensor& scalars_tensor = m_plan.tensor(m_plan.scalars);
    StepScalars scalars = backend.read_scalars(scalars_tensor);
    scalars.loss_scale = m_true_scale; // the unscale and the scale update use the true one
    backend.write_scalars(scalars, scalars_tensor);

    // Each summand is this rank's share of the global mean, so the 16-bit sum stays as large as
    // one process's gradient: float16 overflows on the wire only where one process would.
    const std::size_t wire_size = dtype_size(m_wire);
    std::size_t at = 0;
    for (Tensor* grad : m_grads) {
        const auto n = static_cast<std::size_t>(grad->numel());
        m_raw.resize(grad->bytes());
        backend.download(*grad, m_raw.data());
        convert(m_raw.data(), grad->dtype, m_wire_bytes.data() + at * wire_size, m_wire, n);
        at += n;
    }
    m_comm.allreduce_sum(m_wire_bytes.data(), m_elements, m_wire);
    at = 0;
    for (std::size_t g = 0; g < m_grads.size(); ++g) {
        Tensor* grad = m_grads[g];
        const auto n = static_cast<std::size_t>(grad->numel());
        m_raw.resize(grad->bytes());
        convert(m_wire_bytes.data() + at * wire_size, m_wire, m_raw.data(), grad->dtype, n);
        if (g == 0 && n > 0 && m_comm.rank() == m_inject_rank && m_step == m_inject_step) {
            const double inf = std::numeric_limits<double>::infinity();
            convert_from_double(&inf, m_raw.data(), grad->dtype, 1);
        }
        backend.upload(m_raw.data(), *grad);
        at += n;
    }
    m_last_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

void GradientSync::finite_check_done(Backend& backend) {
    const auto start = std::chrono::steady_clock::now();
    Tensor& scalars_tensor = m_plan.tensor(m_plan.scalars);
    StepScalars scalars = backend.read_scalars(scalars_tensor);
    const std::int64_t any = m_comm.allreduce_max(scalars.found_inf != 0 ? 1 : 0);
    if ((any != 0) != (scalars.found_inf != 0)) {
        scalars.found_inf = static_cast<std::int32_t>(any);
        backend.write_scalars(scalars, scalars_tensor);
    }
    m_last_ms +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

} // namespace mantissa
