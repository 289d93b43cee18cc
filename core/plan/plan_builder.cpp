// PlanBuilder implementation: tensor bookkeeping, explicit casts, parameters, bytes per category.
// Backward blocks are collected per layer and reversed at the end, so layers emit in order.
#include "core/plan/plan_builder.h"

#include <algorithm>

#include "core/error.h"
#include "core/optim/optimizer_config.h"

namespace mantissa {

PlanBuilder::PlanBuilder(PlanSpec& spec) : m_spec(spec) {
    m_policy = spec.policy;
    // Created first (tensor 0); bind() sizes it to the largest need of the engine it binds to.
    m_spec.workspace = add_tensor("workspace", DType::UInt8, {0}, MemCategory::Workspace);
}

void PlanBuilder::begin_layer(const std::string& name, const Policy& policy) {
    m_layer = name;
    m_policy = policy;
    m_blocks.emplace_back();
}

void PlanBuilder::end_layer() {
    m_layer.clear();
    m_policy = m_spec.policy;
}

TensorId PlanBuilder::add_tensor(const std::string& name, DType dtype, const Shape& shape,
                                 MemCategory category) {
    Tensor tensor;
    tensor.name = name;
    tensor.dtype = dtype;
    tensor.shape = shape;
    tensor.category = category;
    m_spec.tensors.push_back(std::move(tensor));
    m_spec.alias_of.push_back(kNoTensor);
    m_grad.push_back(kNoTensor);
    return static_cast<TensorId>(m_spec.tensors.size() - 1);
}

TensorId PlanBuilder::add_activation(const std::string& name, DType dtype, const Shape& shape,
                                     bool requires_grad) {
    TensorId id = add_tensor(name, dtype, shape, MemCategory::Activations);
    if (requires_grad) {
        TensorId grad = add_tensor("grad(" + name + ")", dtype, shape, MemCategory::Gradients);
        m_grad[static_cast<std::size_t>(id)] = grad;
    }
    return id;
}

TensorId PlanBuilder::alias(TensorId source, const std::string& name, const Shape& shape) {
    const Tensor src = m_spec.tensor(source); // a copy: add_tensor grows the vector
    if (shape_numel(shape) != src.numel())
        throw Error(ErrorKind::Internal, "alias " + name + " changes the element count");
    TensorId id = add_tensor(name, src.dtype, shape, src.category);
    m_spec.alias_of[static_cast<std::size_t>(id)] = source;
    TensorId src_grad = grad_of(source);
    if (src_grad != kNoTensor) {
        TensorId grad = add_tensor("grad(" + name + ")", src.dtype, shape, MemCategory::Gradients);
        m_spec.alias_of[static_cast<std::size_t>(grad)] = src_grad;
        m_grad[static_cast<std::size_t>(id)] = grad;
    }
    return id;
}

TensorId PlanBuilder::grad_of(TensorId id) const {
    return id == kNoTensor ? kNoTensor : m_grad.at(static_cast<std::size_t>(id));
}

TensorId PlanBuilder::cast(TensorId source, DType dtype) {
    const Tensor src = m_spec.tensor(source); // a copy: add_activation grows the vector
    if (src.dtype == dtype) return source;
    bool needs_grad = grad_of(source) != kNoTensor;
    TensorId out = add_activation(src.name + ":" + std::string(dtype_name(dtype)), dtype, src.shape,
                                  needs_grad);
    StepSpec step;
    step.op = "cast " + std::string(dtype_name(src.dtype)) + "→" + std::string(dtype_name(dtype));
    step.inputs = {source};
    step.outputs = {out};
    step.is_cast = true;
    step.flops = 0;
    step.bind = bind_cast(source, out);
    forward(std::move(step));
    if (needs_grad) {
        StepSpec back;
        back.phase = StepPhase::Backward;
        back.op =
            "cast " + std::string(dtype_name(dtype)) + "→" + std::string(dtype_name(src.dtype));
        back.layer = m_layer;
        back.inputs = {grad_of(out)};
        back.outputs = {grad_of(source)};
        back.is_cast = true;
        back.bind = bind_cast(grad_of(out), grad_of(source));
        m_blocks.back().tail.push_back(std::move(back));
    }
    return out;
}

PlanBuilder::ParamRef PlanBuilder::add_param(const std::string& name, const Shape& shape,
                                             std::int64_t fan_in, std::int64_t fan_out) {
    const std::string full = m_layer + "/" + name;
    const bool mixed = m_policy.compute != m_policy.variable;
    PlanParam param;
    param.name = full;
    param.shape = shape;
    param.fan_in = fan_in;
    param.fan_out = fan_out;
    param.variable = add_tensor(full, m_policy.variable, shape,
                                mixed ? MemCategory::Master : MemCategory::Weights);
    param.grad = add_tensor("grad(" + full + ")", m_policy.variable, shape, MemCategory::Gradients);
    for (int slot = 0; slot < optimizer_slot_count(m_spec.optimizer); ++slot)
        param.optimizer_slots.push_back(
            add_tensor(full + "/" + optimizer_slot_name(m_spec.optimizer, slot), m_policy.variable,
                       shape, MemCategory::Optimizer));
    ParamRef ref{param.variable, param.grad};
    if (mixed) {
        // The layer computes with a compute-dtype copy, refreshed every step; its gradient is
        // cast back to the variable dtype for the optimizer (Keras AutoCastVariable semantics).
        ref.value = add_tensor(full + ":" + std::string(dtype_name(m_policy.compute)),
                               m_policy.compute, shape, MemCategory::Weights);
        ref.grad = add_tensor("grad(" + full + "):" + std::string(dtype_name(m_policy.compute)),
                              m_policy.compute, shape, MemCategory::Gradients);
        StepSpec step;
        step.op = "cast " + std::string(dtype_name(m_policy.variable)) + "→" +
                  std::string(dtype_name(m_policy.compute));
        step.inputs = {param.variable};
        step.outputs = {ref.value};
        step.is_cast = true;
        step.bind = bind_cast(param.variable, ref.value);
        forward(std::move(step));
        StepSpec back;
        back.phase = StepPhase::Backward;
        back.op = "cast " + std::string(dtype_name(m_policy.compute)) + "→" +
                  std::string(dtype_name(m_policy.variable));
        back.layer = m_layer;
        back.inputs = {ref.grad};
        back.outputs = {param.grad};
        back.is_cast = true;
        back.bind = bind_cast(ref.grad, param.grad);
        m_blocks.back().tail.push_back(std::move(back));
    }
    m_spec.params.push_back(std::move(param));
    return ref;
}

void PlanBuilder::forward(StepSpec step) {
    step.phase = StepPhase::Forward;
    if (step.layer.empty()) step.layer = m_layer;
    m_forward.push_back(std::move(step));
}

void PlanBuilder::backward(StepSpec step) {
    if (m_blocks.empty()) throw Error(ErrorKind::Internal, "backward step outside a layer");
    step.phase = StepPhase::Backward;
    step.training_only = true;
    if (step.layer.empty()) step.layer = m_layer;
    m_blocks.back().own.push_back(std::move(step));
}

void PlanBuilder::plan_step(StepSpec step) {
    m_forward.push_back(std::move(step));
}

Workspace workspace_of(const Tensor* workspace) {
    return {workspace->data, workspace->bytes()};
}

std::function<StepRun(const BoundTensors&)> bind_cast(TensorId source, TensorId dest) {
    return [source, dest](const BoundTensors& t) -> StepRun {
        Tensor* in = t.ptr(source);
        Tensor* out = t.ptr(dest);
        return [in, out](Backend& be, const RunContext&) { be.cast(*in, *out); };
    };
}

void PlanBuilder::finish(std::vector<StepSpec> update_steps) {
    // Step order: forward (incl. loss), each layer's backward block from last layer to first,
    // then the optimizer/loss-scale steps.
    m_spec.steps = std::move(m_forward);
    for (auto block = m_blocks.rbegin(); block != m_blocks.rend(); ++block) {
        for (StepSpec& step : block->own) m_spec.steps.push_back(std::move(step));
        for (StepSpec& step : block->tail) m_spec.steps.push_back(std::move(step));
    }
    for (StepSpec& step : update_steps) {
        step.phase = StepPhase::Update;
        step.training_only = true;
        m_spec.steps.push_back(std::move(step));
    }

    // Aliases share their source's memory and count no bytes; the workspace counts 0 here.
    MemoryByCategory memory;
    for (std::size_t i = 0; i < m_spec.tensors.size(); ++i)
        if (m_spec.alias_of[i] == kNoTensor)
            memory[m_spec.tensors[i].category] += m_spec.tensors[i].bytes();
    m_spec.memory = memory;
}

} // namespace mantissa
