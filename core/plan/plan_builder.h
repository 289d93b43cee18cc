// PlanBuilder: what layers use to emit their steps into a Plan while it is compiled.
// It makes casts explicit, creates gradient tensors, and orders each layer's backward block.
#pragma once

#include <string>
#include <vector>

#include "core/plan/plan.h"

namespace mantissa {

class PlanBuilder {
public:
    PlanBuilder(Plan& plan, Backend& backend);

    Backend& backend() { return m_backend; }
    Plan& plan() { return m_plan; }
    std::int64_t batch() const { return m_plan.batch_size; }

    // --- layer scope: steps emitted in between are tagged with the layer and use its policy ---
    void begin_layer(const std::string& name, const Policy& policy);
    void end_layer();
    const Policy& policy() const { return m_policy; }
    const std::string& layer() const { return m_layer; }

    // --- tensors ---
    TensorId add_tensor(const std::string& name, DType dtype, const Shape& shape,
                        MemCategory category);
    // A layer output; with `requires_grad` its gradient tensor is created alongside.
    TensorId add_activation(const std::string& name, DType dtype, const Shape& shape,
                            bool requires_grad);
    // A view of `source` with another shape (no bytes); its gradient is a view too.
    TensorId alias(TensorId source, const std::string& name, const Shape& shape);
    TensorId grad_of(TensorId id) const; // kNoTensor when `id` needs no gradient
    Tensor* ptr(TensorId id) { return id == kNoTensor ? nullptr : &m_plan.tensor(id); }

    // Casts `source` to `dtype` with an explicit step, and the gradient back in the backward
    // block; returns `source` unchanged when the dtypes already match.
    TensorId cast(TensorId source, DType dtype);

    // A trainable variable in the layer policy's variable dtype, plus, under a mixed policy, its
    // compute-dtype copy (cast every step) and the gradient cast back. The layer reads `value`
    // and writes `grad`, both in the compute dtype.
    struct ParamRef {
        TensorId value = kNoTensor;
        TensorId grad = kNoTensor;
    };
    ParamRef add_param(const std::string& name, const Shape& shape, std::int64_t fan_in,
                       std::int64_t fan_out);

    // Frontier policies (issue 18): a quantise step in front of a GEMM / convolution input, as
    // Transformer Engine places them. Returns `source` unchanged when the layer's policy has no
    // recipe; else a float32 tensor holding the quantised-and-decoded values (so the GEMM runs
    // on them in float32 and accumulates in float32). Activation and Weight steps run in the
    // forward block (a weight is quantised from its float32 master), Gradient steps in the
    // layer's backward block where the call is made. The result has no gradient: layers keep
    // writing the gradients of the unquantised tensors (a straight-through estimator).
    // Throws Error(Config) when the engine cannot quantise ("... runs on the CPU engine").
    TensorId quantize_input(TensorId source, QuantRole role);

    // --- steps ---
    void forward(PlanStep step);
    void backward(PlanStep step);  // the layer's own backward steps, in execution order
    void plan_step(PlanStep step); // plan-level steps (data, loss, optimizer), in order

    // Scratch shared by all steps (the largest need wins). Steps keep workspace_tensor() and
    // call workspace_of() inside run(), when the arena exists.
    void need_workspace(std::size_t bytes);
    const Tensor* workspace_tensor() { return ptr(m_workspace); }

    // Orders the steps (forward, reversed backward blocks, updates) and allocates the arena.
    void finish(std::vector<PlanStep> update_steps);

private:
    struct BackwardBlock {
        std::vector<PlanStep> own;  // the layer's steps
        std::vector<PlanStep> tail; // gradient casts, run after the layer's steps
    };

    Plan& m_plan;
    Backend& m_backend;
    Policy m_policy;
    std::string m_layer;
    std::vector<TensorId> m_grad;      // tensor id -> gradient id
    std::vector<TensorId> m_alias_of;  // tensor id -> aliased tensor id
    std::vector<TensorId> m_master_of; // compute-dtype weight copy -> its float32 master
    std::vector<PlanStep> m_forward;
    std::vector<BackwardBlock> m_blocks;
    std::size_t m_workspace_bytes = 0;
    TensorId m_workspace = kNoTensor;
};

Workspace workspace_of(const Tensor* workspace);

} // namespace mantissa
