// StepTiming: a run's steady-state speed. The first steps of a run pay for allocation, caches and
// (on a GPU) kernel selection, and single step times are noisy, so a run's speed is the median
// ms/step over the steps after a warm-up, with the interquartile range (p25-p75) as its spread.
#pragma once

#include <QVector>

#include "core/train/metrics.h"

namespace mantissa::ui {

struct StepTiming {
    int steps = 0;        // steps the run recorded
    int warmup = 0;       // of which skipped as warm-up
    int timed = 0;        // finite step times after the warm-up (what the figures are over)
    double median_ms = 0; // 0 when nothing was timed
    double p25_ms = 0;    // interquartile range: half of the timed steps lie in [p25, p75]
    double p75_ms = 0;
    double samples_per_s = 0; // the median of the same steps' samples/s
    bool valid() const { return timed > 0 && median_ms > 0; }
};

// The steps skipped as warm-up out of `steps`: 10% of them, at least 5, never more than half
// (so a 6-step run still has 3 timed steps). 40 steps: 5; 200: 20; 1,500: 150.
int warmup_steps(qsizetype steps);
// The q-quantile (0..1) of `values` by linear interpolation between order statistics; 0 when
// empty. `values` need not be sorted.
double quantile(QVector<double> values, double q);
StepTiming step_timing(const QVector<StepRecord>& steps);
// Medians further apart than this ratio are never "within the noise" (issue 28).
inline constexpr double kNoiseRatio = 1.5;
// Whether a's and b's interquartile ranges overlap and their medians are within kNoiseRatio of
// each other: their difference is within the step-to-step noise, and a ratio of their medians
// should not be read as a speedup.
bool within_noise(const StepTiming& a, const StepTiming& b);

} // namespace mantissa::ui
