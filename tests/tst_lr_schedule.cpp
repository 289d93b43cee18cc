// Learning-rate schedules (issue 29): each one against this file's own transcription of Keras 3's
// learning_rate_schedule.py and PyTorch's OneCycleLR (in double, as written there), bit for bit
// over whole runs, plus values worked out by hand; the step a skipped update does or does not
// advance (Keras counts applied updates, PyTorch every step); the rate the trainer records per
// step; the experiment file, the CLI's compact form and the errors bad input gets.

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/data/mnist.h"
#include "core/error.h"
#include "core/optim/lr_schedule.h"
#include "core/optim/optimizer_config.h"
#include "core/train/experiment.h"
#include "core/train/trainer.h"
#include "tests/optimizer_run.h"
#include "tests/test_support.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;
using mantissa::test::Run;

namespace {

// ---- the frameworks' code, transcribed (the Python reads as the comment above each) ----

// keras ExponentialDecay.__call__: p = step / decay_steps; floor if staircase;
// initial_learning_rate * decay_rate ** p
double keras_exponential(double initial, double decay_steps, double decay_rate, bool staircase,
                         double step) {
    double p = step / decay_steps;
    if (staircase) p = std::floor(p);
    return initial * std::pow(decay_rate, p);
}

// keras PiecewiseConstantDecay: the value of the first boundary the step does not exceed.
double keras_piecewise(const std::vector<double>& boundaries, const std::vector<double>& values,
                       double step) {
    if (step <= boundaries.front()) return values.front();
    if (step > boundaries.back()) return values.back();
    for (std::size_t i = 1; i < boundaries.size(); ++i)
        if (step > boundaries[i - 1] && step <= boundaries[i]) return values[i];
    return std::nan("");
}

// keras CosineDecay: _decay_function and _warmup_function, warmup when warmup_target is set.
double keras_cosine(double initial, double decay_steps, double alpha, bool has_target,
                    double warmup_target, double warmup_steps, double step) {
    const auto decay_function = [&](double s, double decay_from) {
        const double completed_fraction = s / decay_steps;
        const double pi = 3.141592653589793;
        const double cosine_decayed = 0.5 * (1.0 + std::cos(pi * completed_fraction));
        const double decayed = (1 - alpha) * cosine_decayed + alpha;
        return decay_from * decayed;
    };
    if (!has_target) return decay_function(std::min(step, decay_steps), initial);
    const double recomp = std::min(step, decay_steps + warmup_steps);
    if (recomp < warmup_steps) {
        const double completed_fraction = recomp / warmup_steps;
        const double total_step_delta = warmup_target - initial;
        return total_step_delta * completed_fraction + initial;
    }
    return decay_function(recomp - warmup_steps, warmup_target);
}

// keras PolynomialDecay.__call__
double keras_polynomial(double initial, double decay_steps, double end, double power, bool cycle,
                        double step) {
    double decay_steps_recomp = decay_steps, global_step_recomp = step;
    if (cycle) {
        const double multiplier =
            global_step_recomp == 0 ? 1.0 : std::ceil(global_step_recomp / decay_steps);
        decay_steps_recomp = decay_steps_recomp * multiplier;
    } else {
        global_step_recomp = std::min(global_step_recomp, decay_steps_recomp);
    }
    const double p = global_step_recomp / decay_steps_recomp;
    return (initial - end) * std::pow(1 - p, power) + end;
}

// torch.optim.lr_scheduler.OneCycleLR: __init__'s _schedule_phases and get_lr's loop.
struct Phase {
    double end_step;
    double start_lr, end_lr;
};
double torch_one_cycle(double max_lr, std::int64_t total_steps, double pct_start, bool linear,
                       double div_factor, double final_div_factor, bool three_phase,
                       std::int64_t step_num) {
    const double initial_lr = max_lr / div_factor;
    const double min_lr = initial_lr / final_div_factor;
    std::vector<Phase> phases;
    if (three_phase) {
        phases = {{pct_start * total_steps - 1, initial_lr, max_lr},
                  {2 * pct_start * total_steps - 2, max_lr, initial_lr},
                  {total_steps - 1.0, initial_lr, min_lr}};
    } else {
        phases = {{pct_start * total_steps - 1, initial_lr, max_lr},
                  {total_steps - 1.0, max_lr, min_lr}};
    }
    const auto anneal = [&](double start, double end, double pct) {
        if (linear) return (end - start) * pct + start;
        const double cos_out = std::cos(M_PI * pct) + 1;
        return end + (start - end) / 2.0 * cos_out;
    };
    double start_step = 0;
    for (std::size_t i = 0; i < phases.size(); ++i) {
        const double end_step = phases[i].end_step;
        if (step_num <= end_step || i == phases.size() - 1) {
            const double pct = (step_num - start_step) / (end_step - start_step);
            return anneal(phases[i].start_lr, phases[i].end_lr, pct);
        }
        start_step = phases[i].end_step;
    }
    return std::nan("");
}

LearningRateSchedule schedule(ScheduleKind kind) {
    return default_schedule(kind);
}

std::string hex(double v) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%a", v);
    return buffer;
}

const Mnist& mnist() {
    static const Mnist data = load_mnist(find_data_dir(""));
    return data;
}

Experiment scheduled_experiment(const LearningRateSchedule& s, double base, int epochs,
                                std::int64_t max_steps) {
    Experiment e;
    e.name = "scheduled";
    e.model = test::mlp_small();
    e.policy = "float32";
    e.optimizer = optimizer_defaults(OptimizerType::Adam);
    e.optimizer.learning_rate = base;
    e.optimizer.schedule = s;
    e.batch_size = 1024;
    e.epochs = epochs;
    e.max_steps = max_steps;
    e.device = "cpu";
    e.histogram_every = 0;
    return e;
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

} // namespace

class TestLrSchedule {
public:
    void matchesKerasTranscriptions() {
        for (bool staircase : {false, true}) {
            LearningRateSchedule s = schedule(ScheduleKind::ExponentialDecay);
            s.decay_steps = 70;
            s.decay_rate = 0.93;
            s.staircase = staircase;
            for (int step = 0; step <= 1000; ++step) {
                const double want = keras_exponential(0.01, 70, 0.93, staircase, step);
                CHECK_MSG(schedule_learning_rate(s, 0.01, step) == want,
                          "ExponentialDecay step " + std::to_string(step));
            }
        }
        {
            LearningRateSchedule s = schedule(ScheduleKind::PiecewiseConstantDecay);
            const std::vector<double> b = {100, 250, 251}, v = {0.1, 0.05, 0.01, 0.001};
            s.boundary_count = 3;
            for (int i = 0; i < 3; ++i) s.boundaries[i] = b[i];
            for (int i = 0; i < 4; ++i) s.values[i] = v[i];
            for (int step = 0; step <= 400; ++step)
                CHECK_MSG(schedule_learning_rate(s, 123.0, step) == keras_piecewise(b, v, step),
                          "PiecewiseConstantDecay step " + std::to_string(step));
        }
        for (bool warmup : {false, true}) {
            LearningRateSchedule s = schedule(ScheduleKind::CosineDecay);
            s.decay_steps = 300;
            s.alpha = 0.1;
            s.has_warmup_target = warmup;
            s.warmup_target = 0.02;
            s.warmup_steps = warmup ? 40 : 0;
            for (int step = 0; step <= 500; ++step) {
                const double want =
                    keras_cosine(0.001, 300, 0.1, warmup, 0.02, s.warmup_steps, step);
                CHECK_MSG(schedule_learning_rate(s, 0.001, step) == want,
                          "CosineDecay step " + std::to_string(step));
            }
        }
        for (bool cycle : {false, true}) {
            LearningRateSchedule s = schedule(ScheduleKind::PolynomialDecay);
            s.decay_steps = 120;
            s.end_learning_rate = 0.0005;
            s.power = 0.5;
            s.cycle = cycle;
            for (int step = 0; step <= 500; ++step) {
                const double want = keras_polynomial(0.01, 120, 0.0005, 0.5, cycle, step);
                CHECK_MSG(schedule_learning_rate(s, 0.01, step) == want,
                          "PolynomialDecay step " + std::to_string(step));
            }
        }
    }

    void matchesPyTorchOneCycle() {
        for (bool three : {false, true})
            for (bool linear : {false, true})
                for (std::int64_t total : {235, 100, 1000}) {
                    LearningRateSchedule s = schedule(ScheduleKind::OneCycle);
                    s.total_steps = total;
                    s.three_phase = three;
                    s.linear_anneal = linear;
                    s.pct_start = 0.25;
                    for (std::int64_t step = 0; step < total; ++step) {
                        const double want =
                            torch_one_cycle(0.01, total, 0.25, linear, 25, 1e4, three, step);
                        const double got = schedule_learning_rate(s, 0.01, double(step));
                        CHECK_MSG(got == want, "OneCycle total " + std::to_string(total) +
                                                   " step " + std::to_string(step) + ": " +
                                                   hex(got) + " vs " + hex(want));
                    }
                }
    }

    void handWorkedValues() {
        LearningRateSchedule e = schedule(ScheduleKind::ExponentialDecay);
        e.decay_steps = 10;
        e.decay_rate = 0.5;
        CHECK(schedule_learning_rate(e, 0.1, 20) == 0.025); // 0.1 * 0.5^2
        e.staircase = true;
        CHECK(schedule_learning_rate(e, 0.1, 19) == 0.05); // floor(1.9) = 1

        LearningRateSchedule p = schedule(ScheduleKind::PiecewiseConstantDecay);
        p.boundary_count = 2;
        p.boundaries[0] = 100;
        p.boundaries[1] = 200;
        p.values[0] = 1.0;
        p.values[1] = 0.5;
        p.values[2] = 0.1;
        CHECK(schedule_learning_rate(p, 0, 100) == 1.0); // a boundary belongs to the left
        CHECK(schedule_learning_rate(p, 0, 101) == 0.5);
        CHECK(schedule_learning_rate(p, 0, 201) == 0.1);

        LearningRateSchedule c = schedule(ScheduleKind::CosineDecay);
        c.decay_steps = 100;
        CHECK(schedule_learning_rate(c, 1.0, 0) == 1.0);
        CHECK(schedule_learning_rate(c, 1.0, 50) == 0.5);   // half way down the cosine
        CHECK(schedule_learning_rate(c, 1.0, 1000) == 0.0); // held at the end (alpha 0)
        c.has_warmup_target = true;
        c.warmup_target = 1.0;
        c.warmup_steps = 10;
        CHECK(schedule_learning_rate(c, 0.0, 5) == 0.5);  // linear warmup from 0
        CHECK(schedule_learning_rate(c, 0.0, 10) == 1.0); // the cosine starts at the target

        LearningRateSchedule poly = schedule(ScheduleKind::PolynomialDecay);
        poly.decay_steps = 100;
        poly.end_learning_rate = 0.0;
        CHECK(schedule_learning_rate(poly, 1.0, 25) == 0.75); // linear (power 1)

        // PyTorch OneCycleLR(max_lr=0.01, total_steps=100): starts at max_lr / 25, peaks at
        // step 29 (0.3 * 100 - 1), ends at max_lr / 25 / 1e4.
        LearningRateSchedule o = schedule(ScheduleKind::OneCycle);
        o.total_steps = 100;
        // Step 0 is the cosine's far end: end + (start - end) / 2 * 2, which is max_lr / 25
        // only within a rounding (PyTorch prints 0.00039999999999999996).
        CHECK(schedule_learning_rate(o, 0.01, 0) == 0.01 + (0.01 / 25 - 0.01) / 2.0 * 2.0);
        CHECK(std::fabs(schedule_learning_rate(o, 0.01, 0) - 0.0004) < 1e-18);
        CHECK(schedule_learning_rate(o, 0.01, 29) == 0.01);
        CHECK(schedule_learning_rate(o, 0.01, 99) == 0.01 / 25 / 1e4);
    }

    // Keras counts applied updates (a skipped step leaves the schedule where it was); PyTorch's
    // scheduler.step() runs every training step. Checked through the CPU engine with SGD, whose
    // update is w -= lr * g: the weight says which rate the update used.
    void skippedStepsAdvanceOnlyPyTorchSchedules() {
        for (OptimizerConvention convention :
             {OptimizerConvention::Keras, OptimizerConvention::PyTorch}) {
            OptimizerConfig c = optimizer_defaults(OptimizerType::SGD, convention);
            c.learning_rate = 1.0;
            c.schedule = schedule(ScheduleKind::PiecewiseConstantDecay);
            c.schedule.boundary_count = 2;
            c.schedule.boundaries[0] = 0; // step 0: 0.5, step 1: 0.25, then 0.125
            c.schedule.boundaries[1] = 1;
            c.schedule.values[0] = 0.5;
            c.schedule.values[1] = 0.25;
            c.schedule.values[2] = 0.125;
            CpuBackend backend;
            Run run(c, DType::Float32, {0.0});
            run.step(backend, {1.0}); // schedule step 0: w = -0.5
            CHECK(run.param.values()[0] == -0.5);
            // A skipped step: non-finite gradients found, the update gated off.
            run.grad.set({1.0});
            backend.begin_step(run.scalars.tensor);
            StepScalars s = backend.read_scalars(run.scalars.tensor);
            s.found_inf = 1;
            backend.write_scalars(s, run.scalars.tensor);
            const std::vector<Tensor*> slots = run.slot_ptrs();
            backend.optimizer_update(c, run.param.tensor, run.grad.tensor, slots,
                                     run.scalars.tensor, true);
            LossScaleConfig dynamic;
            dynamic.mode = LossScaleMode::Dynamic;
            backend.finish_step(dynamic, run.scalars.tensor);
            CHECK(run.param.values()[0] == -0.5); // nothing applied
            run.step(backend, {1.0});
            // Keras: iterations 1 -> 0.25; PyTorch: 1 update + 1 skip = step 2 -> 0.125.
            const double want = convention == OptimizerConvention::Keras ? -0.75 : -0.625;
            CHECK_MSG(run.param.values()[0] == want,
                      std::string(optimizer_convention_name(convention)) + ": " +
                          hex(run.param.values()[0]));
            const StepScalars after = backend.read_scalars(run.scalars.tensor);
            // Next: Keras step 2, PyTorch step 3; both past the last boundary.
            CHECK(learning_rate_at(c, after.iterations, after.skipped_total) == 0.125);
        }
    }

    // Keras evaluates the schedule in float32: the keras conventions' rate is its float32 value.
    void kerasRatesAreFloat32() {
        OptimizerConfig c = optimizer_defaults(OptimizerType::SGD);
        c.learning_rate = 0.1;
        c.schedule = schedule(ScheduleKind::CosineDecay);
        c.schedule.decay_steps = 7;
        const double exact = schedule_learning_rate(c.schedule, 0.1, 3);
        CHECK(learning_rate_at(c, 3, 0) == double(float(exact)));
        c.convention = OptimizerConvention::PyTorch;
        CHECK(learning_rate_at(c, 3, 0) == exact);
        // optimizer_at_step hands make_update_rule a constant rate.
        const OptimizerConfig at = optimizer_at_step(c, 3, 0);
        CHECK(at.schedule.kind == ScheduleKind::Constant);
        CHECK(at.learning_rate == exact);
    }

    // The trainer derives OneCycle's step count from the run and records each step's rate.
    void trainerRecordsEachStepsRate() {
        LearningRateSchedule s = schedule(ScheduleKind::OneCycle);
        const Experiment e = scheduled_experiment(s, 0.01, 1, 12);
        CpuBackend backend;
        Trainer trainer(e, mnist(), backend);
        CHECK(trainer.experiment().optimizer.schedule.total_steps == 12); // max_steps
        TrainControl control;
        std::vector<StepRecord> steps;
        TrainerCallbacks callbacks;
        callbacks.on_step = [&](const StepRecord& r) { steps.push_back(r); };
        trainer.run(control, callbacks);
        CHECK_EQ(steps.size(), std::size_t(12));
        for (std::size_t i = 0; i < steps.size(); ++i) {
            const double want = double(
                float(torch_one_cycle(0.01, 12, 0.3, false, 25, 1e4, false, std::int64_t(i))));
            CHECK_MSG(steps[i].learning_rate == want,
                      "step " + std::to_string(i + 1) + ": " + hex(steps[i].learning_rate));
        }
        CHECK(steps.front().learning_rate < steps[4].learning_rate); // warms up
        CHECK(steps.back().learning_rate < 1e-6);                    // anneals away
    }

    void oneCycleTotalStepsComeFromTheRun() {
        LearningRateSchedule s = schedule(ScheduleKind::OneCycle);
        CHECK(resolve_schedule(s, 469, "p").total_steps == 469);
        s.total_steps = 1000;
        CHECK(resolve_schedule(s, 469, "p").total_steps == 1000); // a longer cycle is allowed
        s.total_steps = 100;
        const std::string shorter = error_of([&] { resolve_schedule(s, 469, "opt.lr.config"); });
        CHECK_MSG(shorter.find("opt.lr.config.total_steps (100) is shorter than the run (469") !=
                      std::string::npos,
                  shorter);
        s.total_steps = 0;
        CHECK(error_of([&] { resolve_schedule(s, 0, "p"); }).find("p.total_steps") !=
              std::string::npos);
        s.total_steps = 3; // 0.3 * 3 - 1 < 0: the warmup phase would have no step
        CHECK(error_of([&] { resolve_schedule(s, 3, "p"); }).find("too short") !=
              std::string::npos);
        // The trainer names the field of the experiment file.
        s.total_steps = 5;
        const Experiment e = scheduled_experiment(s, 0.01, 1, 12);
        CpuBackend backend;
        const std::string message = error_of([&] { Trainer trainer(e, mnist(), backend); });
        CHECK_MSG(message.find("optimizer.learning_rate.config.total_steps (5) is shorter than "
                               "the run (12 steps)") != std::string::npos,
                  message);
    }

    void experimentFileRoundTrips() {
        for (ScheduleKind kind :
             {ScheduleKind::ExponentialDecay, ScheduleKind::PiecewiseConstantDecay,
              ScheduleKind::CosineDecay, ScheduleKind::PolynomialDecay, ScheduleKind::OneCycle}) {
            Experiment e = scheduled_experiment(schedule(kind), 0.003, 2, 0);
            if (kind == ScheduleKind::PiecewiseConstantDecay) e.optimizer.learning_rate = 0.001;
            if (kind == ScheduleKind::CosineDecay) {
                e.optimizer.schedule.has_warmup_target = true;
                e.optimizer.schedule.warmup_target = 0.01;
                e.optimizer.schedule.warmup_steps = 50;
            }
            if (kind == ScheduleKind::OneCycle) e.optimizer.schedule.linear_anneal = true;
            const std::string text = experiment_to_json(e);
            CHECK_MSG(text.find(std::string("\"class_name\": \"") + schedule_kind_name(kind)) !=
                          std::string::npos,
                      text);
            const Experiment back = experiment_from_json(text, "round-trip.json");
            CHECK_MSG(back == e, schedule_kind_name(kind));
        }
        // A constant rate stays a number, as before schedules.
        const Experiment plain = scheduled_experiment(LearningRateSchedule{}, 0.003, 1, 0);
        CHECK(experiment_to_json(plain).find("\"learning_rate\": 0.003") != std::string::npos);
    }

    void readsKerasSerialisedSchedules() {
        const std::string text = R"({
          "name": "keras", "model": {"input": [28, 28, 1], "layers": [
            {"type": "Flatten"}, {"type": "Dense", "units": 10}]},
          "policy": "float32",
          "optimizer": {"type": "adam", "learning_rate": {
            "module": "keras.optimizers.schedules", "class_name": "CosineDecay",
            "config": {"initial_learning_rate": 0.001, "decay_steps": 1000, "alpha": 0.0,
                       "name": "CosineDecay", "warmup_target": null, "warmup_steps": 0},
            "registered_name": null}}})";
        const Experiment e = experiment_from_json(text, "keras.json");
        CHECK(e.optimizer.schedule.kind == ScheduleKind::CosineDecay);
        CHECK(e.optimizer.learning_rate == 0.001);
        CHECK(e.optimizer.schedule.decay_steps == 1000);
        CHECK(!e.optimizer.schedule.has_warmup_target);
    }

    void badScheduleInputNamesTheField() {
        const auto load = [](const std::string& learning_rate) {
            return error_of([&] {
                const std::string text =
                    R"({"name": "x", "model": {"input": [28, 28, 1], "layers": [
                    {"type": "Flatten"}, {"type": "Dense", "units": 10}]},
                    "policy": "float32", "optimizer": {"type": "sgd", "learning_rate": )" +
                    learning_rate + "}}";
                validate_experiment(experiment_from_json(text, "bad.json"));
            });
        };
        const std::string missing = load(R"({"class_name": "CosineDecay", "config":
            {"initial_learning_rate": 0.1}})");
        CHECK_MSG(missing.find("bad.json: optimizer.learning_rate.config: missing field "
                               "'decay_steps'") != std::string::npos,
                  missing);
        const std::string negative = load(R"({"class_name": "ExponentialDecay", "config":
            {"initial_learning_rate": 0.1, "decay_steps": -5, "decay_rate": 0.9}})");
        CHECK_MSG(negative.find("optimizer.learning_rate.config.decay_steps must be a finite "
                                "number > 0 (got -5)") != std::string::npos,
                  negative);
        const std::string unknown = load(R"({"class_name": "StepLR", "config": {}})");
        CHECK_MSG(unknown.find("unknown learning-rate schedule 'StepLR'") != std::string::npos,
                  unknown);
        const std::string field = load(R"({"class_name": "OneCycle", "config":
            {"max_lr": 0.1, "decay_steps": 5}})");
        CHECK_MSG(field.find("decay_steps") != std::string::npos, field);
        const std::string order = load(R"({"class_name": "PiecewiseConstantDecay", "config":
            {"boundaries": [100, 50], "values": [0.1, 0.01, 0.001]}})");
        CHECK_MSG(order.find("optimizer.learning_rate.config.boundaries[1] must be greater") !=
                      std::string::npos,
                  order);
        const std::string count = load(R"({"class_name": "PiecewiseConstantDecay", "config":
            {"boundaries": [100], "values": [0.1]}})");
        CHECK_MSG(count.find("expected one more value than boundaries") != std::string::npos,
                  count);
        const std::string pct = load(R"({"class_name": "OneCycle", "config":
            {"max_lr": 0.1, "pct_start": 1.5}})");
        CHECK_MSG(pct.find("optimizer.learning_rate.config.pct_start must be in (0, 1)") !=
                      std::string::npos,
                  pct);
    }

    void compactFormForTheCli() {
        double base = 0.01;
        LearningRateSchedule s = schedule_from_spec("CosineDecay:decay_steps=2000,alpha=0.1", base);
        CHECK(s.kind == ScheduleKind::CosineDecay);
        CHECK(s.decay_steps == 2000 && s.alpha == 0.1 && base == 0.01);
        s = schedule_from_spec("onecyclelr:pct_start=0.25,anneal_strategy=linear,max_lr=0.02",
                               base);
        CHECK(s.kind == ScheduleKind::OneCycle && s.pct_start == 0.25 && s.linear_anneal);
        CHECK(base == 0.02);
        s = schedule_from_spec("PiecewiseConstantDecay:boundaries=500/900,values=0.01/0.001/1e-4",
                               base);
        CHECK(s.boundary_count == 2 && s.boundaries[1] == 900 && s.values[2] == 1e-4);
        CHECK(base == 0.01); // the values are the rates: the base follows the first
        CHECK(schedule_from_spec("Constant", base).kind == ScheduleKind::Constant);
        // Every field written reads back.
        for (ScheduleKind kind : {ScheduleKind::ExponentialDecay, ScheduleKind::CosineDecay,
                                  ScheduleKind::PolynomialDecay, ScheduleKind::OneCycle,
                                  ScheduleKind::PiecewiseConstantDecay}) {
            const LearningRateSchedule d = schedule(kind);
            double b = 0.5;
            const LearningRateSchedule back = schedule_from_spec(
                std::string(schedule_kind_name(kind)) + ":" + schedule_options_text(d), b);
            CHECK_MSG(back == d,
                      schedule_kind_name(kind) + std::string(": ") + schedule_options_text(d));
        }
        CHECK(error_of([&] {
                  schedule_from_spec("CosineDecay:decay_steps", base);
              }).find("expected key=value") != std::string::npos);
        CHECK(error_of([&] {
                  schedule_from_spec("CosineDecay:decay_steps=0", base);
              }).find("decay_steps must be a finite number > 0") != std::string::npos);
    }
};

MANTISSA_TEST_MAIN(TestLrSchedule, matchesKerasTranscriptions, matchesPyTorchOneCycle,
                   handWorkedValues, skippedStepsAdvanceOnlyPyTorchSchedules, kerasRatesAreFloat32,
                   trainerRecordsEachStepsRate, oneCycleTotalStepsComeFromTheRun,
                   experimentFileRoundTrips, readsKerasSerialisedSchedules,
                   badScheduleInputNamesTheField, compactFormForTheCli)
