// Axis windows for MetricChart: padding, whole ticks and the near-constant-data guard, kept
// apart from the widget so the arithmetic is tested on its own (tst_gui_charts).
#include "ui/charts/axis_window.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace mantissa::ui {

double nice_interval(double range, int ticks) {
    const double raw = range / ticks;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0})
        if (raw <= m * magnitude) return m * magnitude;
    return 10 * magnitude;
}

namespace {

AxisWindow window_with_ticks(double y_min, double y_max, double floor, double ceiling, int ticks) {
    if (!(y_min <= y_max) || !std::isfinite(y_min) || !std::isfinite(y_max)) {
        y_min = 0;
        y_max = 1;
    }
    const double magnitude = std::max(std::abs(y_min), std::abs(y_max));
    double pad = (y_max - y_min) * 0.05;
    // Below a millionth of the value the spread is rounding, not signal: treat it as constant.
    // A constant zero (a loss scale's log2 of 1) gets a unit window rather than 1e-6 ticks.
    if (y_max - y_min <= magnitude * 1e-6) pad = magnitude > 0 ? magnitude * 0.05 : 1.0;
    // Padding and whole ticks never cross zero (for data that does not) or the metric's limits.
    double lower = y_min >= 0 ? 0.0 : -INFINITY;
    lower = std::max(lower, std::min(floor, y_min));
    const double upper = std::max(ceiling, y_max);
    const double lo = std::max(y_min - pad, lower), hi = std::min(y_max + pad, upper);
    AxisWindow w;
    w.step = nice_interval(hi - lo, ticks);
    w.lo = std::max(std::floor(lo / w.step) * w.step, lower);
    w.hi = std::min(std::ceil(hi / w.step) * w.step, upper);
    // Last line of defence: a window Qt could not label in a dozen ticks becomes the default.
    const double count = (w.hi - w.lo) / w.step;
    if (!(w.hi > w.lo) || !(count >= 0.99 && count <= 12.01) || !std::isfinite(w.step))
        return AxisWindow{};
    return w;
}

} // namespace

AxisWindow linear_window(double y_min, double y_max, double floor, double ceiling, int max_labels) {
    // Five ticks when there is room; fewer, coarser ones on a short axis.
    AxisWindow w;
    for (int ticks = 5; ticks >= 1; --ticks) {
        w = window_with_ticks(y_min, y_max, floor, ceiling, ticks);
        if ((w.hi - w.lo) / w.step + 1 <= max_labels + 0.01) return w;
    }
    return w;
}

double fitted_interval(double lo, double hi, int max_labels, double min_step) {
    double step = std::max(min_step, nice_interval(hi - lo, 5));
    for (int ticks = 5; ticks >= 1; --ticks) {
        step = std::max(min_step, nice_interval(hi - lo, ticks));
        const double labels = std::ceil(hi / step) - std::floor(lo / step) + 1;
        if (labels <= max_labels) return step;
    }
    return step;
}

namespace {

// The p-quantile of `values` (reordered by nth_element): rank h = (n - 1) p, linear
// between the ranks floor(h) and floor(h) + 1.
double quantile(std::vector<double>& values, double p) {
    const double h = static_cast<double>(values.size() - 1) * p;
    const auto below = static_cast<std::size_t>(std::floor(h));
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(below),
                     values.end());
    const double low = values[below];
    if (below + 1 >= values.size()) return low;
    // The next rank is the smallest value above position `below`.
    const double high =
        *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(below) + 1, values.end());
    return low + (high - low) * (h - static_cast<double>(below));
}

} // namespace

ValueBand bulk_band(std::vector<double> values) {
    values.erase(
        std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }),
        values.end());
    if (values.empty()) return {};
    const auto [min_it, max_it] = std::minmax_element(values.begin(), values.end());
    const double min = *min_it, max = *max_it;
    const double q05 = quantile(values, 0.05);
    const double q95 = quantile(values, 0.95);
    const double pad = 0.2 * (q95 - q05);
    return {std::max(min, q05 - pad), std::min(max, q95 + pad)};
}

} // namespace mantissa::ui
