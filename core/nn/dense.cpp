// Dense layer: forward GEMM with fused bias + activation, backward dZ, dW = Xᵀ·dZ, db, dX = dZ·Wᵀ.
// Input of rank > 1 per example must be flattened first (Keras would apply Dense on the last axis).
#include "core/nn/dense.h"

#include "core/error.h"

namespace mantissa {

Shape Dense::output_shape(const Shape& input) const {
    if (m_spec.units <= 0) shape_error(input, "needs units > 0");
    if (input.size() != 1)
        shape_error(input, "must be 1-D per example; add a Flatten layer before '" + name() + "'");
    return {m_spec.units};
}

std::int64_t Dense::param_count(const Shape& input) const {
    if (input.empty()) return 0;
    // Checked: an experiment file may ask for any size (a fuzz finding: 2222222222222222215 units
    // overflowed int64, undefined behaviour in the editor's shape inference).
    std::int64_t weights = 0, total = 0;
    if (__builtin_mul_overflow(input[0], m_spec.units, &weights) ||
        __builtin_add_overflow(weights, m_spec.units, &total))
        shape_error(input, "would have more parameters than 64 bits count; use fewer units");
    return total;
}

std::string Dense::detail() const {
    std::string out = std::to_string(m_spec.units);
    if (m_spec.activation != Activation::Linear)
        out += std::string(", ") + activation_name(m_spec.activation);
    return out;
}

TensorId Dense::build(PlanBuilder& b, TensorId input, bool fuse_softmax) {
    const DType dt = b.policy().compute;
    TensorId x = b.cast(input, dt);
    const std::int64_t batch = b.batch();
    const std::int64_t in = b.plan().tensor(x).cols();
    const std::int64_t units = m_spec.units;
    Activation act = m_spec.activation;
    if (act == Activation::Softmax && fuse_softmax) act = Activation::Linear;
    const bool softmax_op = act == Activation::Softmax; // not fusable into the GEMM epilogue

    auto kernel = b.add_param("kernel", {in, units}, in, units); // (in, units)
    auto bias = b.add_param("bias", {units}, 0, 0);              // (units)
    const bool needs_pre = act == Activation::Gelu || softmax_op;
    TensorId y = b.add_activation(name() + "/output", dt, {batch, units}, true); // (batch, units)
    TensorId z = needs_pre ? b.add_activation(name() + "/preact", dt, {batch, units}, softmax_op)
                           : kNoTensor;

    // Frontier policies: the GEMM reads quantised float32 copies of its inputs (no-ops otherwise).
    const TensorId xq = b.quantize_input(x, QuantRole::Activation);
    const TensorId wq = b.quantize_input(kernel.value, QuantRole::Weight);
    Tensor* X = b.ptr(xq);
    Tensor* W = b.ptr(wq);
    Tensor* B = b.ptr(bias.value);
    Tensor* Y = b.ptr(y);
    Tensor* Z = b.ptr(z);
    const Tensor* ws = b.workspace_tensor();

    GemmArgs fwd;
    fwd.a = X;
    fwd.b = W;
    fwd.bias = B;
    fwd.c = softmax_op ? Z : Y;
    fwd.epilogue = softmax_op ? Activation::Linear : act;
    fwd.pre_activation = softmax_op ? nullptr : Z;
    b.need_workspace(b.backend().gemm_workspace_bytes(fwd));
    PlanStep step;
    step.op = std::string("gemm+bias") + (fwd.epilogue != Activation::Linear
                                              ? std::string("+") + activation_name(fwd.epilogue)
                                              : std::string());
    step.inputs = {xq, wq, bias.value};
    step.outputs = {y};
    step.flops = 2.0 * batch * in * units;
    step.run = [fwd, ws](Backend& be, const RunContext&) mutable {
        fwd.workspace = workspace_of(ws);
        be.gemm(fwd);
    };
    b.forward(std::move(step));
    if (softmax_op) {
        PlanStep sm;
        sm.op = "softmax";
        sm.inputs = {z};
        sm.outputs = {y};
        sm.flops = 5.0 * batch * units;
        sm.run = [Z, Y](Backend& be, const RunContext&) {
            be.activation_forward(Activation::Softmax, *Z, *Y);
        };
        b.forward(std::move(sm));
    }

    // Backward: dZ = dY ⊙ act'(.), then the three products.
    Tensor* dY = b.ptr(b.grad_of(y));
    Tensor* dZ = dY;
    TensorId dz_id = b.grad_of(y);
    if (act != Activation::Linear) {
        // Elementwise derivatives run in place (dZ overwrites dY); softmax mixes a row, so it
        // writes into the pre-activation's own gradient.
        if (softmax_op) {
            dz_id = b.grad_of(z);
            dZ = b.ptr(dz_id);
        }
        PlanStep s;
        s.op = std::string("d") + activation_name(act);
        s.inputs = {b.grad_of(y), y};
        s.outputs = {dz_id};
        s.flops = 2.0 * batch * units;
        Tensor* pre = Z;
        s.run = [act, pre, Y, dY, dZ](Backend& be, const RunContext&) {
            be.activation_backward(act, pre ? *pre : *Y, *Y, *dY, *dZ);
        };
        b.backward(std::move(s));
    }
    // The bias gradient reads dZ itself; the two products read its quantised copy.
    const TensorId dzq = b.quantize_input(dz_id, QuantRole::Gradient);
    Tensor* dZq = b.ptr(dzq);
    Tensor* dW = b.ptr(kernel.grad);
    Tensor* dB = b.ptr(bias.grad);
    GemmArgs gw;
    gw.a = X;
    gw.transpose_a = true;
    gw.b = dZq;
    gw.c = dW;
    b.need_workspace(b.backend().gemm_workspace_bytes(gw));
    PlanStep sw;
    sw.op = "gemm dW=Xᵀ·dZ";
    sw.inputs = {xq, dzq};
    sw.outputs = {kernel.grad};
    sw.flops = 2.0 * batch * in * units;
    sw.run = [gw, ws](Backend& be, const RunContext&) mutable {
        gw.workspace = workspace_of(ws);
        be.gemm(gw);
    };
    b.backward(std::move(sw));
    PlanStep sb;
    sb.op = "bias_grad";
    sb.inputs = {dz_id};
    sb.outputs = {bias.grad};
    sb.flops = 1.0 * batch * units;
    sb.run = [dZ, dB](Backend& be, const RunContext&) { be.bias_grad(*dZ, *dB); };
    b.backward(std::move(sb));
    if (TensorId dx = b.grad_of(x); dx != kNoTensor) {
        GemmArgs gx;
        gx.a = dZq;
        gx.b = W;
        gx.transpose_b = true;
        gx.c = b.ptr(dx);
        b.need_workspace(b.backend().gemm_workspace_bytes(gx));
        PlanStep sx;
        sx.op = "gemm dX=dZ·Wᵀ";
        sx.inputs = {dzq, wq};
        sx.outputs = {dx};
        sx.flops = 2.0 * batch * in * units;
        sx.run = [gx, ws](Backend& be, const RunContext&) mutable {
            gx.workspace = workspace_of(ws);
            be.gemm(gx);
        };
        b.backward(std::move(sx));
    }
    return y;
}

} // namespace mantissa
