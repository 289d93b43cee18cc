// Plan execution: initialisation of variables, one training step, one evaluation batch.
// A step only enqueues backend ops; nothing here reads device memory back.
#include "core/plan/plan.h"

#include <chrono>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/numeric/convert.h"

namespace mantissa {

namespace {

// splitmix64: a small, portable generator; std:: distributions differ between libraries.
struct SplitMix64 {
    std::uint64_t state;
    std::uint64_t next() {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; } // [0, 1)
};

} // namespace

double Plan::train_flops_per_step() const {
    double total = 0;
    for (const PlanStep& step : steps) total += step.flops;
    return total;
}

double PlanSpec::train_flops_per_step() const {
    double total = 0;
    for (const StepSpec& step : steps) total += step.flops;
    return total;
}

void Plan::initialize(Backend& backend, std::uint64_t seed) {
    for (std::size_t i = 0; i < params.size(); ++i) {
        const PlanParam& p = params[i];
        Tensor& var = tensor(p.variable);
        std::vector<double> values(static_cast<std::size_t>(var.numel()), p.initial);
        if (p.fan_in > 0) {
            // Glorot uniform (Keras's default kernel initializer): U(-l, l), l = sqrt(6/(in+out)).
            const double limit = std::sqrt(6.0 / static_cast<double>(p.fan_in + p.fan_out));
            SplitMix64 rng{seed * 0x100000001B3ull + i + 1};
            for (double& v : values) v = (2.0 * rng.uniform() - 1.0) * limit;
        }
        std::vector<unsigned char> bytes(var.bytes());
        convert_from_double(values.data(), bytes.data(), var.dtype, values.size());
        backend.upload(bytes.data(), var);
        for (TensorId slot : p.optimizer_slots) backend.fill(tensor(slot), 0.0);
        if (!inference_only) backend.fill(tensor(p.grad), 0.0); // inference: no gradients
    }
    for (const PlanState& st : state) backend.fill(tensor(st.tensor), st.initial);
    for (const PlanQuant& q : quant) {
        if (q.state != kNoTensor) backend.fill(tensor(q.state), 0.0);
        backend.fill(tensor(q.stats), 0.0);
    }
    StepScalars initial;
    initial.loss_scale = loss_scale.mode == LossScaleMode::None ? 1.0 : loss_scale.initial;
    initial.scale_used = initial.loss_scale;
    backend.write_scalars(initial, tensor(scalars));
    refresh_weight_copies(backend);
}

void Plan::refresh_weight_copies(Backend& backend) {
    for (const PlanParam& p : params)
        if (p.compute_copy != kNoTensor) backend.cast(tensor(p.variable), tensor(p.compute_copy));
}

void Plan::train_step(Backend& backend, const RunContext& context) {
    if (inference_only)
        throw Error(ErrorKind::Internal, "train_step on a plan compiled for inference only");
    StepHooks* hooks = context.hooks;
    bool gradients_ready = false;
    for (PlanStep& step : steps) {
        if (hooks && !gradients_ready && step.phase == StepPhase::Update) {
            hooks->gradients_ready(backend); // before unscale: the sum is what gets unscaled
            gradients_ready = true;
        }
        step.run(backend, context);
        if (hooks && step.checks_finite) hooks->finite_check_done(backend);
    }
}

void Plan::train_step_timed(Backend& backend, const RunContext& context,
                            std::vector<double>& step_ms) {
    if (inference_only)
        throw Error(ErrorKind::Internal, "train_step on a plan compiled for inference only");
    if (context.hooks)
        throw Error(ErrorKind::Internal, "a timed step runs in one process (no step hooks)");
    step_ms.assign(steps.size(), 0.0);
    if (backend.begin_time_marks(steps.size())) { // on the device, no wait between steps
        backend.mark_time(0);
        for (std::size_t i = 0; i < steps.size(); ++i) {
            steps[i].run(backend, context);
            backend.mark_time(i + 1);
        }
        std::vector<double> intervals = backend.marked_intervals_ms();
        if (intervals.size() != steps.size())
            throw Error(ErrorKind::Internal, "the engine timed " +
                                                 std::to_string(intervals.size()) +
                                                 " plan steps of " + std::to_string(steps.size()));
        step_ms = std::move(intervals);
        return;
    }
    using Clock = std::chrono::steady_clock;
    backend.synchronize();
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const auto start = Clock::now();
        steps[i].run(backend, context);
        backend.synchronize();
        step_ms[i] = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    }
}

void Plan::forward_backward(Backend& backend, const RunContext& context) {
    for (PlanStep& step : steps)
        if (step.phase != StepPhase::Update) step.run(backend, context);
}

std::vector<TensorId> Plan::forward_state() const {
    std::vector<TensorId> ids;
    for (const PlanQuant& q : quant)
        if (q.state != kNoTensor) ids.push_back(q.state);
    for (const PlanState& s : state) ids.push_back(s.tensor);
    return ids;
}

void Plan::eval_batch(Backend& backend, const RunContext& context) {
    RunContext eval = context;
    eval.training = false;
    for (PlanStep& step : steps)
        if (!step.training_only) step.run(backend, eval);
}

} // namespace mantissa
