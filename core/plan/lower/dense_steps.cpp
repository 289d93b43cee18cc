// Dense's steps: forward GEMM with fused bias + activation; backward dZ (with db in the same step
// for ReLU, tanh, sigmoid and GELU), dW = Xᵀ·dZ, db, dX = dZ·Wᵀ. Each GEMM's workspace is the
// engine's to size at bind (cuBLASLt's heuristics, the CPU's widening). Under a frontier policy the
// GEMMs read quantised inputs: quantised-and-decoded copies (fake quantisation; NVFP4's without the
// tensor scales, which the GEMM multiplies its sum by), or, for per-tensor FP8 with
// CompileOptions::fp8_gemm, float8 codes with their decode scales in cuBLASLt's one FP8 layout
// ("TN": C = A·Bᵀ, both operands contiguous along the reduction), which is why X, W and dZ each
// get a row-wise and a transposed copy of the same codes. Under delayed scaling dZ's codes come
// from the step that forms dZ and db (Backend::activation_backward_bias_grad_fp8).
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
    const bool needs_dx = b.grad_of(x) != kNoTensor; // the first layer computes no dX
    const bool training = !b.spec().inference_only;
    // The three products' operands: C = op(A)·op(B), with FP8 decode scales where A and B are
    // float8 codes.
    struct Operands {
        TensorId a = kNoTensor, b = kNoTensor;
        bool transpose_a = false, transpose_b = false;
        TensorId a_scale = kNoTensor, b_scale = kNoTensor;
        bool exact_in_bfloat16 = false; // both are MX copies (GemmArgs::exact_in_bfloat16)
    };
    Operands fwd, dw, dx_ops;
    const bool fp8 = b.fp8_gemm({batch, in, units});
    PlanBuilder::Fp8Operand x8, w8;
    if (fp8) {
        // Forward X·W = X·(Wᵀ)ᵀ reads X and Wᵀ; dW = (Xᵀ)·(dZᵀ)ᵀ reads Xᵀ; dX = dZ·Wᵀ reads W.
        x8 = b.quantize_fp8(x, QuantRole::Activation, true, training);
        w8 = b.quantize_fp8(kernel.value, QuantRole::Weight, training && needs_dx, true);
        fwd = {x8.codes, w8.codes_t, false, true, x8.scale_inv, w8.scale_inv};
    } else {
        // Frontier policies: the GEMMs read quantised float32 copies of their inputs (no-ops
        // otherwise).
        const TensorId xq = b.quantize_input(x, QuantRole::Activation);
        const TensorId wq = b.quantize_input(kernel.value, QuantRole::Weight);
        // Each backward GEMM reduces along another dimension, so block-scaled recipes quantise
        // column-wise copies for it (TE's columnwise usage): X in blocks down the batch for dW,
        // W in blocks along the units for dX (xq, wq themselves where one copy serves both).
        const TensorId xq_col = b.quantize_input(x, QuantRole::Activation, xq);
        const TensorId wq_col =
            needs_dx ? b.quantize_input(kernel.value, QuantRole::Weight, wq) : wq;
        fwd = {xq, wq};
        fwd.exact_in_bfloat16 = b.exact_in_bfloat16(xq) && b.exact_in_bfloat16(wq);
        fwd.a_scale = b.gemm_scale_of(xq); // NVFP4's tensor scales, applied after the sum
        fwd.b_scale = b.gemm_scale_of(wq);
        dw = {xq_col, kNoTensor, true, false};
        dx_ops = {kNoTensor, wq_col, false, true};
    }
    // A GEMM's arguments from its operands over the bound tensors.
    auto operands_of = [](const Operands& o, const BoundTensors& t) {
        GemmArgs g;
        g.a = t.ptr(o.a);
        g.transpose_a = o.transpose_a;
        g.b = t.ptr(o.b);
        g.transpose_b = o.transpose_b;
        g.a_scale = t.ptr(o.a_scale);
        g.b_scale = t.ptr(o.b_scale);
        g.exact_in_bfloat16 = o.exact_in_bfloat16;
        return g;
    };

    // A GEMM step's arguments over the bound tensors; the engine sizes its workspace from them.
    auto gemm_step = [](StepSpec& step, std::function<GemmArgs(const BoundTensors&)> args) {
        step.matrix_math = true;
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
    if (fp8) step.op = "fp8 " + step.op;
    step.inputs = {fwd.a, fwd.b, bias.value};
    step.outputs = {y};
    step.flops = 2.0 * batch * in * units;
    gemm_step(step, [fwd, operands_of, bias, y, z, softmax_op, epilogue](const BoundTensors& t) {
        GemmArgs g = operands_of(fwd, t);
        g.bias = t.ptr(bias.value);
        g.c = softmax_op ? t.ptr(z) : t.ptr(y);
        g.epilogue = epilogue;
        g.pre_activation = softmax_op ? nullptr : t.ptr(z);
        return g;
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

    // Backward: dZ = dY ⊙ act'(.), then the three products. An elementwise derivative (of the
    // output for ReLU, tanh and sigmoid, of the pre-activation for GELU) and the bias gradient
    // are one step, which an engine may run in one pass over dZ
    // (Backend::activation_backward_bias_grad; issue 26).
    const TensorId dy_id = b.grad_of(y);
    TensorId dz_id = dy_id;
    const bool fused_bias_grad = act == Activation::Relu || act == Activation::Tanh ||
                                 act == Activation::Sigmoid || act == Activation::Gelu;
    // On FP8 GEMMs under delayed scaling that step also writes dZ's codes (below), so an engine
    // may form dZ, db and the codes in one pass without storing dZ (issue 26).
    const bool codes_in_act_step = fp8 && fused_bias_grad && b.fuses_gradient_codes();
    // The derivative step's tensors once bound; `in` is what the derivative reads (the
    // pre-activation for GELU, the output otherwise).
    struct ActGrad {
        Tensor *in, *y, *dy, *dz, *db;
    };
    auto act_grad_of = [z, y, dy_id, bias](TensorId dz, const BoundTensors& t) {
        Tensor* Y = t.ptr(y);
        Tensor* pre = t.ptr(z);
        return ActGrad{pre ? pre : Y, Y, t.ptr(dy_id), t.ptr(dz), t.ptr(bias.grad)};
    };
    if (act != Activation::Linear && !codes_in_act_step) {
        // Elementwise derivatives run in place (dZ overwrites dY); softmax mixes a row, so it
        // writes into the pre-activation's own gradient.
        if (softmax_op) dz_id = b.grad_of(z);
        StepSpec s;
        s.op = std::string("d") + activation_name(act) + (fused_bias_grad ? "+bias_grad" : "");
        s.inputs = {dy_id, y};
        s.outputs = {dz_id};
        s.flops = 2.0 * batch * units;
        if (fused_bias_grad) {
            s.outputs.push_back(bias.grad);
            s.flops += 1.0 * batch * units;
        }
        s.bind = [act, dz_id, fused_bias_grad, act_grad_of](const BoundTensors& t) -> StepRun {
            const ActGrad g = act_grad_of(dz_id, t);
            return [act, g, fused_bias_grad](Backend& be, const RunContext&) {
                if (fused_bias_grad)
                    be.activation_backward_bias_grad(act, *g.in, *g.y, *g.dy, *g.dz, *g.db);
                else
                    be.activation_backward(act, *g.in, *g.y, *g.dy, *g.dz);
            };
        };
        b.backward(std::move(s));
    }
    // The bias gradient reads dZ itself; the two products read its quantised copies: blocks
    // along the units for dX (the row-wise copy), down the batch for dW. As FP8 codes: dZ for
    // dX = dZ·(W)ᵀ, dZᵀ for dW = (Xᵀ)·(dZᵀ)ᵀ.
    if (fp8) {
        PlanBuilder::Fp8Operand dz8;
        if (codes_in_act_step) {
            // dZ is not among the outputs: an engine that fuses the pass never stores it, so
            // nothing after this step reads it (the bias gradient is the step's own).
            StepSpec s;
            s.op = std::string("d") + activation_name(act) + "+bias_grad";
            s.inputs = {dy_id, y};
            s.outputs = {bias.grad};
            s.flops = 3.0 * batch * units;
            dz8 = b.quantize_fp8_within(
                std::move(s), dz_id, QuantRole::Gradient, needs_dx, true,
                [act, dz_id, act_grad_of](const BoundTensors& t) -> PlanBuilder::Fp8Run {
                    const ActGrad g = act_grad_of(dz_id, t);
                    return [act, g](Backend& be, const RunContext&, const Fp8QuantArgs& codes) {
                        be.activation_backward_bias_grad_fp8(act, *g.in, *g.y, *g.dy, *g.dz, *g.db,
                                                             codes);
                    };
                });
        } else {
            dz8 = b.quantize_fp8(dz_id, QuantRole::Gradient, needs_dx, true);
        }
        dw = {x8.codes_t, dz8.codes_t, false, true, x8.scale_inv, dz8.scale_inv};
        dx_ops = {dz8.codes, w8.codes, false, true, dz8.scale_inv, w8.scale_inv};
    } else {
        const PlanBuilder::GradientCopies dz_copies = b.quantize_gradient(dz_id, needs_dx);
        dw.b = dz_copies.columnwise;
        dx_ops.a = dz_copies.rowwise;
        dw.exact_in_bfloat16 = b.exact_in_bfloat16(dw.a) && b.exact_in_bfloat16(dw.b);
        dx_ops.exact_in_bfloat16 = b.exact_in_bfloat16(dx_ops.a) && b.exact_in_bfloat16(dx_ops.b);
        for (Operands* o : {&dw, &dx_ops}) {
            o->a_scale = b.gemm_scale_of(o->a);
            o->b_scale = b.gemm_scale_of(o->b);
        }
    }
    const std::string prefix = fp8 ? "fp8 " : "";
    StepSpec sw;
    sw.op = prefix + "gemm dW=Xᵀ·dZ";
    sw.inputs = {dw.a, dw.b};
    sw.outputs = {kernel.grad};
    sw.flops = 2.0 * batch * in * units;
    gemm_step(sw, [dw, operands_of, kernel](const BoundTensors& t) {
        GemmArgs g = operands_of(dw, t);
        g.c = t.ptr(kernel.grad);
        return g;
    });
    b.backward(std::move(sw));
    if (!fused_bias_grad) {
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
    }
    if (TensorId dx = b.grad_of(x); dx != kNoTensor) {
        StepSpec sx;
        sx.op = prefix + "gemm dX=dZ·Wᵀ";
        sx.inputs = {dx_ops.a, dx_ops.b};
        sx.outputs = {dx};
        sx.flops = 2.0 * batch * in * units;
        gemm_step(sx, [dx_ops, operands_of, dx](const BoundTensors& t) {
            GemmArgs g = operands_of(dx_ops, t);
            g.c = t.ptr(dx);
            return g;
        });
        b.backward(std::move(sx));
    }
    return y;
}

} // namespace mantissa
