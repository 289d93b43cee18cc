// GradientSync. Host path: the gradients are staged through the host (download, convert,
// allreduce, upload), exact for the CPU engine, whose "device" memory is host memory. Device path
// (NCCL): casts, collectives and the loss-scale weighting are enqueued on the engine's stream.
#include "core/train/gradient_sync.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
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
        // A plan compiled without CompileOptions::reduce_gradients may leave a mixed layer's
        // gradient in its compute dtype; reducing it there would round the sum to 16 bits.
        if (grad.dtype != m_plan.tensor(p.variable).dtype)
            throw Error(ErrorKind::Internal,
                        "gradient sync: '" + grad.name + "' is not in its variable's dtype; " +
                            "compile the plan with CompileOptions::reduce_gradients");
        m_grads.push_back(&grad);
        const auto n = static_cast<std::size_t>(grad.numel());
        m_elements += n;
    }
    m_device = m_comm.reduces_on_device();
    if (!m_device) m_wire_bytes.resize(m_elements * dtype_size(wire));
}

// The scalars' loss_scale (their first field) as a (1, 1) float64 tensor the engine's ops accept.
Tensor GradientSync::loss_scale_view() {
    static_assert(offsetof(StepScalars, loss_scale) == 0);
    Tensor view;
    view.name = "step scalars/loss_scale";
    view.dtype = DType::Float64;
    view.shape = {1, 1};
    view.category = MemCategory::Workspace;
    view.data = m_plan.tensor(m_plan.scalars).data;
    return view;
}

void GradientSync::prepare_device(Backend& backend) {
    if (m_device_memory) return;
    auto make = [](const char* name, DType dtype, Shape shape) {
        Tensor t;
        t.name = name;
        t.dtype = dtype;
        t.shape = std::move(shape);
        t.category = MemCategory::Workspace;
        return t;
    };
    m_saved_scale = make("gradient sync/loss scale", DType::Float64, {1, 1});
    m_weight = make("gradient sync/rank weight", DType::Float64, {1, 1});
    m_wire_all = make("gradient sync/wire", m_wire, {static_cast<std::int64_t>(m_elements)});
    Tensor scale = loss_scale_view();
    GemmArgs product;
    product.a = &m_saved_scale;
    product.b = &m_weight;
    product.c = &scale;
    const std::size_t gemm_bytes = backend.gemm_workspace_bytes(product);
    // 256-byte alignment for every part, as cudaMalloc gives a whole allocation.
    auto round_up = [](std::size_t n) { return (n + 255) / 256 * 256; };
    const std::size_t at_weight = 256, at_gemm = 512, at_wire = at_gemm + round_up(gemm_bytes);
    m_device_memory = backend.allocate(at_wire + m_wire_all.bytes());
    auto* base = static_cast<unsigned char*>(m_device_memory.data());
    m_saved_scale.data = base;
    m_weight.data = base + at_weight;
    m_gemm_workspace = {gemm_bytes ? base + at_gemm : nullptr, gemm_bytes};
    m_wire_all.data = base + at_wire;
}

void GradientSync::begin_step(Backend& backend, double weight, std::int64_t step) {
    m_step = step;
    if (m_device) {
        // saved = loss_scale; loss_scale = saved * weight (a 1x1 float64 GEMM: one rounding, as
        // the host path's multiply), all stream-ordered, so nothing waits for the last step.
        prepare_device(backend);
        Tensor scale = loss_scale_view();
        backend.cast(scale, m_saved_scale);
        if (weight != m_uploaded_weight) {
            backend.upload(&weight, m_weight); // stream-ordered after the steps that read it
            m_uploaded_weight = weight;
        }
        GemmArgs product;
        product.a = &m_saved_scale;
        product.b = &m_weight;
        product.c = &scale;
        product.workspace = m_gemm_workspace;
        backend.gemm(product);
        return;
    }
    Tensor& tensor = m_plan.tensor(m_plan.scalars);
    StepScalars scalars = backend.read_scalars(tensor);
    m_true_scale = scalars.loss_scale;
    scalars.loss_scale = m_true_scale * weight; // exact for a power-of-two rank count
    backend.write_scalars(scalars, tensor);
}

void GradientSync::gradients_ready(Backend& backend) {
    const auto start = std::chrono::steady_clock::now();
    if (m_device) {
        Tensor scale = loss_scale_view();
        backend.cast(m_saved_scale, scale); // the unscale and the scale update use the true one
        // Cast each gradient into its slice of the bucket, reduce the bucket, cast back: the same
        // roundings as the host path (a cast to the wire dtype is one rounding on every engine).
        std::int64_t at = 0;
        auto slice = [&](const Tensor& grad) {
            Tensor part = m_wire_all;
            part.shape = {grad.numel()};
            part.data = static_cast<unsigned char*>(m_wire_all.data) +
                        static_cast<std::size_t>(at) * dtype_size(m_wire);
            return part;
        };
        for (Tensor* grad : m_grads) {
            Tensor part = slice(*grad);
            backend.cast(*grad, part);
            at += grad->numel();
        }
        m_comm.allreduce_sum(m_wire_all.data, m_elements, m_wire);
        at = 0;
        for (Tensor* grad : m_grads) {
            const Tensor part = slice(*grad);
            backend.cast(part, *grad);
            at += grad->numel();
        }
        if (!m_grads.empty() && m_grads[0]->numel() > 0 && m_comm.rank() == m_inject_rank &&
            m_step == m_inject_step) {
            Tensor first = *m_grads[0];
            first.shape = {1};
            backend.fill(first, std::numeric_limits<double>::infinity());
        }
        m_last_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        return;
    }
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
    if (m_device) {
        // MAX of the int32 found_inf in place on the device: every rank's update reads the agreed
        // flag from the same stream, with no host round trip.
        auto* scalars = static_cast<unsigned char*>(m_plan.tensor(m_plan.scalars).data);
        m_comm.allreduce_max_in_place(
            reinterpret_cast<std::int32_t*>(scalars + offsetof(StepScalars, found_inf)), 1);
        m_last_ms +=
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        return;
    }
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
