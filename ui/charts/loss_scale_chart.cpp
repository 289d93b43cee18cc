// LossScaleChart: shows how dynamic loss scaling halves the scale on overflow and grows it back,
// one line per run of log2(scale) (so 15 means 2^15 = 32768), a marker on each skipped step.
// Plotting the exponent keeps the axis labels short; Qt Charts elides wide log-axis labels.
#include "ui/charts/loss_scale_chart.h"

#include "ui/charts/run_lines.h"

#include <QLocale>
#include <QStringList>
#include <cmath>

#include "ui/runs/run_record.h"

namespace mantissa::ui {

LossScaleChart::LossScaleChart(QWidget* parent)
    : MetricChart(tr("Loss scale"), tr("log₂ scale"), parent) {
    set_smoothing_enabled(false);
}

void LossScaleChart::show_runs(const QVector<const RunRecord*>& runs, RunLineCache& cache) {
    QVector<ChartLine> lines;
    m_skipped = 0;
    // Each trained run's own scale and skips, for the tooltip (and the title when it is alone):
    // a total over runs, or the newest run's scale, would describe none of them (issue 28).
    QStringList per_run;
    int trained = 0, with_skips = 0;
    const RunRecord* only = nullptr;
    for (const RunRecord* run : runs) {
        const RunLines& points = cache.lines(*run);
        const quint64 version = run_version(*run);
        lines.append(ChartLine{run->id,
                               QStringLiteral("loss scale"),
                               run_label(*run),
                               run->color,
                               points.log2_scale,
                               ChartLine::Style::Line,
                               false,
                               version,
                               {}});
        // Each marker's tooltip says where its step overflowed (the skipped-step ledger).
        lines.append(ChartLine{run->id, QStringLiteral("skipped"), run_label(*run), run->color,
                               points.skipped, ChartLine::Style::Markers, false, version,
                               points.skip_notes});
        m_skipped += points.skipped.size();
        if (run->steps.isEmpty()) continue; // queued: no scale yet
        ++trained;
        only = run;
        if (!points.skipped.isEmpty()) ++with_skips;
        per_run << tr("%1: scale %2, %3 skipped")
                       .arg(run->name)
                       .arg(run->steps.back().loss_scale, 0, 'g', 10)
                       .arg(QLocale().toString(static_cast<qlonglong>(points.skipped.size())));
    }
    QString title;
    if (trained == 1) {
        const auto skipped = static_cast<qlonglong>(cache.lines(*only).skipped.size());
        const QString scale = QString::number(only->steps.back().loss_scale, 'g', 10);
        title = skipped == 0
                    ? tr("Loss scale %1 · no skipped steps").arg(scale)
                    : tr("Loss scale %1 · %2 skipped").arg(scale, QLocale().toString(skipped));
    } else if (with_skips == 0) {
        title = tr("Loss scale · no skipped steps");
    } else {
        title = tr("Loss scale · skips in %1 of %2 runs").arg(with_skips).arg(trained);
    }
    set_title(title);
    setToolTip(per_run.isEmpty() ? QString() : per_run.join(QLatin1Char('\n')));
    set_lines(std::move(lines));
}

} // namespace mantissa::ui
