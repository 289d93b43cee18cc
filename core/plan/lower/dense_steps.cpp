// Dense's steps: forward GEMM with fused bias + activation; backward dZ, dW = Xᵀ·dZ, db, dX =
// dZ·Wᵀ. Each GEMM's workspace is the engine's to size at bind (cuBLASLt's heuristics, the CPU's
// widening).
#include "core/plan/lower/layer_steps.h"

#include <functional>

#include "core/nn/dense.h"

namespace mantissa {

TensorId dense_steps(PlanBuilder& b, const Dense& layer, TensorId input, bool fuse_softmax) {
    const DType dt = b.policy().compute;
    TensorId x = b.cast(input, dt);
    const std::int64_t batch = b.batch();
    const std::int64_t in = b.tensor(x).cols();
    const std::int64_t units = layer.spec().units;
    Activation act = layer.spec().activation;
    if (act == Activation::Softmax && fuse_softmax) act = Activation::Linear;
    const bool softmax_op = act == Activation::Softmax; // not fusable into the GEMM epilogue

    auto kernel = b.add_param("kernel", {in, units}, in, units); // (in, units)
    auto bias = b.add_param("bias", {units}, 0, 0);              // (units)
    const bool needs_pre = act == Activation::Gelu || softmax_op;
    TensorId y =
        b.add_activation(layer.name() + "/output", dt, {batch, units}, true); // (batch, units)
    TensorId z = needs_pre
                     ? b.add_activation(layer.name() + "/preact", dt, {batch, units}, softmax_op)
                     : kNoTensor;
    // Frontier policies: the GEMMs read quantised float32 copies of their inputs (no-ops
    // otherwise).
    const TensorId xq = b.quantize_input(x, QuantRole::Activation);
    const TensorId wq = b.quantize_input(kernel.value, QuantRole::Weight);
    // Each backward GEMM reduces along another dimension, so block-scaled recipes quantise
    // column-wise copies for it (TE's columnwise usage): X in blocks down the batch for dW, W in
    // blocks along the units for dX (xq, wq themselves where one copy serves both).
    const TensorId xq_col = b.quantize_input(x, QuantRole::Activation, xq);
    const bool needs_dx = b.grad_of(x) != kNoTensor; // the first layer computes no dX
    const TensorId wq_col = needs_dx ? b.quantize_input(kernel.value, QuantRole::Weight, wq) : wq;

    // A GEMM step's arguments over the bound tensors; the engine sizes its workspace from them.
    auto gemm_step = [](StepSpec& step, std::function<GemmArgs(const BoundTensors&)> args) {
        step.workspace = [args](const Backend& be, const BoundTensors& t) {
            return be.gemm_workspace_bytes(args(t));
        };
        step.bind = [args](const BoundTensors& t) -> StepRun {
            const Tensor* ws = t.workspace();
            return [g = args(t), ws](Backend& be, const RunContext&) mutable {
                g.workspace = workspace_of(ws);
                be.gemm(g);
            };
        };
    };

    const Activation epilogue = softmax_op ? Activation::Linear : act;
    StepSpec step;
    step.op = std::string("gemm+bias") + (epilogue != Activation::Linear
                                              ? std::string("+") + activation_name(epilogue)
                                              : std::string());
    step.inputs = {xq, wq, bias.value};
    step.outputs = {y};
    step.flops = 2.0 * batch * in * units;
    gemm_step(step, [xq, wq, bias, y, z, softmax_op, epilogue](const BoundTensors& t) {
        GemmArgs fwd;
        fwd.a = t.ptr(xq);
        fwd.b = t.ptr(wq);
        fwd.bias = t.ptr(bias.value);
        fwd.c = softmax_op ? t.ptr(z) : t.ptr(y);
        fwd.epilogue = epilogue;
        fwd.pre_activation = softmax_op ? nullptr : t.ptr(z);
        return fwd;
    });
    b.forward(std::move(step));
    if (softmax_op) {
        StepSpec sm;
        sm.op = "softmax";
        sm.inputs = {z};
        sm.outputs = {y};
        sm.flops = 5.0 * batch * units;
        sm.bind = [z, y](const BoundTensors& t) -> StepRun {
            Tensor* Z = t.ptr(z);
            Tensor* Y = t.ptr(y);
            return [Z, Y](Backend& be, const RunContext&) {
                be.activation_forward(Activation::Softmax, *Z, *Y);
            };
        };
        b.forward(std::move(sm));
    }

    // Backward: dZ = dY ⊙ act'(.), then the three products.
    const TensorId dy_id = b.grad_of(y);
    TensorId dz_id = dy_id;
    if (act != Activation::Linear) {
        // Elementwise derivatives run in place (dZ overwrites dY); softmax mixes a row, so it
        // writes into the pre-activation's own gradient.
        if (softmax_op) dz_id = b.grad_of(z);
        StepSpec s;
        s.op = std::string("d") + activation_name(act);
        s.inputs = {dy_id, y};
        s.outputs = {dz_id};
        s.flops = 2.0 * batch * units;
        s.bind = [act, z, y, dy_id, dz_id](const BoundTensors& t) -> StepRun {
            Tensor* pre = t.ptr(z);
            Tensor* Y = t.ptr(y);
            Tensor* dY = t.ptr(dy_id);
            Tensor* dZ = t.ptr(dz_id);
            return [act, pre, Y, dY, dZ](Backend& be, const RunContext&) {
                be.activation_backward(act, pre ? *pre : *Y, *Y, *dY, *dZ);
            };
        };
        b.backward(std::move(s));
    }
    // The bias gradient reads dZ itself; the two products read its quantised copies: blocks
    // along the units for dX (the row-wise copy), down the batch for dW.
    const TensorId dzq = b.quantize_input(dz_id, QuantRole::Gradient);
    const TensorId dzq_col = b.quantize_input(dz_id, QuantRole::Gradient, dzq);
    StepSpec sw;
    sw.op = "gemm dW=Xᵀ·dZ";
    sw.inputs = {xq_col, dzq_col};
    sw.outputs = {kernel.grad};
    sw.flops = 2.0 * batch * in * units;
    gemm_step(sw, [xq_col, dzq_col, kernel](const BoundTensors& t) {
        GemmArgs gw;
        gw.a = t.ptr(xq_col);
        gw.transpose_a = true;
        gw.b = t.ptr(dzq_col);
        gw.c = t.ptr(kernel.grad);
        return gw;
    });
    b.backward(std::move(sw));
    StepSpec sb;
    sb.op = "bias_grad";
    sb.inputs = {dz_id};
    sb.outputs = {bias.grad};
    sb.flops = 1.0 * batch * units;
    sb.bind = [dz_id, bias](const BoundTensors& t) -> StepRun {
        Tensor* dZ = t.ptr(dz_id);
        Tensor* dB = t.ptr(bias.grad);
        return [dZ, dB](Backend& be, const RunContext&) { be.bias_grad(*dZ, *dB); };
    };
    b.backward(std::move(sb));
    if (TensorId dx = b.grad_of(x); dx != kNoTensor) {
        StepSpec sx;
        sx.op = "gemm dX=dZ·Wᵀ";
        sx.inputs = {dzq, wq_col};
        sx.outputs = {dx};
        sx.flops = 2.0 * batch * in * units;
        gemm_step(sx, [dzq, wq_col, dx](const BoundTensors& t) {
            GemmArgs gx;
            gx.a = t.ptr(dzq);
            gx.b = t.ptr(wq_col);
            gx.transpose_b = true;
            gx.c = t.ptr(dx);
            return gx;
        });
        b.backward(std::move(sx));
    }
    return y;
}

} // namespace mantissa
