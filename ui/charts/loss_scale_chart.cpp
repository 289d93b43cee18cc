// LossScaleChart: shows how dynamic loss scaling halves the scale on overflow and grows it back,
// one line per run of log2(scale) (so 15 means 2^15 = 32768), a marker on each skipped step.
// Plotting the exponent keeps the axis labels short; Qt Charts elides wide log-axis labels.
#include "ui/charts/loss_scale_chart.h"

#include "ui/charts/run_lines.h"

#include <QLocale>
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
    for (const RunRecord* run : runs) {
        const RunLines& points = cache.lines(*run);
        const quint64 version = run_version(*run);
        lines.append(ChartLine{run->id, QStringLiteral("loss scale"), run->name, run->color,
                               points.log2_scale, ChartLine::Style::Line, false, version});
        lines.append(ChartLine{run->id, QStringLiteral("skipped"), run->name, run->color,
                               points.skipped, ChartLine::Style::Markers, false, version});
        m_skipped += points.skipped.size();
    }
    // The scale now: the latest visible run that has trained (a queued one has no scale yet).
    QString now;
    for (auto it = runs.rbegin(); it != runs.rend(); ++it)
        if (!(*it)->steps.isEmpty()) {
            now = QStringLiteral(" %1").arg((*it)->steps.back().loss_scale, 0, 'g', 10);
            break;
        }
    set_title(m_skipped == 0
                  ? tr("Loss scale%1 · no skipped steps").arg(now)
                  : tr("Loss scale%1 · %2 skipped steps")
                        .arg(now, QLocale().toString(static_cast<qlonglong>(m_skipped))));
    set_lines(std::move(lines));
}

} // namespace mantissa::ui
