// compile(): data input, layers, the fused softmax cross-entropy loss, then the optimizer steps.
// The order of steps here is the order they run in; nothing is decided at run time.
#include "core/plan/compile.h"

#include "core/error.h"
#include "core/plan/lint.h"
#include "core/plan/plan_builder.h"

namespace mantissa {

namespace {

PlanStep make_step(std::string op, std::function<void(Backend&, const RunContext&)> run) {
    PlanStep step;
    step.op = std::move(op);
    step.run = std::move(run);
    return step;
}

} // namespace

std::unique_ptr<Plan> compile(const Model& model, const CompileOptions& options, Backend& backend) {
    model.validate();
    if (options.batch_size < 1) throw Error(ErrorKind::Config, "batch_size must be at least 1");
    validate_optimizer(options.optimizer);

    auto plan = std::make_unique<Plan>();
    plan->policy = options.policy;
    plan->batch_size = options.batch_size;
    plan->optimizer = options.optimizer;
    plan->inference_only = options.inference_only;
    plan->loss_scale = resolve_loss_scale(options.loss_scale, options.policy);
    validate_loss_scale(plan->loss_scale);
    plan->lint = lint_model(model, plan->loss_scale);

    ModelAnalysis analysis = model.analyze();
    for (std::size_t i = 0; i < model.size(); ++i) {
        const LayerAnalysis& a = analysis.layers[i];
        plan->layers.push_back({a.name, a.type, a.detail, a.output_shape, a.params, a.policy});
        plan->param_count += a.params;
    }

    PlanBuilder b(*plan, backend);
    const std::int64_t batch = options.batch_size;

    // Data: the input batch is float32 (float64 under a float64 policy); the first layer casts it.
    Shape input_shape = {batch};
    for (std::int64_t d : model.spec().input) input_shape.push_back(d);
    const DType input_dtype =
        options.policy.compute == DType::Float64 ? DType::Float64 : DType::Float32;
    plan->input = b.add_tensor("input", input_dtype, input_shape, MemCategory::Activations);
    plan->labels = b.add_tensor("labels", DType::Int32, {batch}, MemCategory::Activations);
    plan->scalars =
        b.add_tensor("step_scalars", DType::UInt8, {static_cast<std::int64_t>(sizeof(StepScalars))},
                     MemCategory::Workspace);
    Tensor* input = b.ptr(plan->input);
    Tensor* labels = b.ptr(plan->labels);
    Tensor* scalars = b.ptr(plan->scalars);

    PlanStep begin = make_step(
        "begin_step", [scalars](Backend& be, const RunContext&) { be.begin_step(*scalars); });
    begin.training_only = true;
    b.plan_step(std::move(begin));
    PlanStep gather =
        make_step("gather+normalize", [input, labels](Backend& be, const RunContext& ctx) {
            const BatchSource& src = ctx.batch;
            be.gather_batch(*src.images, *src.labels, *src.permutation, src.offset, src.count,
                            *input, *labels);
        });
    gather.outputs = {plan->input, plan->labels};
    b.plan_step(std::move(gather));

    // Layers.
    TensorId x = plan->input;
    const bool fuse_softmax = model.ends_with_softmax();
    for (std::size_t i = 0; i < model.size(); ++i) {
        Layer& layer = model.layer(i);
        b.begin_layer(layer.name(), model.layer_policy(i));
        x = layer.build(b, x, fuse_softmax && i + 1 == model.size());
        b.end_layer();
    }

    // Loss: softmax cross-entropy fused, in the dtype of the logits (the last layer's policy).
    TensorId logits = x;
    plan->probs = b.add_tensor("probs", plan->tensor(logits).dtype, plan->tensor(logits).shape,
                               MemCategory::Activations);
    Tensor* L = b.ptr(logits);
    Tensor* P = b.ptr(plan->probs);
    Tensor* dL = b.ptr(b.grad_of(logits));
    PlanStep loss =
        make_step("softmax_xent", [L, labels, P, dL, scalars](Backend& be, const RunContext& ctx) {
            SoftmaxXentArgs args;
            args.logits = L;
            args.labels = labels;
            args.valid_rows = ctx.batch.count;
            args.probs = P;
            args.dlogits = ctx.training ? dL : nullptr;
            args.scalars = scalars;
            be.softmax_cross_entropy(args);
        });
    loss.layer = model.layer(model.size() - 1).name();
    loss.inputs = {logits, plan->labels};
    loss.outputs = {plan->probs, b.grad_of(logits)};
    loss.flops = 8.0 * plan->tensor(logits).numel();
    b.plan_step(std::move(loss));

    // Updates: unscale + finite check over every gradient, the gated optimizer, the scale update.
    std::vector<PlanStep> updates;
    if (options.inference_only) { // evaluation never updates: no slots, no update steps
        b.finish(std::move(updates));
        return plan;
    }
    const LossScaleConfig scale = plan->loss_scale;
    if (scale.mode != LossScaleMode::None) {
        std::vector<Tensor*> grads;
        std::vector<TensorId> grad_ids;
        for (const PlanParam& p : plan->params) {
            grads.push_back(b.ptr(p.grad));
            grad_ids.push_back(p.grad);
        }
        PlanStep unscale =
            make_step("unscale+check_finite", [grads, scalars](Backend& be, const RunContext&) {
                be.unscale_and_check_finite(grads, *scalars);
            });
        unscale.inputs = grad_ids;
        unscale.outputs = grad_ids;
        unscale.checks_finite = true;
        updates.push_back(std::move(unscale));
    }
    const bool gate = scale.mode == LossScaleMode::Dynamic;
    const OptimizerConfig opt = options.optimizer;
    for (const PlanParam& p : plan->params) {
        Tensor* var = b.ptr(p.variable);
        Tensor* grad = b.ptr(p.grad);
        std::vector<Tensor*> slots;
        for (TensorId s : p.optimizer_slots) slots.push_back(b.ptr(s));
        PlanStep update =
            make_step(optimizer_type_name(opt.type),
                      [opt, var, grad, slots, scalars, gate](Backend& be, const RunContext&) {
                          be.optimizer_update(opt, *var, *grad, slots, *scalars, gate);
                      });
        update.layer = p.name.substr(0, p.name.find('/'));
        update.inputs = {p.variable, p.grad};
        update.inputs.insert(update.inputs.end(), p.optimizer_slots.begin(),
                             p.optimizer_slots.end());
        update.outputs = {p.variable};
        update.outputs.insert(update.outputs.end(), p.optimizer_slots.begin(),
                              p.optimizer_slots.end());
        update.flops = 8.0 * shape_numel(p.shape);
        updates.push_back(std::move(update));
    }
    updates.push_back(
        make_step("update_loss_scale", [scale, scalars](Backend& be, const RunContext&) {
            be.finish_step(scale, *scalars);
        }));
    b.finish(std::move(updates));
    return plan;
}

} // namespace mantissa
