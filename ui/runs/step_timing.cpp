// StepTiming: order statistics over the steps after the warm-up (see step_timing.h).
#include "ui/runs/step_timing.h"

#include <algorithm>
#include <cmath>

namespace mantissa::ui {

int warmup_steps(qsizetype steps) {
    if (steps <= 1) return 0;
    const qsizetype tenth = (steps + 9) / 10; // 10%, rounded up
    return static_cast<int>(std::min(std::max<qsizetype>(5, tenth), steps / 2));
}

double quantile(QVector<double> values, double q) {
    if (values.isEmpty()) return 0;
    std::sort(values.begin(), values.end());
    const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
    const auto lo = static_cast<qsizetype>(std::floor(pos));
    const qsizetype hi = std::min(lo + 1, values.size() - 1);
    const double frac = pos - static_cast<double>(lo);
    return values[lo] + (values[hi] - values[lo]) * frac;
}

StepTiming step_timing(const QVector<StepRecord>& steps) {
    StepTiming t;
    t.steps = static_cast<int>(steps.size());
    t.warmup = warmup_steps(steps.size());
    QVector<double> ms, rate;
    for (qsizetype i = t.warmup; i < steps.size(); ++i) {
        if (std::isfinite(steps[i].step_ms) && steps[i].step_ms > 0) ms.append(steps[i].step_ms);
        if (std::isfinite(steps[i].samples_per_s) && steps[i].samples_per_s > 0)
            rate.append(steps[i].samples_per_s);
    }
    t.timed = static_cast<int>(ms.size());
    t.median_ms = quantile(ms, 0.5);
    t.p25_ms = quantile(ms, 0.25);
    t.p75_ms = quantile(ms, 0.75);
    t.samples_per_s = quantile(rate, 0.5);
    return t;
}

bool within_noise(const StepTiming& a, const StepTiming& b) {
    if (!a.valid() || !b.valid()) return false;
    // A busy machine can stretch one run's p75 far out (float32's 1.11-9.19 ms once hid nvfp4's
    // 12x): medians further apart than kNoiseRatio are a difference, whatever the spreads say.
    const double ratio =
        a.median_ms > b.median_ms ? a.median_ms / b.median_ms : b.median_ms / a.median_ms;
    if (ratio > kNoiseRatio) return false;
    return a.p25_ms <= b.p75_ms && b.p25_ms <= a.p75_ms;
}

} // namespace mantissa::ui
