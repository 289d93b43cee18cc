// Min/max-per-bucket decimation and EMA smoothing of chart series: plain functions on point
// vectors, so the 100k-step charts stay fast and the tests can check them without widgets.
#include "ui/charts/decimate.h"

#include <algorithm>
#include <cmath>

namespace mantissa::ui {

QVector<QPointF> decimate_min_max(const QVector<QPointF>& points, int buckets) {
    const qsizetype n = points.size();
    if (buckets < 1) buckets = 1;
    if (n <= 2 * static_cast<qsizetype>(buckets) + 2) return points;

    const double x0 = points.front().x();
    const double x1 = points.back().x();
    const double width = x1 - x0;
    QVector<QPointF> out;
    out.reserve(2 * buckets + 2);
    out.append(points.front());
    if (!(width > 0)) {
        out.append(points.back());
        return out;
    }

    qsizetype i = 1;
    const qsizetype last = n - 1; // the last point is appended separately
    for (int b = 0; b < buckets && i < last; ++b) {
        const double end = x0 + width * (b + 1) / buckets;
        qsizetype lo = -1, hi = -1;
        for (; i < last && (points[i].x() < end || b == buckets - 1); ++i) {
            const double y = points[i].y();
            if (!std::isfinite(y)) continue;
            if (lo < 0 || y < points[lo].y()) lo = i;
            if (hi < 0 || y > points[hi].y()) hi = i;
        }
        if (lo < 0) continue;
        if (lo == hi) {
            out.append(points[lo]);
        } else if (lo < hi) {
            out.append(points[lo]);
            out.append(points[hi]);
        } else {
            out.append(points[hi]);
            out.append(points[lo]);
        }
    }
    out.append(points.back());
    return out;
}

QVector<QPointF> smooth_ema(const QVector<QPointF>& points, double smoothing) {
    if (smoothing <= 0) return points;
    EmaState state;
    QVector<QPointF> out;
    extend_ema(points, smoothing, state, out);
    return out;
}

void extend_ema(const QVector<QPointF>& points, double smoothing, EmaState& state,
                QVector<QPointF>& smoothed) {
    if (state.smoothing != smoothing || smoothed.size() > points.size()) {
        state = EmaState{};
        state.smoothing = smoothing;
        smoothed.clear();
    }
    if (smoothing <= 0) {
        smoothed = points;
        return;
    }
    const double w = std::min(smoothing, 0.999);
    // Reserve for a first fill only: reserving the exact size on every extension would
    // reallocate and copy the whole curve each live tick (100,000 points for 25 new ones).
    if (smoothed.isEmpty()) smoothed.reserve(points.size());
    for (qsizetype i = smoothed.size(); i < points.size(); ++i) {
        const QPointF& p = points[i];
        const double y = p.y();
        if (!std::isfinite(y)) {
            smoothed.append(p);
            continue;
        }
        state.last = state.last * w + (1 - w) * y;
        state.weight *= w;
        smoothed.append(QPointF(p.x(), state.last / (1 - state.weight)));
    }
}

} // namespace mantissa::ui
