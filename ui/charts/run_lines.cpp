// RunLineCache: appends the points of new steps to each run's cached lines; validation points
// are rebuilt only when an epoch ends (there are a handful of them).
#include "ui/charts/run_lines.h"

#include <algorithm>
#include <cmath>

namespace mantissa::ui {

quint64 run_version(const RunRecord& run) {
    return (static_cast<quint64>(run.steps.size()) << 24) +
           static_cast<quint64>(run.epochs.size()) + 1;
}

const RunLines& RunLineCache::lines(const RunRecord& run) {
    RunLines& cached = m_runs[run.id];
    if (run.steps.size() < cached.steps_seen) cached = RunLines{}; // a run never shrinks; rebuild
    const qsizetype grown = run.steps.size() - cached.steps_seen;
    if (grown > 0) {
        for (QVector<QPointF>* v : {&cached.loss, &cached.accuracy, &cached.step_ms,
                                    &cached.learning_rate, &cached.log2_scale})
            // Room for this growth and as much again, reserved only when short: reserving 2x on
            // every call would reallocate and copy all points on each live tick.
            if (v->capacity() < run.steps.size())
                v->reserve(std::max(run.steps.size(), 2 * v->size()));
        for (qsizetype i = cached.steps_seen; i < run.steps.size(); ++i) {
            const StepRecord& s = run.steps[i];
            const double x = static_cast<double>(s.step);
            cached.loss.append(QPointF(x, s.loss));
            cached.accuracy.append(QPointF(x, s.accuracy * 100));
            cached.step_ms.append(QPointF(x, s.step_ms));
            if (s.learning_rate > 0) cached.learning_rate.append(QPointF(x, s.learning_rate));
            const QPointF scale(x, std::log2(s.loss_scale));
            cached.log2_scale.append(scale);
            if (s.skipped) {
                cached.skipped.append(scale);
                cached.skip_notes.append(QString::fromStdString(skipped_step_text(s)));
            }
            const bool epoch_ends = i + 1 == run.steps.size() || run.steps[i + 1].epoch != s.epoch;
            if (epoch_ends) cached.epoch_end[s.epoch] = x;
        }
        cached.steps_seen = run.steps.size();
    }
    if (grown > 0 || cached.epochs_seen != run.epochs.size()) {
        cached.val_loss.clear();
        cached.val_accuracy.clear();
        const double per_epoch =
            static_cast<double>(std::max<std::int64_t>(run.steps_per_epoch, 1));
        for (const EpochRecord& e : run.epochs) {
            auto it = cached.epoch_end.constFind(e.epoch);
            const double x = it != cached.epoch_end.constEnd() ? *it : e.epoch * per_epoch;
            if (std::isfinite(e.val_loss)) cached.val_loss.append(QPointF(x, e.val_loss));
            if (std::isfinite(e.val_accuracy))
                cached.val_accuracy.append(QPointF(x, e.val_accuracy * 100));
        }
        cached.epochs_seen = run.epochs.size();
    }
    return cached;
}

void RunLineCache::retain(const QSet<int>& keep) {
    for (auto it = m_runs.begin(); it != m_runs.end();)
        it = keep.contains(it.key()) ? std::next(it) : m_runs.erase(it);
}

} // namespace mantissa::ui
