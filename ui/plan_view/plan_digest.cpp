// PlanDigest from a PlanSpec: dtypes and bytes come from the spec's tensors, so the view shows
// what describe() decided (and bind() will run), not a re-derivation of the policy rules.
#include "ui/plan_view/plan_digest.h"

#include <algorithm>
#include <set>

#include "core/nn/model.h"
#include "core/plan/describe.h"
#include "core/plan/fp8_lowering.h"

namespace mantissa::ui {

namespace {

std::string dtype_list(const PlanSpec& plan, const std::vector<TensorId>& ids) {
    std::string out;
    std::vector<std::string> seen;
    for (TensorId id : ids) {
        if (id == kNoTensor) continue;
        const std::string name(dtype_name(plan.tensor(id).dtype));
        if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
        seen.push_back(name);
        out += (out.empty() ? "" : ", ") + name;
    }
    return out;
}

// At most kListed lines, then "… and N more": the optimizer step of a deep model reads and
// writes every variable, and a tooltip taller than the screen would be cut off.
std::string tensor_list(const PlanSpec& plan, const std::vector<TensorId>& ids) {
    constexpr int kListed = 12;
    std::string out;
    int listed = 0, more = 0;
    for (TensorId id : ids) {
        if (id == kNoTensor) continue;
        if (listed == kListed) {
            ++more;
            continue;
        }
        const Tensor& t = plan.tensor(id);
        out += (out.empty() ? "" : "\n") + t.name + "  " + std::string(dtype_name(t.dtype)) + " " +
               shape_str(t.shape);
        ++listed;
    }
    if (more > 0) out += "\n… and " + std::to_string(more) + " more";
    return out;
}

// An activation cast as the pill on its arrow in the diagram names it: "float32→float16" for a
// cast, "quantize: nvfp4 1×16 blocks, …" for a quantise step. The arrow is the activation's, so
// the word is left out: elided, nvfp4's pill read "quantize activation: n…" (issue 28).
std::string activation_cast_label(const std::string& op) {
    if (op.rfind("cast ", 0) == 0) return op.substr(5);
    const std::string quantize_activation = "quantize activation";
    if (op.rfind(quantize_activation, 0) == 0)
        return "quantize" + op.substr(quantize_activation.size());
    return op;
}

} // namespace

PlanDigest digest_plan(const PlanSpec& plan) {
    PlanDigest d;
    d.policy = plan.policy.name;
    d.batch_size = plan.batch_size;
    d.input_dtype = plan.tensor(plan.input).dtype;
    d.loss_dtype = plan.tensor(plan.probs).dtype;
    d.lint = plan.lint;
    d.memory = plan.memory;
    d.flops = plan.train_flops_per_step();
    d.params = plan.param_count;

    for (const LayerSummary& layer : plan.layers) {
        PlanLayerBox box;
        box.name = layer.name;
        box.type = layer.type;
        box.detail = layer.detail;
        box.output_shape = shape_str(layer.output_shape);
        box.policy = layer.policy.name;
        box.compute = layer.policy.compute;
        box.variable = layer.policy.variable;
        box.params = layer.params;
        d.layers.push_back(std::move(box));
    }

    for (const StepSpec& step : plan.steps) {
        PlanStepRow row;
        row.phase = step.phase;
        row.layer = step.layer;
        row.op = step.op;
        row.inputs = dtype_list(plan, step.inputs);
        row.outputs = dtype_list(plan, step.outputs);
        row.detail =
            "in:\n" + tensor_list(plan, step.inputs) + "\nout:\n" + tensor_list(plan, step.outputs);
        row.is_cast = step.is_cast;
        row.flops = step.flops;
        std::set<TensorId> touched(step.inputs.begin(), step.inputs.end());
        touched.insert(step.outputs.begin(), step.outputs.end());
        for (TensorId id : touched)
            if (id != kNoTensor) row.bytes += plan.tensor(id).bytes();
        // A layer's box, by the step's layer name (nullptr for plan-level steps).
        auto box_of = [&](const std::string& layer) -> PlanLayerBox* {
            auto box = std::find_if(d.layers.begin(), d.layers.end(),
                                    [&](const PlanLayerBox& b) { return b.name == layer; });
            return box == d.layers.end() ? nullptr : &*box;
        };
        // The optimizer step writes the compute copies the next forward reads: the mixed
        // policy's weight casts, done as the masters are updated (PlanParam::compute_copy), each
        // counted on its layer's box.
        if (step.phase == StepPhase::Update)
            for (const PlanParam& p : plan.params) {
                if (p.compute_copy == kNoTensor ||
                    std::find(step.outputs.begin(), step.outputs.end(), p.compute_copy) ==
                        step.outputs.end())
                    continue;
                row.weight_cast = true;
                if (PlanLayerBox* box = box_of(p.name.substr(0, p.name.find('/'))))
                    ++box->weight_casts;
            }
        if (step.is_cast) {
            ++d.casts;
            auto is_master = [&](const std::vector<TensorId>& ids) {
                return std::any_of(ids.begin(), ids.end(), [&](TensorId id) {
                    return id != kNoTensor && plan.tensor(id).category == MemCategory::Master;
                });
            };
            row.weight_cast =
                is_master(step.inputs) || is_master(step.outputs) ||
                std::any_of(plan.params.begin(), plan.params.end(), [&](const PlanParam& p) {
                    return !step.outputs.empty() && p.grad == step.outputs.front();
                });
            if (step.phase == StepPhase::Forward) {
                if (PlanLayerBox* box = box_of(step.layer)) {
                    if (row.weight_cast)
                        ++box->weight_casts; // an inference plan's forward weight cast
                    else
                        box->input_casts.push_back(activation_cast_label(step.op));
                }
            }
        }
        d.steps.push_back(std::move(row));
    }
    // Each layer's output dtype is what its last computing forward step wrote; a layer without
    // one (Flatten is a view) passes its input's dtype on.
    DType current = d.input_dtype;
    for (PlanLayerBox& box : d.layers) {
        for (const StepSpec& step : plan.steps)
            if (step.phase == StepPhase::Forward && step.layer == box.name && !step.is_cast &&
                !step.outputs.empty() && step.outputs.front() != kNoTensor)
                current = plan.tensor(step.outputs.front()).dtype;
        box.output = current;
    }
    return d;
}

PlanDigest preview_plan(const Experiment& experiment) {
    validate_experiment(experiment);
    // With the recipe, as the trainer builds it: the quantise steps name its scaling and rule.
    const Policy policy = policy_with_recipe(experiment.policy, experiment.recipe);
    const Model model(experiment.model, policy);
    CompileOptions options;
    options.policy = policy;
    options.batch_size = experiment.batch_size;
    options.optimizer = experiment.optimizer;
    options.loss_scale = experiment.loss_scale;
    // recipe.gemm "fp8" shows the FP8 GEMM steps; "auto" depends on the engine the run opens,
    // so the preview shows the quantise-dequantise steps every engine can run.
    options.fp8_gemm = resolve_fp8_gemm(policy, nullptr);
    return digest_plan(describe(model, options));
}

} // namespace mantissa::ui
