// describe(): data input, layers, the fused softmax cross-entropy loss, then the optimizer steps.
// The order of steps here is the order they run in; nothing is decided at run time.
#include "core/plan/describe.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "core/plan/lint.h"
#include "core/plan/lower/layer_steps.h"
#include "core/plan/plan.h"
#include "core/plan/plan_builder.h"

namespace mantissa {

namespace {

StepSpec make_step(std::string op, std::function<StepRun(const BoundTensors&)> bind) {
    StepSpec step;
    step.op = std::move(op);
    step.bind = std::move(bind);
    return step;
}

} // namespace

PlanSpec describe(const Model& model, const CompileOptions& options) {
    model.validate();
    if (options.batch_size < 1) throw Error(ErrorKind::Config, "batch_size must be at least 1");
    validate_optimizer(options.optimizer);

    PlanSpec spec;
    spec.policy = options.policy;
    spec.batch_size = options.batch_size;
    spec.optimizer = options.optimizer;
    spec.inference_only = options.inference_only; // read by add_param and finish()
    spec.fp8_gemm = options.fp8_gemm;             // read by the Dense lowering
    spec.loss_scale = resolve_loss_scale(options.loss_scale, options.policy);
    validate_loss_scale(spec.loss_scale);
    spec.lint = lint_model(model, spec.loss_scale);
    spec.optimizer_reads_compute_gradients = !options.reduce_gradients;

    ModelAnalysis analysis = model.analyze();
    for (std::size_t i = 0; i < model.size(); ++i) {
        const LayerAnalysis& a = analysis.layers[i];
        spec.layers.push_back({a.name, a.type, a.detail, a.output_shape, a.params, a.policy});
        spec.param_count += a.params;
    }

    PlanBuilder b(spec);
    const std::int64_t batch = options.batch_size;

    // Data: the input batch is float32 (float64 under a float64 policy); the first layer casts it.
    Shape input_shape = {batch};
    for (std::int64_t d : model.spec().input) input_shape.push_back(d);
    const DType input_dtype =
        options.policy.compute == DType::Float64 ? DType::Float64 : DType::Float32;
    spec.input = b.add_tensor("input", input_dtype, input_shape, MemCategory::Activations);
    spec.labels = b.add_tensor("labels", DType::Int32, {batch}, MemCategory::Activations);
    spec.scalars =
        b.add_tensor("step_scalars", DType::UInt8, {static_cast<std::int64_t>(sizeof(StepScalars))},
                     MemCategory::Workspace);
    const TensorId input = spec.input, labels = spec.labels, scalars = spec.scalars;

    StepSpec begin = make_step("begin_step", [scalars](const BoundTensors& t) -> StepRun {
        Tensor* S = t.ptr(scalars);
        return [S](Backend& be, const RunContext&) { be.begin_step(*S); };
    });
    begin.training_only = true;
    b.plan_step(std::move(begin));
    StepSpec gather =
        make_step("gather+normalize", [input, labels, scalars](const BoundTensors& t) -> StepRun {
            Tensor* X = t.ptr(input);
            Tensor* Y = t.ptr(labels);
            Tensor* S = t.ptr(scalars);
            return [X, Y, S](Backend& be, const RunContext& ctx) {
                const BatchSource& src = ctx.batch;
                be.gather_batch(*src.images, *src.labels, *src.permutation, src.offset, src.count,
                                src.device_position ? S : nullptr, *X, *Y);
            };
        });
    gather.outputs = {spec.input, spec.labels};
    b.plan_step(std::move(gather));

    // Layers.
    TensorId x = spec.input;
    const bool fuse_softmax = model.ends_with_softmax();
    for (std::size_t i = 0; i < model.size(); ++i) {
        const Layer& layer = model.layer(i);
        b.begin_layer(layer.name(), model.layer_policy(i));
        x = lower_layer(b, layer, x, fuse_softmax && i + 1 == model.size());
        b.end_layer();
    }

    // Loss: softmax cross-entropy fused, in the dtype of the logits (the last layer's policy).
    TensorId logits = x;
    spec.probs = b.add_tensor("probs", spec.tensor(logits).dtype, spec.tensor(logits).shape,
                              MemCategory::Activations);
    const TensorId probs = spec.probs, dlogits = b.grad_of(logits);
    StepSpec loss =
        make_step("softmax_xent",
                  [logits, labels, probs, dlogits, scalars](const BoundTensors& t) -> StepRun {
                      Tensor* L = t.ptr(logits);
                      Tensor* Y = t.ptr(labels);
                      Tensor* P = t.ptr(probs);
                      Tensor* dL = t.ptr(dlogits);
                      Tensor* S = t.ptr(scalars);
                      return [L, Y, P, dL, S](Backend& be, const RunContext& ctx) {
                          SoftmaxXentArgs args;
                          args.logits = L;
                          args.labels = Y;
                          args.valid_rows = ctx.batch.count;
                          args.probs = P;
                          args.dlogits = ctx.training ? dL : nullptr;
                          args.scalars = S;
                          be.softmax_cross_entropy(args);
                      };
                  });
    loss.layer = model.layer(model.size() - 1).name();
    loss.inputs = {logits, spec.labels};
    loss.outputs = {spec.probs, b.grad_of(logits)};
    loss.flops = 8.0 * spec.tensor(logits).numel();
    b.plan_step(std::move(loss));

    // Updates: unscale + finite check over every gradient, the gated optimizer, the scale update.
    std::vector<StepSpec> updates;
    if (options.inference_only) { // evaluation never updates: no slots, no update steps
        b.finish(std::move(updates));
        return spec;
    }
    b.drop_unread_compute_copies();
    const LossScaleConfig scale = spec.loss_scale;
    // A gradient in another dtype than its variable's (a mixed layer's, left for the optimizer to
    // widen) is unscaled by the optimizer as it reads it; the unscale step only checks it.
    std::vector<std::uint8_t> widened;
    for (const PlanParam& p : spec.params)
        widened.push_back(spec.tensor(p.grad).dtype != spec.tensor(p.variable).dtype ? 1 : 0);
    const bool all_widened =
        !widened.empty() && std::find(widened.begin(), widened.end(), 0) == widened.end();
    if (scale.mode != LossScaleMode::None) {
        std::vector<TensorId> grad_ids;
        for (const PlanParam& p : spec.params) grad_ids.push_back(p.grad);
        StepSpec unscale =
            make_step(all_widened ? "check_finite" : "unscale+check_finite",
                      [grad_ids, scalars, widened](const BoundTensors& t) -> StepRun {
                          std::vector<Tensor*> grads;
                          for (TensorId id : grad_ids) grads.push_back(t.ptr(id));
                          Tensor* S = t.ptr(scalars);
                          return [grads, S, widened](Backend& be, const RunContext&) {
                              be.unscale_and_check_finite(grads, *S, widened);
                          };
                      });
        unscale.inputs = grad_ids;
        for (std::size_t i = 0; i < grad_ids.size(); ++i)
            if (!widened[i]) unscale.outputs.push_back(grad_ids[i]);
        unscale.checks_finite = true;
        updates.push_back(std::move(unscale));
    }
    const bool gate = scale.mode == LossScaleMode::Dynamic;
    const OptimizerConfig opt = options.optimizer;
    // One step updates every variable (Backend::optimizer_update_all: one pass on engines that
    // fuse it), reading the gradients a mixed layer left in its compute dtype and, under loss
    // scaling, unscaling them ("unscale+") and writing the compute copies the next forward reads
    // ("+cast→"; issue 26).
    std::string copy_dtypes;
    for (const PlanParam& p : spec.params) {
        if (p.compute_copy == kNoTensor) continue;
        const std::string d(dtype_name(spec.tensor(p.compute_copy).dtype));
        if (("/" + copy_dtypes + "/").find("/" + d + "/") == std::string::npos)
            copy_dtypes += (copy_dtypes.empty() ? "" : "/") + d;
    }
    const bool unscales = scale.mode != LossScaleMode::None &&
                          std::find(widened.begin(), widened.end(), 1) != widened.end();
    StepSpec update =
        make_step(std::string(unscales ? "unscale+" : "") + optimizer_type_name(opt.type) + " ×" +
                      std::to_string(spec.params.size()) +
                      (copy_dtypes.empty() ? std::string() : "+cast→" + copy_dtypes),
                  [opt, params = spec.params, scalars, gate, widened,
                   scaled = scale.mode != LossScaleMode::None](const BoundTensors& t) -> StepRun {
                      std::vector<Backend::ParamUpdate> all;
                      for (std::size_t i = 0; i < params.size(); ++i) {
                          const PlanParam& p = params[i];
                          Backend::ParamUpdate u;
                          u.param = t.ptr(p.variable);
                          u.grad = t.ptr(p.grad);
                          u.unscale_grad = scaled && widened[i] != 0;
                          for (TensorId s : p.optimizer_slots) u.slot_tensors.push_back(t.ptr(s));
                          u.compute_copy = t.ptr(p.compute_copy); // nullptr: none
                          all.push_back(std::move(u));
                      }
                      Tensor* S = t.ptr(scalars);
                      return [opt, all, S, gate](Backend& be, const RunContext&) {
                          be.optimizer_update_all(opt, all, *S, gate);
                      };
                  });
    for (const PlanParam& p : spec.params) {
        update.inputs.push_back(p.variable);
        update.inputs.push_back(p.grad);
        update.inputs.insert(update.inputs.end(), p.optimizer_slots.begin(),
                             p.optimizer_slots.end());
        update.outputs.push_back(p.variable);
        update.outputs.insert(update.outputs.end(), p.optimizer_slots.begin(),
                              p.optimizer_slots.end());
        if (p.compute_copy != kNoTensor) update.outputs.push_back(p.compute_copy);
        update.flops += 8.0 * shape_numel(p.shape);
    }
    if (!spec.params.empty()) updates.push_back(std::move(update));
    updates.push_back(
        make_step("update_loss_scale", [scale, scalars](const BoundTensors& t) -> StepRun {
            Tensor* S = t.ptr(scalars);
            return [scale, S](Backend& be, const RunContext&) { be.finish_step(scale, *S); };
        }));
    b.finish(std::move(updates));
    return spec;
}

} // namespace mantissa
