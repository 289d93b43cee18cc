// decimate_min_max: shrinks a long series to what a chart of a given pixel width can show, keeping
// the lowest and highest point of every pixel column (and the endpoints) so no spike disappears.
#pragma once

#include <QPointF>
#include <QVector>

namespace mantissa::ui {

// `points` sorted by x. Splits [x_first, x_last] into `buckets` equal columns and keeps, per
// column, its minimum and maximum y in x order, plus the first and last point of the series.
// Returns at most 2 * buckets + 2 points; a series already that short comes back unchanged.
QVector<QPointF> decimate_min_max(const QVector<QPointF>& points, int buckets);

// TensorBoard's debiased exponential moving average with weight `smoothing` in [0, 1).
// Non-finite values are passed through and do not disturb the average.
QVector<QPointF> smooth_ema(const QVector<QPointF>& points, double smoothing);

// The running state of smooth_ema, so a growing series is smoothed only over its new points.
struct EmaState {
    double smoothing = -1; // the weight `smoothed` was computed with (-1: nothing yet)
    double last = 0;       // the biased average so far
    double weight = 1;     // smoothing^(finite points so far), for the debias term
};

// Appends to `smoothed` the EMA of points[smoothed.size() ..], continuing from `state`; equal
// to smooth_ema(points, smoothing) when `smoothed` starts empty with a fresh state.
void extend_ema(const QVector<QPointF>& points, double smoothing, EmaState& state,
                QVector<QPointF>& smoothed);

} // namespace mantissa::ui
