// Learning-rate schedules: names, defaults, range checks, OneCycle's step count, descriptions.
// The formulas themselves are in lr_schedule.h (shared with the CUDA kernel).
#include "core/optim/lr_schedule.h"

#include <cmath>
#include <string>

#include "core/error.h"
#include "core/text.h"

namespace mantissa {

namespace {

constexpr ScheduleKind kKinds[] = {
    ScheduleKind::Constant,    ScheduleKind::ExponentialDecay, ScheduleKind::PiecewiseConstantDecay,
    ScheduleKind::CosineDecay, ScheduleKind::PolynomialDecay,  ScheduleKind::OneCycle,
};

[[noreturn]] void fail(const std::string& path, const char* field, const std::string& what) {
    throw Error(ErrorKind::Config, path + "." + field + " " + what);
}

void require(bool ok, const std::string& path, const char* field, const char* requirement,
             double got) {
    if (!ok)
        fail(path, field,
             std::string("must be ") + requirement + " (got " + number_text(got) + ")");
}

bool finite_positive(double v) {
    return std::isfinite(v) && v > 0.0;
}
bool finite_non_negative(double v) {
    return std::isfinite(v) && v >= 0.0;
}

} // namespace

const char* schedule_kind_name(ScheduleKind kind) {
    switch (kind) {
    case ScheduleKind::Constant:
        return "Constant";
    case ScheduleKind::ExponentialDecay:
        return "ExponentialDecay";
    case ScheduleKind::PiecewiseConstantDecay:
        return "PiecewiseConstantDecay";
    case ScheduleKind::CosineDecay:
        return "CosineDecay";
    case ScheduleKind::PolynomialDecay:
        return "PolynomialDecay";
    case ScheduleKind::OneCycle:
        return "OneCycle";
    }
    return "?";
}

ScheduleKind schedule_kind_from_name(std::string_view name) {
    const std::string key = lower_ascii(name);
    if (key == "onecyclelr") return ScheduleKind::OneCycle;
    for (ScheduleKind kind : kKinds)
        if (key == lower_ascii(schedule_kind_name(kind))) return kind;
    throw Error(ErrorKind::Config,
                "unknown learning-rate schedule '" + std::string(name) +
                    "'; valid schedules: Constant, ExponentialDecay, PiecewiseConstantDecay, "
                    "CosineDecay, PolynomialDecay, OneCycle");
}

LearningRateSchedule default_schedule(ScheduleKind kind) {
    LearningRateSchedule s;
    s.kind = kind;
    switch (kind) {
    case ScheduleKind::ExponentialDecay:
        s.decay_steps = 1000;
        s.decay_rate = 0.96;
        break;
    case ScheduleKind::CosineDecay:
    case ScheduleKind::PolynomialDecay:
        s.decay_steps = 1000;
        break;
    case ScheduleKind::PiecewiseConstantDecay:
        s.boundary_count = 1;
        s.boundaries[0] = 1000;
        s.values[0] = 0.001;
        s.values[1] = 0.0001;
        break;
    default:
        break;
    }
    return s;
}

void validate_schedule(const LearningRateSchedule& s, const std::string& path) {
    switch (s.kind) {
    case ScheduleKind::Constant:
        return;
    case ScheduleKind::ExponentialDecay:
        require(finite_positive(s.decay_steps), path, "decay_steps", "a finite number > 0",
                s.decay_steps);
        require(finite_positive(s.decay_rate), path, "decay_rate", "a finite number > 0",
                s.decay_rate);
        return;
    case ScheduleKind::PiecewiseConstantDecay:
        if (s.boundary_count < 1 || s.boundary_count > kMaxScheduleBoundaries)
            fail(path, "boundaries",
                 "must list 1 to " + std::to_string(kMaxScheduleBoundaries) + " steps (got " +
                     std::to_string(s.boundary_count) + ")");
        for (int i = 0; i < s.boundary_count; ++i) {
            const std::string field = "boundaries[" + std::to_string(i) + "]";
            require(finite_non_negative(s.boundaries[i]), path, field.c_str(),
                    "a finite number >= 0", s.boundaries[i]);
            if (i > 0 && !(s.boundaries[i] > s.boundaries[i - 1]))
                fail(path, field.c_str(),
                     "must be greater than the boundary before it (" +
                         number_text(s.boundaries[i - 1]) + ")");
        }
        for (int i = 0; i <= s.boundary_count; ++i) {
            const std::string field = "values[" + std::to_string(i) + "]";
            require(finite_positive(s.values[i]), path, field.c_str(), "a finite number > 0",
                    s.values[i]);
        }
        return;
    case ScheduleKind::CosineDecay:
        require(finite_positive(s.decay_steps), path, "decay_steps", "a finite number > 0",
                s.decay_steps);
        require(s.alpha >= 0.0 && s.alpha <= 1.0, path, "alpha", "in [0, 1]", s.alpha);
        require(finite_non_negative(s.warmup_steps), path, "warmup_steps", "a finite number >= 0",
                s.warmup_steps);
        if (s.has_warmup_target)
            require(finite_positive(s.warmup_target), path, "warmup_target", "a finite number > 0",
                    s.warmup_target);
        return;
    case ScheduleKind::PolynomialDecay:
        require(finite_positive(s.decay_steps), path, "decay_steps", "a finite number > 0",
                s.decay_steps);
        require(finite_non_negative(s.end_learning_rate), path, "end_learning_rate",
                "a finite number >= 0", s.end_learning_rate);
        require(finite_positive(s.power), path, "power", "a finite number > 0", s.power);
        return;
    case ScheduleKind::OneCycle:
        require(s.total_steps >= 0, path, "total_steps", "an integer >= 0 (0: the run's steps)",
                static_cast<double>(s.total_steps));
        require(s.pct_start > 0.0 && s.pct_start < 1.0, path, "pct_start", "in (0, 1)",
                s.pct_start);
        require(finite_positive(s.div_factor), path, "div_factor", "a finite number > 0",
                s.div_factor);
        require(finite_positive(s.final_div_factor), path, "final_div_factor",
                "a finite number > 0", s.final_div_factor);
        return;
    }
}

LearningRateSchedule resolve_schedule(LearningRateSchedule s, std::int64_t run_steps,
                                      const std::string& path) {
    if (s.kind != ScheduleKind::OneCycle) return s;
    if (s.total_steps == 0) {
        if (run_steps <= 0)
            fail(path, "total_steps",
                 "is needed: OneCycle cannot derive the run's step count here (set total_steps, "
                 "or epochs or max_steps)");
        s.total_steps = run_steps;
    } else if (s.total_steps < run_steps) {
        fail(path, "total_steps",
             "(" + std::to_string(s.total_steps) + ") is shorter than the run (" +
                 std::to_string(run_steps) +
                 " steps); PyTorch's OneCycleLR refuses to step past its cycle. Set it to 0 to "
                 "take the run's step count, or lower epochs / max_steps");
    }
    // The phases divide by their lengths: a cycle too short for its first phase has none.
    const double first_end = s.pct_start * static_cast<double>(s.total_steps) - 1.0;
    if (!(first_end > 0.0) || !(static_cast<double>(s.total_steps) - 1.0 > first_end))
        fail(path, "total_steps",
             "(" + std::to_string(s.total_steps) + ") is too short for pct_start " +
                 number_text(s.pct_start) + ": each phase needs at least one step");
    if (s.three_phase && !(static_cast<double>(s.total_steps) - 1.0 >
                           2.0 * s.pct_start * static_cast<double>(s.total_steps) - 2.0))
        fail(path, "pct_start",
             "must leave a third phase: three_phase needs pct_start below 0.5 (got " +
                 number_text(s.pct_start) + ")");
    return s;
}

std::string describe_schedule(const LearningRateSchedule& s, double base) {
    switch (s.kind) {
    case ScheduleKind::Constant:
        return "constant " + number_text(base);
    case ScheduleKind::ExponentialDecay:
        return "ExponentialDecay from " + number_text(base) + ", x" + number_text(s.decay_rate) +
               " every " + number_text(s.decay_steps) + " steps" +
               (s.staircase ? " (staircase)" : "");
    case ScheduleKind::PiecewiseConstantDecay: {
        std::string text = "PiecewiseConstantDecay " + number_text(s.values[0]);
        for (int i = 0; i < s.boundary_count; ++i)
            text += ", after step " + number_text(s.boundaries[i]) + ": " +
                    number_text(s.values[i + 1]);
        return text;
    }
    case ScheduleKind::CosineDecay: {
        const double peak = s.has_warmup_target ? s.warmup_target : base;
        std::string text = "CosineDecay";
        if (s.has_warmup_target)
            text += " warmup " + number_text(base) + " to " + number_text(peak) + " over " +
                    number_text(s.warmup_steps) + " steps, then";
        else
            text += " from " + number_text(base);
        text +=
            " to " + number_text(peak * s.alpha) + " over " + number_text(s.decay_steps) + " steps";
        return text;
    }
    case ScheduleKind::PolynomialDecay:
        return "PolynomialDecay " + number_text(base) + " to " + number_text(s.end_learning_rate) +
               " over " + number_text(s.decay_steps) + " steps (power " + number_text(s.power) +
               (s.cycle ? ", cycling)" : ")");
    case ScheduleKind::OneCycle: {
        std::string text = "OneCycle up to " + number_text(base) + " and down over ";
        text += s.total_steps > 0 ? std::to_string(s.total_steps) + " steps" : "the run";
        text += " (" + number_text(s.pct_start * 100.0) + "% up, " +
                (s.linear_anneal ? "linear" : "cos") + (s.three_phase ? ", three phases)" : ")");
        return text;
    }
    }
    return "?";
}

} // namespace mantissa
