// BatchNormalization's and LayerNormalization's steps: one forward step writing the output and
// the statistics the backward pass reads, one backward step writing dX, dγ and dβ (Backend's
// NormArgs). Their statistics, γ, β and BatchNormalization's moving statistics are in the layer
// policy's variable dtype: float32 under mixed policies (Keras computes them in float32 for 16-bit
// inputs), float16 under a pure float16 per-layer policy. The step's name says so when that
// differs from the compute dtype, so the Plan view shows where float32 statistics run.
#include "core/plan/lower/layer_steps.h"

#include <algorithm>

#include "core/nn/normalization.h"
#include "core/plan/plan.h"

namespace mantissa {

namespace {

// The 2-D view a normalization works on: the last axis as columns, everything else as rows.
struct NormView {
    std::int64_t rows = 0, cols = 0;
    std::int64_t rows_per_example = 0;
};

NormView view_of(const Tensor& x, std::int64_t batch) {
    NormView v;
    v.cols = x.shape.back();
    v.rows = shape_numel(x.shape) / v.cols;
    v.rows_per_example = v.rows / batch;
    return v;
}

// The view's rows that hold this batch's examples (all of them outside a Trainer's batches).
std::int64_t valid_rows(const NormView& v, const RunContext& ctx) {
    return ctx.batch.count > 0 ? std::min(v.rows, ctx.batch.count * v.rows_per_example) : v.rows;
}

// " (float32 statistics)" when the statistics dtype differs from the compute dtype.
std::string statistics_note(const Policy& policy) {
    if (policy.variable == policy.compute) return {};
    return " (" + std::string(dtype_name(policy.variable)) + " statistics)";
}

// The tensors both layers' steps share.
struct NormTensors {
    TensorId x = kNoTensor, y = kNoTensor, mean = kNoTensor, inv_std = kNoTensor;
    PlanBuilder::ParamRef gamma, beta;
    TensorId moving_mean = kNoTensor, moving_variance = kNoTensor; // BatchNormalization
};

NormTensors norm_tensors(PlanBuilder& b, const Layer& layer, TensorId input, bool batch_norm) {
    NormTensors t;
    const DType dt = b.policy().compute;
    const DType st = b.policy().variable;
    t.x = b.cast(input, dt);
    const Shape shape = b.tensor(t.x).shape;
    const NormView v = view_of(b.tensor(t.x), b.batch());
    t.gamma = b.add_statistics_param("gamma", {v.cols}, 1.0);
    t.beta = b.add_statistics_param("beta", {v.cols}, 0.0);
    if (batch_norm) {
        t.moving_mean = b.add_state("moving_mean", {v.cols}, 0.0);
        t.moving_variance = b.add_state("moving_variance", {v.cols}, 1.0);
    }
    t.y = b.add_activation(layer.name() + "/output", dt, shape, true);
    const std::int64_t stats = batch_norm ? v.cols : v.rows;
    t.mean = b.add_tensor(layer.name() + "/mean", st, {stats}, MemCategory::Activations);
    t.inv_std = b.add_tensor(layer.name() + "/inv_std", st, {stats}, MemCategory::Activations);
    return t;
}

// The arguments of one call over the bound tensors (the batch's valid rows come at run time).
NormArgs bound_args(const NormTensors& n, const BoundTensors& t, NormView v,
                    const LayerSpec& spec) {
    NormArgs a;
    a.rows = v.rows;
    a.cols = v.cols;
    a.valid_rows = v.rows;
    a.epsilon = spec.epsilon;
    a.momentum = spec.momentum;
    a.x = t.ptr(n.x);
    a.gamma = t.ptr(n.gamma.value);
    a.beta = t.ptr(n.beta.value);
    a.y = t.ptr(n.y);
    a.mean = t.ptr(n.mean);
    a.inv_std = t.ptr(n.inv_std);
    a.moving_mean = t.ptr(n.moving_mean);
    a.moving_variance = t.ptr(n.moving_variance);
    return a;
}

TensorId norm_steps(PlanBuilder& b, const Layer& layer, TensorId input, bool batch_norm) {
    const NormTensors n = norm_tensors(b, layer, input, batch_norm);
    const NormView v = view_of(b.tensor(n.x), b.batch());
    const LayerSpec spec = layer.spec();
    const std::string kind = batch_norm ? "batch_norm" : "layer_norm";
    const double elements = static_cast<double>(v.rows * v.cols);

    StepSpec fwd;
    fwd.op = kind + statistics_note(b.policy());
    fwd.inputs = {n.x, n.gamma.value, n.beta.value};
    fwd.outputs = {n.y, n.mean, n.inv_std};
    if (batch_norm) {
        fwd.inputs.insert(fwd.inputs.end(), {n.moving_mean, n.moving_variance});
        fwd.outputs.insert(fwd.outputs.end(), {n.moving_mean, n.moving_variance});
    }
    fwd.flops = 8.0 * elements;
    fwd.bind = [n, v, spec, batch_norm](const BoundTensors& t) -> StepRun {
        const NormArgs bound = bound_args(n, t, v, spec);
        return [bound, v, batch_norm](Backend& be, const RunContext& ctx) {
            NormArgs a = bound;
            a.training = ctx.training;
            a.valid_rows = valid_rows(v, ctx);
            if (batch_norm)
                be.batch_norm_forward(a);
            else
                be.layer_norm_forward(a);
        };
    };
    b.forward(std::move(fwd));

    TensorId dx = b.grad_of(n.x);
    if (b.spec().inference_only) return n.y;
    if (dx == kNoTensor) // the first layer: the engine still writes a dX, which nothing reads
        dx = b.add_tensor(layer.name() + "/unused_dx", b.policy().compute, b.tensor(n.x).shape,
                          MemCategory::Gradients);
    const TensorId dy = b.grad_of(n.y);
    StepSpec back;
    back.op = "d" + kind + statistics_note(b.policy());
    back.inputs = {dy, n.x, n.gamma.value, n.mean, n.inv_std};
    back.outputs = {dx, n.gamma.grad, n.beta.grad};
    back.flops = 10.0 * elements;
    back.bind = [n, v, spec, batch_norm, dy, dx](const BoundTensors& t) -> StepRun {
        const NormArgs bound = bound_args(n, t, v, spec);
        Tensor* dY = t.ptr(dy);
        Tensor* dX = t.ptr(dx);
        Tensor* dG = t.ptr(n.gamma.grad);
        Tensor* dB = t.ptr(n.beta.grad);
        return [bound, v, batch_norm, dY, dX, dG, dB](Backend& be, const RunContext& ctx) {
            NormArgs a = bound;
            a.valid_rows = valid_rows(v, ctx);
            if (batch_norm)
                be.batch_norm_backward(a, *dY, *dX, *dG, *dB);
            else
                be.layer_norm_backward(a, *dY, *dX, *dG, *dB);
        };
    };
    b.backward(std::move(back));
    return n.y;
}

} // namespace

TensorId batch_normalization_steps(PlanBuilder& b, const BatchNormalization& layer, TensorId input,
                                   bool /*fuse_softmax*/) {
    return norm_steps(b, layer, input, true);
}

TensorId layer_normalization_steps(PlanBuilder& b, const LayerNormalization& layer, TensorId input,
                                   bool /*fuse_softmax*/) {
    return norm_steps(b, layer, input, false);
}

} // namespace mantissa
