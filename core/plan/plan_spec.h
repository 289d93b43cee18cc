// PlanSpec: what describe() decides without a backend: every tensor (name, dtype, shape,
// category), every step (op, layer, phase, casts, inputs/outputs, FLOPs), bytes per category.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/numeric/policy.h"
#include "core/optim/loss_scale.h"
#include "core/optim/optimizer_config.h"

namespace mantissa {

using TensorId = int;
inline constexpr TensorId kNoTensor = -1;

struct RunContext; // plan.h: what a bound step is run with

enum class StepPhase { Forward, Backward, Update };

// "forward", "backward", "update": how the Plan view and `mantissa-cli profile` name a phase.
inline const char* step_phase_name(StepPhase phase) {
    switch (phase) {
    case StepPhase::Forward:
        return "forward";
    case StepPhase::Backward:
        return "backward";
    case StepPhase::Update:
        return "update";
    }
    return "?";
}

// The tensors of a Plan being bound: a step's binder turns its tensor ids into pointers here.
// Pointers stay valid for the Plan's lifetime (a deque never moves its elements).
class BoundTensors {
public:
    BoundTensors(std::deque<Tensor>& tensors, TensorId workspace)
        : m_tensors(tensors), m_workspace(workspace) {}
    Tensor* ptr(TensorId id) const {
        return id == kNoTensor ? nullptr : &m_tensors.at(static_cast<std::size_t>(id));
    }
    // Scratch shared by all steps, sized at bind to the largest need; read it inside run().
    const Tensor* workspace() const { return ptr(m_workspace); }

private:
    std::deque<Tensor>& m_tensors;
    TensorId m_workspace;
};

using StepRun = std::function<void(Backend&, const RunContext&)>;

struct StepSpec {
    StepPhase phase = StepPhase::Forward;
    std::string op;    // "gemm+bias+relu", "cast", "softmax_xent", "rmsprop", ...
    std::string layer; // "dense_1"; empty for plan-level steps
    std::vector<TensorId> inputs, outputs;
    double flops = 0;     // floating-point operations per execution
    bool is_cast = false; // a dtype conversion the policy inserted
    // A GEMM or a convolution: the work a format's tensor cores speed up (the profile's "matrix
    // math", against the casts and quantisation that feed it and the rest of the step).
    bool matrix_math = false;
    bool training_only = false;
    bool checks_finite = false; // the unscale step that sets found_inf (StepHooks run after it)
    // Decided at bind: the engine's scratch for this step (cuBLASLt / cuDNN / im2col); none
    // when empty. Called before the arena exists (shapes and dtypes only).
    std::function<std::size_t(const Backend&, const BoundTensors&)> workspace;
    // Decided at bind: the executable step over the bound tensors.
    std::function<StepRun(const BoundTensors&)> bind;
};

// One trainable variable and everything the optimizer needs for it.
struct PlanParam {
    std::string name;              // "dense_1/kernel"
    TensorId variable = kNoTensor; // variable dtype (master under mixed policies)
    // What the optimizer reads: the gradient in the variable dtype, or, under
    // PlanSpec::optimizer_reads_compute_gradients, the layer's compute-dtype gradient itself.
    TensorId grad = kNoTensor;
    std::vector<TensorId> optimizer_slots; // optimizer state, variable dtype
    // A training plan's compute-dtype copy of the variable under a mixed policy, which the
    // optimizer step writes as it updates the variable (Backend::optimizer_update) and the next
    // forward reads, with no cast step of its own; Plan::refresh_weight_copies writes it after
    // anything else writes the variable. None where no step reads it (a quantised layer's kernel
    // is quantised from the master) and in inference plans (their forward casts the variable).
    TensorId compute_copy = kNoTensor;
    Shape shape;
    std::int64_t fan_in = 0, fan_out = 0; // for Glorot initialisation; 0,0 = `initial`
    double initial = 0.0; // every element's starting value without Glorot (1 for gamma)
};

// A non-trainable variable (BatchNormalization's moving statistics): no gradient, no optimizer;
// written by its layer's steps, saved and loaded with the weights, reset by initialize().
struct PlanState {
    std::string name;            // "batch_normalization_1/moving_mean"
    TensorId tensor = kNoTensor; // the variable dtype of the layer's policy
    double initial = 0.0;        // Keras: moving_mean 0, moving_variance 1
};

// One quantise step of a frontier policy (issue 18): what it quantises and where its persistent
// scale state and its latest statistics live (float64 x kQuantStatsValues, see FakeQuantArgs).
struct PlanQuant {
    std::string layer;  // "dense_1"
    std::string policy; // the layer's policy ("nvfp4"), named when an engine cannot quantise
    QuantRole role = QuantRole::Activation;
    bool columnwise = false; // the copy for the GEMM reducing along the other dimension
    std::string tensor;      // the quantised tensor's name
    QuantSpec spec;
    bool fp8_codes = false;     // float8 codes and a decode scale for an FP8 GEMM (quantize_fp8)
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
    // Per-tensor FP8 recipes: lower every Dense layer's GEMMs onto FP8 GEMMs
    // over float8 codes (recipe.gemm resolved against the engine: resolve_fp8_gemm in
    // core/plan/fp8_lowering.h); else their inputs are quantised and decoded to float32.
    bool fp8_gemm = false;
    // Data-parallel training: GradientSync reduces every PlanParam::grad, so each gradient stays
    // in its variable dtype (a mixed layer keeps its cast step) and the reduction's numerics
    // do not depend on the compute dtype.
    bool reduce_gradients = false;
};

struct PlanSpec {
    Policy policy;
    std::int64_t batch_size = 0;
    OptimizerConfig optimizer;
    LossScaleConfig loss_scale; // resolved: never Auto
    std::vector<LayerSummary> layers;
    std::vector<LintMessage> lint;
    std::int64_t param_count = 0;
    bool inference_only = false; // forward steps only; gradient tensors get no memory
    bool fp8_gemm = false;       // CompileOptions::fp8_gemm
    // A mixed layer's variable gradient is its compute-dtype gradient itself, widened by the
    // optimizer exactly as a cast step would (issue 26); under loss scaling the unscale step only
    // checks it and the optimizer unscales it as it reads it. Not with gradient reduction
    // (CompileOptions::reduce_gradients). Set by describe(), read by add_param.
    bool optimizer_reads_compute_gradients = false;

    // Tensors without memory (data is null); an alias shares its source's bytes and counts none.
    std::vector<Tensor> tensors;
    std::vector<TensorId> alias_of; // tensor id -> aliased tensor id, or kNoTensor
    std::vector<StepSpec> steps;    // forward, backward, update in execution order
    std::vector<PlanParam> params;
    std::vector<PlanState> state;   // non-trainable variables, in layer order
    std::vector<PlanQuant> quant;   // the quantise steps, in emission order
    TensorId input = kNoTensor;     // (batch, 28, 28, 1)
    TensorId labels = kNoTensor;    // (batch) int32
    TensorId probs = kNoTensor;     // (batch, classes)
    TensorId scalars = kNoTensor;   // StepScalars
    TensorId workspace = kNoTensor; // its size is decided at bind (0 bytes here)
    // Exact bytes per category except the workspace's scratch, which the engine decides at bind
    // (MemCategory::Workspace holds only the step scalars and quantisation state here).
    MemoryByCategory memory;

    const Tensor& tensor(TensorId id) const { return tensors.at(static_cast<std::size_t>(id)); }
    double train_flops_per_step() const;
};

} // namespace mantissa
