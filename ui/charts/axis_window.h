// The visible window and tick spacing of a chart's linear axes, as pure functions: readable
// ticks for any data, and never so many ticks that Qt Charts spends forever labelling them.
#pragma once

#include <vector>

namespace mantissa::ui {

// A 1, 2 or 5 times a power of ten near `range / ticks`: readable tick spacing.
double nice_interval(double range, int ticks);

struct AxisWindow {
    double lo = 0, hi = 1, step = 0.5; // (hi - lo) / step is a whole number of ticks, 1..12
};

// The y window for data spanning [y_min, y_max]: 5% padding, whole ticks at both ends, clipped
// to [floor, ceiling] (the metric's own limits, e.g. 0..100 for accuracy; pass -inf/inf for
// none). Data that is constant, or nearly so relative to its size (a step time of 249.665 ms
// and its smoothed twin 1e-13 ms away), gets a window of about ±5% of the value: a tick step
// finer than the value's own precision would never advance when Qt Charts adds it.
// With `max_labels`, the tick step grows until the window has at most that many tick labels
// (a short chart has room for two or three; Qt Charts elides labels that do not fit to "...").
AxisWindow linear_window(double y_min, double y_max, double floor, double ceiling,
                         int max_labels = 13);

// The tick step for an x range of `range` with at most `max_labels` labels once both ends are
// rounded out to whole steps (never below `min_step`).
double fitted_interval(double lo, double hi, int max_labels, double min_step);

// The y band that a line's bulk occupies, for a chart that ignores outliers in its scaling (as
// TensorBoard's scalar charts do by default): the 5th to the 95th percentile of `values` (linear
// interpolation between the two nearest ranks), widened by a fifth of that span on each side,
// never past the values' own extremes. A step-time curve whose first step set up the GPU, or
// whose machine was busy for a moment, keeps its typical steps readable; the slow ones run off
// the top. Non-finite values are ignored; with none left the band is empty (lo > hi).
struct ValueBand {
    double lo = 1, hi = 0;
    bool empty() const { return !(lo <= hi); }
};
ValueBand bulk_band(std::vector<double> values);

} // namespace mantissa::ui
