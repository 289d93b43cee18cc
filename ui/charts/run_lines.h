// RunLineCache: the (step, value) points each chart draws for a run, built once and extended as
// the run grows, so a redraw during training touches only the new steps, not all 100k of them.
#pragma once

#include <QHash>
#include <QPointF>
#include <QSet>
#include <QVector>

#include "ui/runs/run_record.h"

namespace mantissa::ui {

// A run's chart points. The vectors are implicitly shared: handing them to a ChartLine copies
// nothing.
struct RunLines {
    qsizetype steps_seen = 0;       // steps already turned into points
    qsizetype epochs_seen = -1;     // epochs the validation points were built from
    QVector<QPointF> loss;          // (step, train loss)
    QVector<QPointF> accuracy;      // (step, train accuracy in %)
    QVector<QPointF> step_ms;       // (step, ms per step)
    QVector<QPointF> learning_rate; // (step, the rate its update used); none from older files
    QVector<QPointF> log2_scale;    // (step, log2 of the loss scale used)
    QVector<QPointF> skipped;       // (step, log2 of the scale) for every skipped step
    QVector<QString> skip_notes;    // for each skipped step, where it overflowed (the ledger)
    QVector<QPointF> val_loss;      // (step at the epoch's end, validation loss)
    QVector<QPointF> val_accuracy;
    QHash<int, double> epoch_end; // epoch -> its last step, where validation is plotted
};

// Changes whenever a run gains steps or epochs (the charts' "same data" test).
quint64 run_version(const RunRecord& run);

class RunLineCache {
public:
    // The run's points, extended by the steps and epochs added since the last call.
    const RunLines& lines(const RunRecord& run);
    // Drops the runs whose ids are not in `keep` (removed or hidden runs).
    void retain(const QSet<int>& keep);

private:
    QHash<int, RunLines> m_runs;
};

} // namespace mantissa::ui
