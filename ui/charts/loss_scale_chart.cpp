// LossScaleChart: shows how dynamic loss scaling halves the scale on overflow and grows it back,
// one line per run of log2(scale) (so 15 means 2^15 = 32768), a marker on each skipped step.
// Plotting the exponent keeps the axis labels short; Qt Charts elides wide log-axis labels.
#include "ui/charts/loss_scale_chart.h"

#include <QLocale>
#include <cmath>

#include "ui/run_record.h"

namespace mantissa::ui {

LossScaleChart::LossScaleChart(QWidget* parent)
    : MetricChart(tr("Loss scale"), tr("log₂ scale"), parent) {
    set_smoothing_enabled(false);
}

void LossScaleChart::show_runs(const QVector<const RunRecord*>& runs) {
    QVector<ChartLine> lines;
    m_skipped = 0;
    for (const RunRecord* run : runs) {
        ChartLine scale{run->id, QStringLiteral("loss scale"), run->name, run->color,
                        {},      ChartLine::Style::Line,       false};
        ChartLine skipped{run->id, QStringLiteral("skipped"), run->name, run->color,
                          {},      ChartLine::Style::Markers, false};
        scale.points.reserve(run->steps.size());
        for (const StepRecord& s : run->steps) {
            const QPointF p(static_cast<double>(s.step), std::log2(s.loss_scale));
            scale.points.append(p);
            if (s.skipped) skipped.points.append(p);
        }
        m_skipped += skipped.points.size();
        lines.append(std::move(scale));
        lines.append(std::move(skipped));
    }
    QString now;
    if (!runs.isEmpty() && !runs.back()->steps.isEmpty())
        now = QStringLiteral(" %1").arg(runs.back()->steps.back().loss_scale, 0, 'g', 10);
    set_title(m_skipped == 0
                  ? tr("Loss scale%1 · no skipped steps").arg(now)
                  : tr("Loss scale%1 · %2 skipped steps")
                        .arg(now, QLocale().toString(static_cast<qlonglong>(m_skipped))));
    set_lines(std::move(lines));
}

} // namespace mantissa::ui
