// Learning-rate schedules with Keras's names and formulas (ExponentialDecay,
// PiecewiseConstantDecay, CosineDecay with Keras 3's warmup, PolynomialDecay) and PyTorch's
// OneCycleLR. One definition of the arithmetic (MANTISSA_HD) serves the CPU engine, the CUDA
// optimizer kernel (which knows the step only on the device, so a captured CUDA Graph replays
// with the right rate and no host write) and the per-step metrics record.
//
// The schedule's base rate is the optimizer's learning_rate: Keras's initial_learning_rate, or
// OneCycle's max_lr; PiecewiseConstantDecay ignores it (its values are the rates). Arithmetic is
// in double; Keras evaluates schedules in float32, so the keras conventions round the result to
// float32 before the update uses it (optimizer_at_step in optimizer_config.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/host_device.h"

namespace mantissa {

enum class ScheduleKind : std::uint8_t {
    Constant, // no schedule: the learning rate every step
    ExponentialDecay,
    PiecewiseConstantDecay,
    CosineDecay,
    PolynomialDecay,
    OneCycle, // torch.optim.lr_scheduler.OneCycleLR
};

inline constexpr int kMaxScheduleBoundaries = 15; // PiecewiseConstantDecay: 16 values at most

struct LearningRateSchedule {
    ScheduleKind kind = ScheduleKind::Constant;
    // ExponentialDecay, CosineDecay, PolynomialDecay: steps over which the rate decays
    double decay_steps = 0;
    // ExponentialDecay: rate *= decay_rate every decay_steps (continuously unless staircase)
    double decay_rate = 0;
    bool staircase = false;
    // CosineDecay: the final rate as a fraction of the start; Keras 3's linear warmup from the
    // initial rate to warmup_target over warmup_steps (off when has_warmup_target is false)
    double alpha = 0;
    double warmup_steps = 0;
    double warmup_target = 0;
    bool has_warmup_target = false;
    // PolynomialDecay
    double end_learning_rate = 0.0001;
    double power = 1.0;
    bool cycle = false;
    // PiecewiseConstantDecay: values[0] up to boundaries[0] (inclusive), values[i] up to
    // boundaries[i], values[boundary_count] after the last boundary
    int boundary_count = 0;
    double boundaries[kMaxScheduleBoundaries] = {};
    double values[kMaxScheduleBoundaries + 1] = {};
    // OneCycle (PyTorch's defaults): total_steps 0 = the run's step count (epochs x steps per
    // epoch, or max_steps); starts at max_lr / div_factor, ends at that / final_div_factor
    std::int64_t total_steps = 0;
    double pct_start = 0.3;
    double div_factor = 25.0;
    double final_div_factor = 1e4;
    bool linear_anneal = false; // anneal_strategy "linear" (default "cos")
    bool three_phase = false;

    bool operator==(const LearningRateSchedule&) const = default;
};

namespace schedule_detail {

inline constexpr double kPi = 3.141592653589793; // math.pi

// torch.optim.lr_scheduler.OneCycleLR._annealing_cos / _annealing_linear
MANTISSA_HD inline double one_cycle_anneal(bool linear, double start, double end, double pct) {
    using std::cos;
    if (linear) return (end - start) * pct + start;
    const double cos_out = cos(kPi * pct) + 1.0;
    return end + (start - end) / 2.0 * cos_out;
}

// OneCycleLR.get_lr for step_num, its phases as it builds them (end steps are floats).
MANTISSA_HD inline double one_cycle(const LearningRateSchedule& s, double max_lr, double step) {
    const double initial_lr = max_lr / s.div_factor;
    const double min_lr = initial_lr / s.final_div_factor;
    const double total = static_cast<double>(s.total_steps);
    double end_steps[3], start_lrs[3], end_lrs[3];
    int phases = 0;
    end_steps[phases] = s.pct_start * total - 1.0;
    start_lrs[phases] = initial_lr;
    end_lrs[phases++] = max_lr;
    if (s.three_phase) {
        end_steps[phases] = 2.0 * s.pct_start * total - 2.0;
        start_lrs[phases] = max_lr;
        end_lrs[phases++] = initial_lr;
        end_steps[phases] = total - 1.0;
        start_lrs[phases] = initial_lr;
        end_lrs[phases++] = min_lr;
    } else {
        end_steps[phases] = total - 1.0;
        start_lrs[phases] = max_lr;
        end_lrs[phases++] = min_lr;
    }
    double start_step = 0.0;
    for (int i = 0; i < phases; ++i) {
        if (step <= end_steps[i] || i == phases - 1) {
            const double pct = (step - start_step) / (end_steps[i] - start_step);
            return one_cycle_anneal(s.linear_anneal, start_lrs[i], end_lrs[i], pct);
        }
        start_step = end_steps[i];
    }
    return min_lr; // not reached: the last phase always answers
}

} // namespace schedule_detail

// The rate for the update at 0-based schedule step `step` (Keras: optimizer.iterations before
// the update; PyTorch: the scheduler's last_epoch). `base` is the optimizer's learning_rate.
MANTISSA_HD inline double schedule_learning_rate(const LearningRateSchedule& s, double base,
                                                 double step) {
    using std::ceil;
    using std::cos;
    using std::floor;
    using std::pow;
    switch (s.kind) {
    case ScheduleKind::Constant:
        return base;
    case ScheduleKind::ExponentialDecay: {
        double p = step / s.decay_steps;
        if (s.staircase) p = floor(p);
        return base * pow(s.decay_rate, p);
    }
    case ScheduleKind::PiecewiseConstantDecay: {
        for (int i = 0; i < s.boundary_count; ++i)
            if (step <= s.boundaries[i]) return s.values[i];
        return s.values[s.boundary_count];
    }
    case ScheduleKind::CosineDecay: {
        const auto decay = [&](double decay_step, double decay_from) {
            const double completed_fraction = decay_step / s.decay_steps;
            const double cosine_decayed =
                0.5 * (1.0 + cos(schedule_detail::kPi * completed_fraction));
            const double decayed = (1.0 - s.alpha) * cosine_decayed + s.alpha;
            return decay_from * decayed;
        };
        if (!s.has_warmup_target) return decay(step < s.decay_steps ? step : s.decay_steps, base);
        const double limit = s.decay_steps + s.warmup_steps;
        const double recomp = step < limit ? step : limit;
        if (recomp < s.warmup_steps) {
            const double completed_fraction = recomp / s.warmup_steps;
            const double total_step_delta = s.warmup_target - base;
            return total_step_delta * completed_fraction + base;
        }
        return decay(recomp - s.warmup_steps, s.warmup_target);
    }
    case ScheduleKind::PolynomialDecay: {
        double decay_steps = s.decay_steps;
        double recomp = step;
        if (s.cycle) {
            const double multiplier = recomp == 0.0 ? 1.0 : ceil(recomp / decay_steps);
            decay_steps *= multiplier;
        } else if (recomp > decay_steps) {
            recomp = decay_steps;
        }
        const double p = recomp / decay_steps;
        return (base - s.end_learning_rate) * pow(1.0 - p, s.power) + s.end_learning_rate;
    }
    case ScheduleKind::OneCycle:
        return schedule_detail::one_cycle(s, base, step);
    }
    return base;
}

// "ExponentialDecay", ... as Keras serialises them ("OneCycle" for PyTorch's OneCycleLR;
// "Constant" for none).
const char* schedule_kind_name(ScheduleKind kind);
// Case-insensitive; accepts "OneCycleLR" too. Throws Error(Config) listing the valid names.
ScheduleKind schedule_kind_from_name(std::string_view name);
// The schedule with its defaults (PolynomialDecay's end rate 1e-4, OneCycle's pct_start 0.3, ...)
// and the given decay_steps where the kind has them.
LearningRateSchedule default_schedule(ScheduleKind kind);
// Range checks, each error naming `path` + the field ("optimizer.learning_rate.config.decay_steps
// must be > 0 (got 0)"). total_steps 0 passes (the trainer derives it: resolve_schedule).
void validate_schedule(const LearningRateSchedule& schedule, const std::string& path);
// Fills OneCycle's total_steps from the run's step count when 0, and refuses a cycle shorter than
// the run (PyTorch raises when stepped past it). Other kinds pass through.
LearningRateSchedule resolve_schedule(LearningRateSchedule schedule, std::int64_t run_steps,
                                      const std::string& path);
// One line for the Settings form, the run's header and the CLI: "CosineDecay over 1000 steps to
// 0.1x, warmup 100 steps to 0.01", "OneCycle to 0.01 over 235 steps (30% up)".
std::string describe_schedule(const LearningRateSchedule& schedule, double base);

} // namespace mantissa
