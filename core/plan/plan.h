// Plan: a Model + policy + batch size compiled for one backend: every step (with its casts made
// explicit), every buffer preallocated from one arena, exact bytes per category, FLOPs per step.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/nn/layer_spec.h"
#include "core/numeric/policy.h"
#include "core/optim/loss_scale.h"
#include "core/optim/optimizer_config.h"

namespace mantissa {

using TensorId = int;
inline constexpr TensorId kNoTensor = -1;

// Where a step's batch comes from: the dataset resident on the device and a slice of a permutation.
struct BatchSource {
    const Tensor* images = nullptr;      // (count, 28, 28) uint8
    const Tensor* labels = nullptr;      // (count) uint8
    const Tensor* permutation = nullptr; // (count) int32
    std::int64_t offset = 0;             // first index into the permutation
    std::int64_t count = 0;              // valid rows in this batch (<= batch size)
};

// Called by Plan::train_step between its phases: data-parallel training exchanges gradients and
// agrees on the skip decision here. Without hooks a step runs exactly as before.
class StepHooks {
public:
    virtual ~StepHooks() = default;
    // Every gradient is complete; neither the unscale nor any update has run yet.
    virtual void gradients_ready(Backend& backend) = 0;
    // unscale+check_finite has set the scalars' found_inf; no update has run yet.
    virtual void finite_check_done(Backend& backend) = 0;
};

struct RunContext {
    bool training = true;
    std::uint64_t step = 0; // global step number: seeds dropout masks
    std::uint64_t seed = 0;
    BatchSource batch;
    StepHooks* hooks = nullptr; // training steps only; nullptr = a plain one-process step
};

enum class StepPhase { Forward, Backward, Update };

struct PlanStep {
    StepPhase phase = StepPhase::Forward;
    std::string op;    // "gemm+bias+relu", "cast", "softmax_xent", "rmsprop", ...
    std::string layer; // "dense_1"; empty for plan-level steps
    std::vector<TensorId> inputs, outputs;
    double flops = 0;     // floating-point operations per execution
    bool is_cast = false; // a dtype conversion the policy inserted
    bool training_only = false;
    bool checks_finite = false; // the unscale step that sets found_inf (StepHooks run after it)
    std::function<void(Backend&, const RunContext&)> run;
};

// One trainable variable and everything the optimizer needs for it.
struct PlanParam {
    std::string name;              // "dense_1/kernel"
    TensorId variable = kNoTensor; // variable dtype (master under mixed policies)
    TensorId grad = kNoTensor;     // gradient in the variable dtype (what the optimizer reads)
    std::vector<TensorId> optimizer_slots; // optimizer state, variable dtype
    Shape shape;
    std::int64_t fan_in = 0, fan_out = 0; // for Glorot initialisation; 0,0 = zeros
};

// One quantise step of a frontier policy (issue 18): what it quantises and where its persistent
// scale state and its latest statistics live (float64 x kQuantStatsValues, see FakeQuantArgs).
struct PlanQuant {
    std::string layer; // "dense_1"
    QuantRole role = QuantRole::Activation;
    std::string tensor; // the quantised tensor's name
    QuantSpec spec;
    TensorId state = kNoTensor; // delayed scaling's amax history; zeroed by initialize()
    TensorId stats = kNoTensor;
};

struct LayerSummary {
    std::string name;   // "dense_1"
    std::string type;   // "Dense"
    std::string detail; // "128, relu"
    Shape output_shape; // without the batch dimension
    std::int64_t params = 0;
    Policy policy;
};

enum class LintSeverity { Hint, Warning };
struct LintMessage {
    LintSeverity severity = LintSeverity::Hint;
    std::string layer; // empty: about the whole model
    std::string text;
};

struct CompileOptions {
    Policy policy; // the global policy
    std::int64_t batch_size = 128;
    OptimizerConfig optimizer;
    LossScaleConfig loss_scale; // Auto is resolved against the global policy
    // Evaluation only (core/run's EvalSession): no optimizer slots, no backward or update steps
    // and no memory for gradients (their tensors have no data); train_step() refuses such a plan.
    bool inference_only = false;
};

class Plan {
public:
    Plan() = default;
    Plan(const Plan&) = delete;
    Plan& operator=(const Plan&) = delete;

    // --- what the UI and CLI show ---
    Policy policy;
    std::int64_t batch_size = 0;
    OptimizerConfig optimizer;
    LossScaleConfig loss_scale; // resolved: never Auto
    std::vector<LayerSummary> layers;
    std::vector<LintMessage> lint;
    MemoryByCategory memory; // exact bytes per category, allocated before step 1
    std::int64_t param_count = 0;
    bool inference_only = false; // compiled for evaluation: forward steps, no gradients/optimizer
    double train_flops_per_step() const;

    // --- what the executor runs ---
    std::deque<Tensor> tensors;  // stable addresses: steps hold pointers into it
    std::vector<PlanStep> steps; // forward, backward, update in execution order
    std::vector<PlanParam> params;
    std::vector<PlanQuant> quant; // the quantise steps, in emission order
    TensorId input = kNoTensor;   // (batch, 28, 28, 1)
    TensorId labels = kNoTensor;  // (batch) int32
    TensorId probs = kNoTensor;   // (batch, classes)
    TensorId scalars = kNoTensor; // StepScalars
    Buffer arena;

    Tensor& tensor(TensorId id) { return tensors.at(static_cast<std::size_t>(id)); }
    const Tensor& tensor(TensorId id) const { return tensors.at(static_cast<std::size_t>(id)); }

    // Writes the initial variables (Glorot uniform / zeros from `seed`), zeroes the optimizer
    // slots and the quantisation state (delayed scaling starts again), and sets the loss scale.
    void initialize(Backend& backend, std::uint64_t seed);
    // One training step: forward, backward, unscale + finite check, gated updates, scale update.
    // Never reads anything back from the device.
    void train_step(Backend& backend, const RunContext& context);
    // Forward and backward with training semantics, no update: gradients are left in the
    // gradient tensors (for gradient checks and histograms).
    void forward_backward(Backend& backend, const RunContext& context);
    // Forward only (dropout off); adds loss and correct counts into the scalars.
    void eval_batch(Backend& backend, const RunContext& context);
};

} // namespace mantissa
