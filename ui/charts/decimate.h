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

} // namespace mantissa::ui
