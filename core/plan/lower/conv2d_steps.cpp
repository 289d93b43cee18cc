// Conv2D's steps: forward conv with bias/activation epilogue; backward dZ, dW (+db) and dX.
// The convolution's workspace (im2col, cuDNN's algorithm) is decided at bind, per engine.
//
// Frontier policies (issue 18): as for Dense, the convolution's inputs are quantised (X and W
// forward, dZ backward; dW reads column-wise copies of X and dZ, dX the row-wise dZ and a
// column-wise W, the bias gradient the unquantised dZ). A convolution is the GEMM im2col(X)·W that
// sums over (kh, kw, in_c), so its blocks are laid on 2-D views whose block direction is that
// reduction:
//   X (N, H, W, C) as (N·H·W) × C, 1×32 blocks along the channels of one pixel (padded when
//     C < 32: the first MNIST conv has C = 1, one value per block). An im2col row is kh·kw
//     such channel runs, so every block lies inside one row of the GEMM's reduction.
//   W (kh, kw, in_c, out_c) as (kh·kw·in_c) × out_c, 32×1 blocks down a column: the
//     reduction itself (NVFP4's 16×16 tiles lie on this view too).
//   dZ (N, OH, OW, out_c) as (N·OH·OW) × out_c, 1×32 blocks along the output channels (dX's
//     reduction), like Dense's (batch, units) gradient.
// Per-tensor FP8 (delayed / current scaling) has one scale per tensor: the view changes nothing.
// NVFP4's copies leave their float32 tensor scale to the pass that reads them (Conv2dArgs::
// a_scale, b_scale), so that, as MX copies, they hold bfloat16 values only and the engine may
// convolve them on TF32 tensor cores (Conv2dArgs::exact_in_bfloat16).
#include "core/plan/lower/layer_steps.h"

#include <algorithm>

#include "core/nn/conv2d.h"

namespace mantissa {

TensorId conv2d_steps(PlanBuilder& b, const Conv2D& layer, TensorId input, bool fuse_softmax) {
    const DType dt = b.policy().compute;
    TensorId x = b.cast(input, dt);
    const Shape in_shape(b.tensor(x).shape.begin() + 1, b.tensor(x).shape.end());
    Conv2dArgs g = layer.geometry(b.batch(), in_shape);
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
    // Frontier policies: the convolution reads quantised float32 copies (no-ops otherwise), on
    // the views of the header comment.
    const QuantView x_view{g.batch * g.in_h * g.in_w, "N·H·W×C"};
    const QuantView w_view{fan_in, "kh·kw·in_c×out_c"};
    const QuantView dz_view{g.batch * g.out_h * g.out_w, "N·H·W×out_c"};
    const TensorId xq = b.quantize_input(x, QuantRole::Activation, kNoTensor, x_view);
    const TensorId wq = b.quantize_input(kernel.value, QuantRole::Weight, kNoTensor, w_view);
    // The backward products reduce along other dimensions, so block-scaled recipes read
    // column-wise copies there, as Dense does: dW sums over the pixels (X and dZ in blocks down
    // N·H·W), dX over the output channels and taps (W in blocks along out_c).
    const TensorId xq_col = b.quantize_input(x, QuantRole::Activation, xq, x_view);
    const bool needs_dx = b.grad_of(x) != kNoTensor; // the first layer computes no dX
    const TensorId wq_col =
        needs_dx ? b.quantize_input(kernel.value, QuantRole::Weight, wq, w_view) : wq;
    // Whether every copy of every pass holds bfloat16 values only (one flag, so one cuDNN plan
    // and workspace serves the three passes).
    g.exact_in_bfloat16 = b.quant_copies_exact_in_bfloat16();
    // The tensor scales each pass multiplies its sums by (NVFP4; kNoTensor otherwise).
    const TensorId xq_scale = b.gemm_scale_of(xq), wq_scale = b.gemm_scale_of(wq);
    const TensorId xq_col_scale = b.gemm_scale_of(xq_col), wq_col_scale = b.gemm_scale_of(wq_col);
    // A pass's arguments over the bound tensors: the geometry with its operands' scales.
    auto with_scales = [g](const BoundTensors& t, TensorId a_scale, TensorId b_scale) {
        Conv2dArgs args = g;
        args.a_scale = t.ptr(a_scale);
        args.b_scale = t.ptr(b_scale);
        return args;
    };

    StepSpec fwd;
    fwd.op = std::string("conv2d+bias") +
             (act != Activation::Linear ? std::string("+") + activation_name(act) : "");
    fwd.inputs = {xq, wq, bias.value};
    fwd.outputs = {y};
    fwd.flops = conv_flops;
    fwd.matrix_math = true;
    // Decided at bind: the engine's scratch for this geometry (im2col on the CPU, cuDNN's choice).
    // Under a frontier policy the passes multiply float32 copies into compute-dtype outputs: the
    // CPU engine sizes that by the compute dtype (its widening buffers), the CUDA engine by the
    // copies' (its float32 cuDNN plan), so the step asks for both and takes the larger.
    fwd.workspace = [g, xq, dt](const Backend& be, const BoundTensors& t) {
        return std::max(be.conv2d_workspace_bytes(g, dt),
                        be.conv2d_workspace_bytes(g, t.ptr(xq)->dtype));
    };
    fwd.bind = [with_scales, xq, wq, xq_scale, wq_scale, bias, act, y,
                z](const BoundTensors& t) -> StepRun {
        const Conv2dArgs g = with_scales(t, xq_scale, wq_scale);
        Tensor* X = t.ptr(xq);
        Tensor* W = t.ptr(wq);
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
    // The two products read dZ's quantised copy; the bias gradient reads dZ itself, in its own
    // step when the two differ.
    const PlanBuilder::GradientCopies dz_copies = b.quantize_gradient(dz_id, needs_dx, dz_view);
    const TensorId dzq = dz_copies.rowwise, dzq_col = dz_copies.columnwise;
    const TensorId dzq_scale = b.gemm_scale_of(dzq), dzq_col_scale = b.gemm_scale_of(dzq_col);
    const bool bias_apart = dzq_col != dz_id;
    StepSpec sw;
    sw.op = bias_apart ? "conv2d dW" : "conv2d dW,db";
    sw.inputs = {xq_col, dzq_col};
    sw.outputs = {kernel.grad};
    if (!bias_apart) sw.outputs.push_back(bias.grad);
    sw.flops = conv_flops;
    sw.matrix_math = true;
    sw.bind = [with_scales, xq_col, dzq_col, xq_col_scale, dzq_col_scale, kernel, bias,
               bias_apart](const BoundTensors& t) -> StepRun {
        const Conv2dArgs g = with_scales(t, xq_col_scale, dzq_col_scale);
        Tensor* X = t.ptr(xq_col);
        Tensor* dZ = t.ptr(dzq_col);
        Tensor* dW = t.ptr(kernel.grad);
        Tensor* dB = bias_apart ? nullptr : t.ptr(bias.grad);
        const Tensor* ws = t.workspace();
        return [g, X, dZ, dW, dB, ws](Backend& be, const RunContext&) {
            be.conv2d_backward_filter(g, *X, *dZ, *dW, dB, workspace_of(ws));
        };
    };
    b.backward(std::move(sw));
    if (bias_apart) {
        StepSpec sb;
        sb.op = "bias_grad";
        sb.inputs = {dz_id};
        sb.outputs = {bias.grad};
        sb.flops = 1.0 * static_cast<double>(shape_numel(out_shape));
        sb.bind = [dz_id, bias](const BoundTensors& t) -> StepRun {
            Tensor* dZ = t.ptr(dz_id);
            Tensor* dB = t.ptr(bias.grad);
            return [dZ, dB](Backend& be, const RunContext&) { be.bias_grad(*dZ, *dB); };
        };
        b.backward(std::move(sb));
    }
    if (TensorId dx = b.grad_of(x); dx != kNoTensor) {
        StepSpec sx;
        sx.op = "conv2d dX";
        sx.inputs = {dzq, wq_col};
        sx.outputs = {dx};
        sx.flops = conv_flops;
        sx.matrix_math = true;
        sx.bind = [with_scales, dzq, wq_col, dzq_scale, wq_col_scale,
                   dx](const BoundTensors& t) -> StepRun {
            const Conv2dArgs g = with_scales(t, dzq_scale, wq_col_scale);
            Tensor* dZ = t.ptr(dzq);
            Tensor* W = t.ptr(wq_col);
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
