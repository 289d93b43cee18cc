// LossScaleChart: shows how dynamic loss scaling halves the scale on overflow and grows it back,
// one line per run on a base-2 log axis, with a scatter marker on each skipped step.
#include "ui/charts/loss_scale_chart.h"

#include <QLocale>

#include "ui/run_record.h"

namespace mantissa::ui {

LossScaleChart::LossScaleChart(QWidget* parent)
    : MetricChart(tr("Loss scale"), tr("loss scale (log₂)"), parent) {
    set_smoothing_enabled(false);
    set_fixed_log_base(2);
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
            const QPointF p(static_cast<double>(s.step), s.loss_scale);
            scale.points.append(p);
            if (s.skipped) skipped.points.append(p);
        }
        m_skipped += skipped.points.size();
        lines.append(std::move(scale));
        lines.append(std::move(skipped));
    }
    set_title(m_skipped == 0 ? tr("Loss scale · no skipped steps")
                             : tr("Loss scale · %1 skipped steps")
                                   .arg(QLocale().toString(static_cast<qlonglong>(m_skipped))));
    set_lines(std::move(lines));
}

} // namespace mantissa::ui
