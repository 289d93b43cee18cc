// Conv2D layer: forward conv with bias/activation epilogue; backward dZ, dW (+db) and dX.
// "same" padding follows TensorFlow: total = max((out-1)·stride + k - in, 0), the extra on the
// bottom/right.
#include "core/nn/conv2d.h"

#include <algorithm>

namespace mantissa {

Conv2dArgs Conv2D::geometry(std::int64_t batch, const Shape& input) const {
    Conv2dArgs g;
    g.batch = batch;
    g.in_h = input[0];
    g.in_w = input[1];
    g.in_c = input[2];
    g.out_c = m_spec.filters;
    g.kernel_h = m_spec.kernel[0];
    g.kernel_w = m_spec.kernel[1];
    g.stride_h = m_spec.stride[0] > 0 ? m_spec.stride[0] : 1;
    g.stride_w = m_spec.stride[1] > 0 ? m_spec.stride[1] : 1;
    if (m_spec.padding == "same") {
        g.out_h = (g.in_h + g.stride_h - 1) / g.stride_h;
        g.out_w = (g.in_w + g.stride_w - 1) / g.stride_w;
        const std::int64_t pad_h =
            std::max<std::int64_t>((g.out_h - 1) * g.stride_h + g.kernel_h - g.in_h, 0);
        const std::int64_t pad_w =
            std::max<std::int64_t>((g.out_w - 1) * g.stride_w + g.kernel_w - g.in_w, 0);
        g.pad_top = pad_h / 2;
        g.pad_left = pad_w / 2;
    } else {
        g.out_h = (g.in_h - g.kernel_h) / g.stride_h + 1;
        g.out_w = (g.in_w - g.kernel_w) / g.stride_w + 1;
    }
    return g;
}

Shape Conv2D::output_shape(const Shape& input) const {
    if (input.size() != 3)
        shape_error(input, "must be (height, width, channels) per example; Conv2D cannot follow "
                           "Flatten or Dense");
    if (m_spec.filters <= 0) shape_error(input, "needs filters > 0");
    if (m_spec.kernel[0] <= 0 || m_spec.kernel[1] <= 0 || m_spec.stride[0] < 0 ||
        m_spec.stride[1] < 0)
        shape_error(input, "needs a positive kernel size and stride");
    if (m_spec.padding != "valid" && m_spec.padding != "same")
        shape_error(input, "has padding '" + m_spec.padding + "'; use valid or same");
    if (m_spec.padding == "valid" && (input[0] < m_spec.kernel[0] || input[1] < m_spec.kernel[1]))
        shape_error(input, "is smaller than the " + std::to_string(m_spec.kernel[0]) + "x" +
                               std::to_string(m_spec.kernel[1]) + " kernel");
    Conv2dArgs g = geometry(1, input);
    return {g.out_h, g.out_w, g.out_c};
}

std::int64_t Conv2D::param_count(const Shape& input) const {
    if (input.size() != 3) return 0;
    // Checked like Dense::param_count: the sizes come from a file and may be anything.
    std::int64_t n = 0;
    if (__builtin_mul_overflow(m_spec.kernel[0], m_spec.kernel[1], &n) ||
        __builtin_mul_overflow(n, input[2], &n) || __builtin_mul_overflow(n, m_spec.filters, &n) ||
        __builtin_add_overflow(n, m_spec.filters, &n))
        shape_error(input, "would have more parameters than 64 bits count; use fewer filters");
    return n;
}

std::string Conv2D::detail() const {
    std::string out = std::to_string(m_spec.filters) + " " + std::to_string(m_spec.kernel[0]) +
                      "x" + std::to_string(m_spec.kernel[1]);
    if (m_spec.stride[0] > 1 || m_spec.stride[1] > 1)
        out += " /" + std::to_string(m_spec.stride[0]);
    out += " " + m_spec.padding;
    if (m_spec.activation != Activation::Linear)
        out += std::string(", ") + activation_name(m_spec.activation);
    return out;
}

TensorId Conv2D::build(PlanBuilder& b, TensorId input, bool fuse_softmax) {
    const DType dt = b.policy().compute;
    TensorId x = b.cast(input, dt);
    const Shape in_shape(b.tensor(x).shape.begin() + 1, b.tensor(x).shape.end());
    const Conv2dArgs g = geometry(b.batch(), in_shape);
    Activation act = m_spec.activation;
    if (act == Activation::Softmax) act = Activation::Linear; // rejected by validation; be safe
    (void)fuse_softmax;

    const std::int64_t fan_in = g.kernel_h * g.kernel_w * g.in_c;
    const std::int64_t fan_out = g.kernel_h * g.kernel_w * g.out_c;
    auto kernel = b.add_param("kernel", {g.kernel_h, g.kernel_w, g.in_c, g.out_c}, fan_in, fan_out);
    auto bias = b.add_param("bias", {g.out_c}, 0, 0);
    const Shape out_shape = {g.batch, g.out_h, g.out_w, g.out_c};
    TensorId y = b.add_activation(name() + "/output", dt, out_shape, true);
    TensorId z = act == Activation::Gelu
                     ? b.add_activation(name() + "/preact", dt, out_shape, false)
                     : kNoTensor;
    const double conv_flops = 2.0 * g.batch * g.out_h * g.out_w * g.out_c * fan_in;

    StepSpec fwd;
    fwd.op = std::string("conv2d+bias") +
             (act != Activation::Linear ? std::string("+") + activation_name(act) : "");
    fwd.inputs = {x, kernel.value, bias.value};
    fwd.outputs = {y};
    fwd.flops = conv_flops;
    // Decided at bind: the engine's scratch for this geometry (im2col on the CPU, cuDNN's choice).
    fwd.workspace = [g, dt](const Backend& be, const BoundTensors&) {
        return be.conv2d_workspace_bytes(g, dt);
    };
    fwd.bind = [g, x, kernel, bias, act, y, z](const BoundTensors& t) -> StepRun {
        Tensor* X = t.ptr(x);
        Tensor* W = t.ptr(kernel.value);
        Tensor* B = t.ptr(bias.value);
        Tensor* Y = t.ptr(y);
        Tensor* Z = t.ptr(z);
        const Tensor* ws = t.workspace();
        return [g, X, W, B, act, Y, Z, ws](Backend& be, const RunContext&) {
            be.conv2d_forward(g, *X, *W, B, act, *Y, Z, workspace_of(ws));
        };
    };
    b.forward(std::move(fwd));

    const TensorId dz_id = b.grad_of(y);
    if (act != Activation::Linear) {
        // In place: dZ overwrites dY (the derivative is elementwise).
        StepSpec s;
        s.op = std::string("d") + activation_name(act);
        s.inputs = {b.grad_of(y), y};
        s.outputs = {dz_id};
        s.flops = 2.0 * shape_numel(out_shape);
        s.bind = [act, z, y, dz_id](const BoundTensors& t) -> StepRun {
            Tensor* Z = t.ptr(z);
            Tensor* Y = t.ptr(y);
            Tensor* dY = t.ptr(dz_id);
            Tensor* dZ = dY;
            return [act, Z, Y, dY, dZ](Backend& be, const RunContext&) {
                be.activation_backward(act, Z ? *Z : *Y, *Y, *dY, *dZ);
            };
        };
        b.backward(std::move(s));
    }
    StepSpec sw;
    sw.op = "conv2d dW,db";
    sw.inputs = {x, dz_id};
    sw.outputs = {kernel.grad, bias.grad};
    sw.flops = conv_flops;
    sw.bind = [g, x, dz_id, kernel, bias](const BoundTensors& t) -> StepRun {
        Tensor* X = t.ptr(x);
        Tensor* dZ = t.ptr(dz_id);
        Tensor* dW = t.ptr(kernel.grad);
        Tensor* dB = t.ptr(bias.grad);
        const Tensor* ws = t.workspace();
        return [g, X, dZ, dW, dB, ws](Backend& be, const RunContext&) {
            be.conv2d_backward_filter(g, *X, *dZ, *dW, dB, workspace_of(ws));
        };
    };
    b.backward(std::move(sw));
    if (TensorId dx = b.grad_of(x); dx != kNoTensor) {
        StepSpec sx;
        sx.op = "conv2d dX";
        sx.inputs = {dz_id, kernel.value};
        sx.outputs = {dx};
        sx.flops = conv_flops;
        sx.bind = [g, dz_id, kernel, dx](const BoundTensors& t) -> StepRun {
            Tensor* dZ = t.ptr(dz_id);
            Tensor* W = t.ptr(kernel.value);
            Tensor* dX = t.ptr(dx);
            const Tensor* ws = t.workspace();
            return [g, dZ, W, dX, ws](Backend& be, const RunContext&) {
                be.conv2d_backward_data(g, *dZ, *W, *dX, workspace_of(ws));
            };
        };
        b.backward(std::move(sx));
    }
    return y;
}

} // namespace mantissa
