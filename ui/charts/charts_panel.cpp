// ChartsPanel: composes the live charts in rows under the run legend (the learning rate's only
// while a shown run has a schedule) and feeds them from the RunStore, coalescing the store's
// change signals into at most one redraw per 40 ms.
#include "ui/charts/charts_panel.h"

#include <QAction>
#include <QHBoxLayout>
#include <QHash>
#include <QLocale>
#include <QSet>
#include <QSettings>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "ui/charts/chart_style.h"
#include "ui/charts/gradient_histogram_chart.h"
#include "ui/charts/loss_scale_chart.h"
#include "ui/charts/memory_chart.h"
#include "ui/charts/metric_chart.h"
#include "ui/charts/run_legend.h"
#include "ui/runs/run_store.h"
#include "ui/runs/run_visibility.h"

namespace mantissa::ui {

namespace {

constexpr int kRedrawIntervalMs = 40;
constexpr const char* kIgnoreOutliersKey = "charts/stepTimeIgnoresOutliers";

ChartLine line_of(const RunRecord& run, const QString& role, ChartLine::Style style, bool smooth,
                  const QVector<QPointF>& points) {
    ChartLine line;
    line.run_id = run.id;
    line.role = role;
    line.name = run_label(run); // the hover text and an exported legend tell runs apart
    line.color = run.color;
    line.style = style;
    line.smooth = smooth;
    line.points = points; // implicitly shared with the cache: no copy
    line.version = run_version(run);
    return line;
}

double median_of_tail(const QVector<StepRecord>& steps, double StepRecord::*field, int tail) {
    QVector<double> values;
    for (qsizetype i = std::max<qsizetype>(0, steps.size() - tail); i < steps.size(); ++i)
        if (std::isfinite(steps[i].*field)) values.append(steps[i].*field);
    if (values.isEmpty()) return 0;
    auto mid = values.begin() + values.size() / 2;
    std::nth_element(values.begin(), mid, values.end());
    return *mid;
}

// "Learning rate · run #3: 0.00412 (CosineDecay)": the newest shown run's current rate and its
// schedule, which the run's experiment names.
QString learning_rate_title(const QVector<const RunRecord*>& runs) {
    for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
        const RunRecord& run = **it;
        if (run.steps.isEmpty() || !(run.steps.back().learning_rate > 0)) continue;
        const ScheduleKind kind = run.experiment.optimizer.schedule.kind;
        return ChartsPanel::tr("Learning rate · run #%1: %2 (%3)")
            .arg(run.id)
            .arg(run.steps.back().learning_rate, 0, 'g', 3)
            .arg(kind == ScheduleKind::Constant ? ChartsPanel::tr("constant")
                                                : QString::fromLatin1(schedule_kind_name(kind)));
    }
    return ChartsPanel::tr("Learning rate");
}

} // namespace

ChartsPanel::ChartsPanel(RunStore* store, QWidget* parent) : QWidget(parent), m_store(store) {
    // Titles shed their details from the end when the chart is narrow: the line key first.
    m_loss = new MetricChart(tr("Loss · validation dashed, train solid"), tr("loss"), this);
    m_accuracy =
        new MetricChart(tr("Accuracy · validation dashed, train solid"), tr("accuracy (%)"), this);
    m_accuracy->set_y_limits(0, 100);
    m_step_time = new MetricChart(tr("Step time"), tr("ms per step"), this);
    m_ignore_outliers = new QAction(tr("Step Time Ignores &Outliers"), this);
    m_ignore_outliers->setCheckable(true);
    m_ignore_outliers->setToolTip(
        tr("Fit the step-time axis to each run's typical steps (its 5th to 95th percentile), so "
           "that a slow first step or a busy moment does not flatten the curves; Log y shows "
           "every step"));
    m_ignore_outliers->setChecked(
        QSettings().value(QLatin1String(kIgnoreOutliersKey), true).toBool());
    m_step_time->set_ignore_outliers(m_ignore_outliers->isChecked());
    connect(m_ignore_outliers, &QAction::toggled, this, [this](bool on) {
        QSettings().setValue(QLatin1String(kIgnoreOutliersKey), on);
        m_step_time->set_ignore_outliers(on);
        redraw();
    });
    m_loss_scale = new LossScaleChart(this);
    // Schedules span decades (OneCycle: max_lr / 25 / 1e4 at the end): log y from the start.
    m_learning_rate = new MetricChart(tr("Learning rate"), tr("rate"), this);
    m_learning_rate->set_smoothing_enabled(false);
    m_learning_rate->set_log_y(true);
    m_memory = new MemoryChart(this);
    m_histogram = new GradientHistogramChart; // placed by the window: see histogram_chart()
    m_scaling = new ScalingChart;             // placed by the window: see scaling_chart()

    m_legend = new RunLegend(this);

    // The legend (which colour is which run, for every chart) sits flush above the grid: on a
    // 1366x768 projector the charts keep all but a text line of their height.
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(4, 2, 4, 4);
    column->setSpacing(0);
    column->addWidget(m_legend);
    // Rows of charts: the learning-rate chart joins the middle row only while a shown run has
    // a schedule (a constant rate is a flat line), so the default view keeps its two columns.
    auto row = [](std::initializer_list<QWidget*> charts) {
        auto* layout = new QHBoxLayout;
        layout->setContentsMargins(0, 0, 0, 0);
        layout->setSpacing(6);
        for (QWidget* chart : charts) layout->addWidget(chart, 1);
        return layout;
    };
    auto* rows = new QVBoxLayout;
    rows->setContentsMargins(0, 0, 0, 0);
    rows->setSpacing(6);
    rows->addLayout(row({m_loss, m_accuracy}), 3);
    rows->addLayout(row({m_step_time, m_loss_scale, m_learning_rate}), 3);
    // the memory bars need a line per run, the legend and two title lines
    rows->addLayout(row({m_memory}), 4);
    m_learning_rate->hide();
    column->addLayout(rows, 1);

    m_redraw_timer = new QTimer(this);
    m_redraw_timer->setSingleShot(true);
    m_redraw_timer->setInterval(kRedrawIntervalMs);
    connect(m_redraw_timer, &QTimer::timeout, this, &ChartsPanel::redraw);
    if (m_store) {
        connect(m_store, &RunStore::run_added, this, &ChartsPanel::schedule_redraw);
        // A run reopened from the history brings its histograms along; a live run's arrive
        // through add_histograms() as it trains.
        connect(m_store, &RunStore::run_added, this, [this](int id) {
            const RunRecord* run = m_store->run(id);
            if (run && !run->histograms.isEmpty()) add_histograms(id, run->histograms);
        });
        connect(m_store, &RunStore::run_changed, this, &ChartsPanel::schedule_redraw);
        connect(m_store, &RunStore::run_removed, this, &ChartsPanel::schedule_redraw);
        connect(m_store, &RunStore::run_removed, m_histogram, &GradientHistogramChart::remove_run);
        connect(m_store, &RunStore::visibility_changed, this, &ChartsPanel::schedule_redraw);
        connect(m_store, &QAbstractItemModel::modelReset, this, &ChartsPanel::schedule_redraw);
    }
    redraw();
}

ChartsPanel::~ChartsPanel() {
    if (m_histogram && !m_histogram->parent()) delete m_histogram.data();
    if (m_scaling && !m_scaling->parent()) delete m_scaling.data();
}

void ChartsPanel::schedule_redraw() {
    if (!m_redraw_timer->isActive()) m_redraw_timer->start();
}

void ChartsPanel::redraw() {
    m_redraw_timer->stop();
    const QVector<const RunRecord*> runs =
        m_store ? visible_runs(m_store->runs()) : QVector<const RunRecord*>{};

    QSet<int> shown;
    for (const RunRecord* run : runs) shown.insert(run->id);
    m_lines.retain(shown);

    QVector<ChartLine> loss, accuracy, step_time, learning_rate;
    for (const RunRecord* run : runs) {
        const RunLines& points = m_lines.lines(*run);
        using Style = ChartLine::Style;
        loss.append(line_of(*run, tr("train loss"), Style::Line, true, points.loss));
        loss.append(
            line_of(*run, tr("validation loss"), Style::LineWithMarkers, false, points.val_loss));
        accuracy.append(line_of(*run, tr("train accuracy"), Style::Line, true, points.accuracy));
        accuracy.append(line_of(*run, tr("validation accuracy"), Style::LineWithMarkers, false,
                                points.val_accuracy));
        step_time.append(line_of(*run, tr("ms per step"), Style::Line, true, points.step_ms));
        learning_rate.append(
            line_of(*run, tr("learning rate"), Style::Line, false, points.learning_rate));
    }
    m_loss->set_lines(std::move(loss));
    m_accuracy->set_lines(std::move(accuracy));
    m_step_time->set_lines(std::move(step_time));

    QString step_title = tr("Step time");
    for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
        const RunRecord& run = **it;
        if (run.steps.isEmpty()) continue;
        const double ms = median_of_tail(run.steps, &StepRecord::step_ms, 100);
        const double rate = median_of_tail(run.steps, &StepRecord::samples_per_s, 100);
        step_title = tr("Step time · run #%1: %2 ms, %3 samples/s")
                         .arg(run.id)
                         .arg(ms, 0, 'f', ms < 10 ? 2 : 1)
                         .arg(QLocale().toString(rate, 'f', 0));
        break;
    }
    if (const int off = m_step_time->points_off_the_axis(); off > 0)
        step_title +=
            off == 1 ? tr(" · 1 step off the scale") : tr(" · %1 steps off the scale").arg(off);
    m_step_time->set_title(step_title);
    m_learning_rate->set_title(learning_rate_title(runs));
    // Shown before its lines arrive: a hidden chart has no size to fit its axes to.
    const bool scheduled = std::any_of(runs.begin(), runs.end(), [](const RunRecord* run) {
        return run->experiment.optimizer.schedule.kind != ScheduleKind::Constant;
    });
    m_learning_rate->setVisible(scheduled);
    m_learning_rate->set_lines(scheduled ? std::move(learning_rate) : QVector<ChartLine>{});
    m_legend->show_runs(runs);
    m_loss_scale->show_runs(runs, m_lines);
    m_memory->show_runs(runs);
    if (m_scaling) m_scaling->show_runs(runs);
}

void ChartsPanel::fit_to_visible() {
    for (MetricChart* c : {m_loss, m_accuracy, m_step_time, m_learning_rate,
                           static_cast<MetricChart*>(m_loss_scale)})
        c->reset_zoom();
    redraw();
}

void ChartsPanel::add_histograms(int run_id, const QVector<GradientHistogram>& histograms) {
    const RunRecord* run = m_store ? m_store->run(run_id) : nullptr;
    m_histogram->add_histograms(run_id, run ? run->name : QStringLiteral("run %1").arg(run_id),
                                run ? run->color : palette().color(QPalette::Highlight),
                                histograms);
}

void ChartsPanel::set_presentation(bool on) {
    m_presentation = on;
    const double font_scale = on ? 1.4 : 1.0, line_scale = on ? 1.75 : 1.0;
    for (MetricChart* c : {m_loss, m_accuracy, m_step_time, m_learning_rate,
                           static_cast<MetricChart*>(m_loss_scale)})
        c->set_presentation_scale(font_scale, line_scale);
    apply_chart_fonts(m_memory->chart(), font_scale);
    m_legend->set_font_scale(font_scale);
    if (m_scaling) m_scaling->set_presentation_scale(font_scale, line_scale);
}

MetricChart* ChartsPanel::chart(const QString& name) const {
    if (name == QLatin1String("loss")) return m_loss;
    if (name == QLatin1String("accuracy")) return m_accuracy;
    if (name == QLatin1String("step_time")) return m_step_time;
    if (name == QLatin1String("learning_rate")) return m_learning_rate;
    if (name == QLatin1String("loss_scale")) return m_loss_scale;
    return nullptr;
}

QChart* ChartsPanel::qchart(const QString& name) const {
    if (name == QLatin1String("memory")) return m_memory->chart();
    const MetricChart* c = chart(name);
    return c ? c->chart() : nullptr;
}

int ChartsPanel::drawn_points(const QString& chart_name, int run_id) const {
    if (chart_name == QLatin1String("memory")) return m_memory->drawn_points(run_id);
    const MetricChart* c = chart(chart_name);
    return c ? c->drawn_points(run_id) : 0;
}

} // namespace mantissa::ui
