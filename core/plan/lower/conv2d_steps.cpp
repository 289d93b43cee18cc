// Conv2D's steps: forward conv with bias/activation epilogue; backward dZ, dW (+db) and dX.
// The convolution's workspace (im2col, cuDNN's algorithm) is decided at bind, per engine.
#include "core/plan/lower/layer_steps.h"

#include "core/nn/conv2d.h"

namespace mantissa {

TensorId conv2d_steps(PlanBuilder& b, const Conv2D& layer, TensorId input, bool fuse_softmax) {
    const DType dt = b.policy().compute;
    TensorId x = b.cast(input, dt);
    const Shape in_shape(b.tensor(x).shape.begin() + 1, b.tensor(x).shape.end());
    const Conv2dArgs g = layer.geometry(b.batch(), in_shape);
    Activation act = layer.spec().activation;
    if (act == Activation::Softmax) act = Activation::Linear; // rejected by validation; be safe
    (void)fuse_softmax;

    const std::int64_t fan_in = g.kernel_h * g.kernel_w * g.in_c;
    const std::int64_t fan_out = g.kernel_h * g.kernel_w * g.out_c;
    auto kernel = b.add_param("kernel", {g.kernel_h, g.kernel_w, g.in_c, g.out_c}, fan_in, fan_out);
    auto bias = b.add_param("bias", {g.out_c}, 0, 0);
    const Shape out_shape = {g.batch, g.out_h, g.out_w, g.out_c};
    TensorId y = b.add_activation(layer.name() + "/output", dt, out_shape, true);
    TensorId z = act == Activation::Gelu
                     ? b.add_activation(layer.name() + "/preact", dt, out_shape, false)
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
