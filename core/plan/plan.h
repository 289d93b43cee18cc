// Plan: a PlanSpec bound to one backend: every step executable, every buffer preallocated from one
// arena, exact bytes per category (the workspace included). bind() makes it; the spec describes.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/plan/plan_spec.h"

namespace mantissa {

// Where a step's batch comes from: the dataset resident on the device and a slice of a permutation.
struct BatchSource {
    const Tensor* images = nullptr;      // (count, 28, 28) uint8
    const Tensor* labels = nullptr;      // (count) uint8
    const Tensor* permutation = nullptr; // (count) int32
    std::int64_t offset = 0;             // first index into the permutation
    std::int64_t count = 0;              // valid rows in this batch (<= batch size)
    // The offset is StepScalars::batch_position, read on the device (a Trainer's training steps:
    // one captured graph then serves every batch position); `offset` is what it holds.
    bool device_position = false;
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

// An executable step: what the spec said, plus the bound run closure.
struct PlanStep {
    StepPhase phase = StepPhase::Forward;
    std::string op;
    std::string layer;
    std::vector<TensorId> inputs, outputs;
    double flops = 0;
    bool is_cast = false;
    bool matrix_math = false; // StepSpec::matrix_math
    bool training_only = false;
    bool checks_finite = false;
    StepRun run;
};

class Plan {
public:
    Plan() = default;
    Plan(const Plan&) = delete;
    Plan& operator=(const Plan&) = delete;

    // The description this plan was bound from (what the UI and CLI show).
    std::shared_ptr<const PlanSpec> spec;

    // --- copied from the spec ---
    Policy policy;
    std::int64_t batch_size = 0;
    OptimizerConfig optimizer;
    LossScaleConfig loss_scale; // resolved: never Auto
    std::vector<LayerSummary> layers;
    std::vector<LintMessage> lint;
    MemoryByCategory memory; // exact bytes per category, workspace included, allocated at bind
    std::int64_t param_count = 0;
    bool inference_only = false; // compiled for evaluation: forward steps, no gradients/optimizer
    double train_flops_per_step() const;

    // --- what the executor runs ---
    std::deque<Tensor> tensors;  // stable addresses: steps hold pointers into it
    std::vector<PlanStep> steps; // forward, backward, update in execution order
    std::vector<PlanParam> params;
    std::vector<PlanState> state; // non-trainable variables (moving statistics)
    std::vector<PlanQuant> quant; // the quantise steps, in emission order
    TensorId input = kNoTensor;   // (batch, 28, 28, 1)
    TensorId labels = kNoTensor;  // (batch) int32
    TensorId probs = kNoTensor;   // (batch, classes)
    TensorId scalars = kNoTensor; // StepScalars
    Buffer arena;

    Tensor& tensor(TensorId id) { return tensors.at(static_cast<std::size_t>(id)); }
    const Tensor& tensor(TensorId id) const { return tensors.at(static_cast<std::size_t>(id)); }

    // Writes the initial variables (Glorot uniform from `seed`, or each one's constant) and the
    // non-trainable ones, zeroes the optimizer slots and the quantisation state (delayed scaling
    // starts again), and sets the loss scale.
    void initialize(Backend& backend, std::uint64_t seed);
    // Writes every compute copy (PlanParam::compute_copy) from its variable, as a cast step
    // would: what initialize() and load_model_weights() do last, and what any other writer of
    // the variables must do before the next step, since the optimizer keeps the copies only
    // through its own updates.
    void refresh_weight_copies(Backend& backend);
    // One training step: forward, backward, unscale + finite check, gated updates, scale update.
    // Never reads anything back from the device.
    void train_step(Backend& backend, const RunContext& context);
    // The same step with each plan step timed on its own (`mantissa-cli profile`): step_ms[i]
    // receives plan step i's time in milliseconds. An engine with time marks (the CUDA engine's
    // events, Backend::begin_time_marks) times each step on the device, the steps run back to
    // back; otherwise the engine is synchronised before the step and after each plan step and the
    // host's clock read (the CPU engine, whose calls return with their work done).
    void train_step_timed(Backend& backend, const RunContext& context,
                          std::vector<double>& step_ms);
    // Forward and backward with training semantics, no update: gradients are left in the
    // gradient tensors (for gradient checks and histograms). Like any training forward it moves
    // forward_state().
    void forward_backward(Backend& backend, const RunContext& context);
    // The tensors a training forward updates in place for later steps to read: delayed scaling's
    // amax histories and the layers' moving statistics (PlanState). A pass that must leave the
    // run unchanged (the Trainer's gradient histogram) keeps them aside and puts them back.
    std::vector<TensorId> forward_state() const;
    // Forward only (dropout off); adds loss and correct counts into the scalars.
    void eval_batch(Backend& backend, const RunContext& context);
};

} // namespace mantissa
