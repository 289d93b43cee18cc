// GUI tests of the live charts: min/max decimation keeps the extremes and bounds the points, a
// 100,000-step run redraws fast with few points, skipped steps get markers, hidden runs vanish.
#include <QChart>
#include <QDir>
#include <QElapsedTimer>
#include <QLogValueAxis>
#include <QPixmap>
#include <QValueAxis>
#include <QtTest>
#include <cmath>
#include <limits>

#include "tests/isolated_app_dirs.h"
#include "ui/charts/axis_window.h"
#include "ui/charts/chart_export_dialog.h"
#include "ui/charts/charts_panel.h"
#include "ui/charts/decimate.h"
#include "ui/charts/loss_scale_chart.h"
#include "ui/charts/metric_chart.h"
#include "ui/charts/run_legend.h"
#include "ui/runs/run_store.h"
#include "ui/window/dialog_folder.h"
#include "ui/window/theme.h"

using namespace mantissa;
using namespace mantissa::ui;

namespace {

// A synthetic run: a decaying, noisy loss; a loss scale that grows every 2000 good steps and halves
// on each skipped step (every `skip_every` steps); constant memory by category.
QVector<StepRecord> synthetic_steps(std::int64_t count, std::int64_t steps_per_epoch,
                                    std::int64_t skip_every, double speed = 1.0) {
    QVector<StepRecord> steps;
    steps.reserve(count);
    double scale = 32768;
    std::int64_t good = 0;
    for (std::int64_t i = 1; i <= count; ++i) {
        StepRecord s;
        s.step = i;
        s.epoch = static_cast<int>((i - 1) / steps_per_epoch) + 1;
        const double noise = 0.15 * std::sin(i * 12.9898) * std::cos(i * 0.037);
        s.loss = 2.3 * std::exp(-static_cast<double>(i) / (8000.0 * speed)) + 0.1 + noise * 0.5;
        s.accuracy = std::clamp(1.0 - s.loss / 2.5, 0.0, 1.0);
        s.step_ms = 4.0 + 0.8 * std::sin(i * 0.01) + (i % 997 == 0 ? 6.0 : 0.0);
        s.samples_per_s = 128 * 1000.0 / s.step_ms;
        s.skipped = skip_every > 0 && i % skip_every == 0;
        s.loss_scale = scale;
        if (s.skipped) {
            scale /= 2;
            good = 0;
        } else if (++good == 2000 && scale < 131072) {
            scale *= 2;
            good = 0;
        }
        if (good == 2000) good = 0;
        s.good_steps = good;
        s.memory[MemCategory::Weights] = 210'000;
        s.memory[MemCategory::Master] = 420'000;
        s.memory[MemCategory::Activations] = 3'200'000;
        s.memory[MemCategory::Gradients] = 1'100'000;
        s.memory[MemCategory::Optimizer] = 840'000;
        s.memory[MemCategory::Workspace] = 600'000;
        s.memory[MemCategory::Data] = 54'880'000;
        s.device_mem_total = std::size_t{80} << 30;
        s.device_mem_used = std::size_t{700} << 20;
        steps.append(s);
    }
    return steps;
}

void add_epochs(RunStore& store, int id, int epochs, double speed = 1.0) {
    for (int e = 1; e <= epochs; ++e) {
        EpochRecord r;
        r.epoch = e;
        r.val_loss = 2.0 * std::exp(-e / (2.0 * speed)) + 0.08;
        r.val_accuracy = std::clamp(1.0 - r.val_loss / 2.4, 0.0, 1.0);
        store.append_epoch(id, r);
    }
}

int add_synthetic_run(RunStore& store, const std::string& name, const std::string& policy,
                      std::int64_t steps, std::int64_t skip_every, double speed = 1.0) {
    Experiment experiment;
    experiment.name = name;
    experiment.policy = policy;
    const int id = store.add_run(experiment);
    const std::int64_t per_epoch = steps / 10;
    store.set_started(id, QStringLiteral("CPU"), {}, per_epoch);
    store.append_steps(id, synthetic_steps(steps, per_epoch, skip_every, speed));
    add_epochs(store, id, 10, speed);
    return id;
}

} // namespace

class TestGuiCharts : public QObject {
    Q_OBJECT

private slots:
    void decimation_keeps_extremes_and_endpoints();
    void decimation_leaves_short_series_alone();
    void smoothing_is_debiased_ema();
    void hundred_thousand_steps_redraw_fast_and_bounded();
    void skipped_steps_get_markers();
    void hiding_a_run_removes_its_series();
    void legend_names_each_visible_run_in_its_colour();
    void legend_says_a_shared_policy_once();
    void learning_rate_chart_shows_scheduled_runs();
    void store_signals_are_coalesced();
    void incremental_smoothing_equals_full();
    void charts_follow_a_dark_palette();
    void axis_windows_stay_labelable();
    void near_constant_series_gets_readable_ticks();
    void bulk_band_leaves_the_outliers_out();
    void step_time_axis_ignores_a_slow_first_step();
    void chart_export_proposes_the_dialog_folder();
};

void TestGuiCharts::decimation_keeps_extremes_and_endpoints() {
    QVector<QPointF> points;
    for (int i = 0; i < 10'000; ++i) points.append(QPointF(i, std::sin(i * 0.01)));
    points[1234].setY(100);  // a spike
    points[5678].setY(-100); // a dip
    const int buckets = 100;
    const QVector<QPointF> out = decimate_min_max(points, buckets);
    QVERIFY(out.size() <= 2 * buckets + 2);
    QVERIFY(out.size() >= buckets);
    QCOMPARE(out.front(), points.front());
    QCOMPARE(out.back(), points.back());
    QVERIFY(out.contains(points[1234]));
    QVERIFY(out.contains(points[5678]));
    for (qsizetype i = 1; i < out.size(); ++i) QVERIFY(out[i - 1].x() < out[i].x());
    // Every kept point is one of the input points.
    for (const QPointF& p : out) QCOMPARE(points[static_cast<int>(p.x())], p);
}

void TestGuiCharts::decimation_leaves_short_series_alone() {
    const QVector<QPointF> points = {{1, 3}, {2, 1}, {3, 4}, {4, 1}, {5, 5}};
    QCOMPARE(decimate_min_max(points, 10), points);
    QVERIFY(decimate_min_max({}, 10).isEmpty());
}

void TestGuiCharts::smoothing_is_debiased_ema() {
    QVector<QPointF> constant;
    for (int i = 0; i < 50; ++i) constant.append(QPointF(i, 3.0));
    for (const QPointF& p : smooth_ema(constant, 0.9)) QVERIFY(qFuzzyCompare(p.y(), 3.0));
    const QVector<QPointF> steps = {{0, 0}, {1, 10}};
    QCOMPARE(smooth_ema(steps, 0), steps);
    // Debiased: the first value is itself; the second is (0.5*0*0.5 + 0.5*10) / (1 - 0.25).
    const QVector<QPointF> s = smooth_ema(steps, 0.5);
    QCOMPARE(s[0].y(), 0.0);
    QVERIFY(qFuzzyCompare(s[1].y(), 5.0 / 0.75));
}

void TestGuiCharts::hundred_thousand_steps_redraw_fast_and_bounded() {
    RunStore store;
    QElapsedTimer fill;
    fill.start();
    const int id = add_synthetic_run(store, "mlp-small", "mixed_float16", 100'000, 5000);
    const int other = add_synthetic_run(store, "mlp-small", "float32", 60'000, 0, 1.6);
    qInfo("filled 160,000 steps in %lld ms", static_cast<long long>(fill.elapsed()));

    ChartsPanel panel(&store);
    panel.resize(1400, 1000);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QTest::qWait(100); // layout settles; the coalesced redraw runs

    QElapsedTimer timer;
    timer.start();
    panel.redraw();
    const qint64 ms = timer.elapsed();
    qInfo("redraw of 100,000 + 60,000 steps (5 charts): %lld ms", static_cast<long long>(ms));
    QVERIFY2(ms < 1000, qPrintable(QStringLiteral("redraw took %1 ms").arg(ms)));
    timer.restart();
    panel.redraw();
    qInfo("second redraw: %lld ms", static_cast<long long>(timer.elapsed()));

    // What a live run costs per 40 ms tick: 25 new steps on the 100,000-step run, then a redraw.
    // Printed for bench/RESULTS.md, not asserted (timings belong in benchmarks).
    QVector<qint64> tick_us;
    const QVector<StepRecord> more = synthetic_steps(100'250, 10'000, 5000);
    for (int tick = 0; tick < 10; ++tick) {
        store.append_steps(id, more.mid(100'000 + tick * 25, 25));
        timer.restart();
        panel.redraw();
        tick_us.append(timer.nsecsElapsed() / 1000);
    }
    QStringList in_order;
    for (qint64 us : tick_us) in_order.append(QString::number(us / 1000.0, 'f', 1));
    qInfo("live ticks in order (ms): %s", qPrintable(in_order.join(QLatin1Char(' '))));
    std::sort(tick_us.begin(), tick_us.end());
    qInfo("live redraw of a growing 100,000-step run: median %lld us, max %lld us",
          static_cast<long long>(tick_us[tick_us.size() / 2]),
          static_cast<long long>(tick_us.back()));
    QCOMPARE(store.runs().front().steps.size(), 100'250);

    // At most ~4 points per pixel column (raw + smoothed, min and max each) plus endpoints.
    const int columns = panel.width();
    for (const char* chart : {"loss", "accuracy", "step_time", "loss_scale"}) {
        const int points = panel.drawn_points(QString::fromLatin1(chart), id);
        qInfo("%s: %d points drawn for 100,000 steps", chart, points);
        QVERIFY2(points > 50, chart);
        QVERIFY2(points <= 4 * columns + 40, chart);
    }
    QVERIFY(panel.drawn_points(QStringLiteral("loss"), other) > 50);
    // The model's six categories; the resident dataset is a bar of its own, off by default.
    QCOMPARE(panel.drawn_points(QStringLiteral("memory"), id), 6);
    QCOMPARE(panel.drawn_points(QStringLiteral("nonsense"), id), 0);

    // The axes follow the data: all 100,000 steps in view, nothing taken for a user's zoom.
    MetricChart* loss = panel.chart(QStringLiteral("loss"));
    QVERIFY(loss);
    QVERIFY(!loss->zoomed());
    const auto x_axes = loss->chart()->axes(Qt::Horizontal);
    QCOMPARE(x_axes.size(), 1);
    auto* x = qobject_cast<QValueAxis*>(x_axes.front());
    QVERIFY(x);
    QVERIFY(x->min() <= 1 && x->max() >= 100'000);

    // Zooming in re-decimates the window: still bounded, and the reset restores the full range.
    loss->chart()->zoomIn(QRectF(loss->chart()->plotArea().center(), QSizeF(50, 50)));
    QVERIFY(loss->zoomed());
    QTRY_VERIFY(x->max() - x->min() < 50'000);
    QTest::qWait(80);
    QVERIFY(panel.drawn_points(QStringLiteral("loss"), id) <= 4 * columns + 40);
    loss->reset_zoom();
    QVERIFY(!loss->zoomed());
    QVERIFY(x->min() <= 1 && x->max() >= 100'000);

    // Smoothing and log-y change what is drawn but keep it bounded.
    loss->set_smoothing(0);
    QVERIFY(panel.drawn_points(QStringLiteral("loss"), id) <= 2 * columns + 40);
    loss->set_smoothing(0.9);
    loss->set_log_y(true);
    QVERIFY(panel.drawn_points(QStringLiteral("loss"), id) > 50);
    loss->set_log_y(false);
    loss->set_smoothing(0.6);

    const QByteArray shot = qgetenv("MANTISSA_CHARTS_PNG");
    if (!shot.isEmpty()) QVERIFY(panel.grab().save(QString::fromLocal8Bit(shot)));
}

void TestGuiCharts::skipped_steps_get_markers() {
    RunStore store;
    const int id = add_synthetic_run(store, "cnn", "mixed_float16", 20'000, 1000);
    ChartsPanel panel(&store);
    panel.resize(1200, 900);
    panel.redraw();
    MetricChart* chart = panel.chart(QStringLiteral("loss_scale"));
    QVERIFY(chart);
    QCOMPARE(chart->drawn_points(id, QStringLiteral("skipped")), 20);
    auto* loss_scale = qobject_cast<LossScaleChart*>(chart);
    QVERIFY(loss_scale);
    QCOMPARE(loss_scale->skipped_steps(), std::int64_t{20});
    QVERIFY2(chart->chart()->title().contains(QStringLiteral("20")),
             qPrintable(chart->chart()->title()));
    // Issue 28: two runs that each skipped 20 steps are not "40 skipped steps" under one run's
    // scale: the title names how many runs skipped, the tooltip each run's own scale and count.
    const int second = add_synthetic_run(store, "cnn", "mixed_float16", 20'000, 1000);
    panel.redraw();
    QCOMPARE(loss_scale->skipped_steps(), std::int64_t{40});
    const QString both = static_cast<MetricChart*>(loss_scale)->full_title();
    QVERIFY2(both.contains("2 of 2 runs") && !both.contains("40"), qPrintable(both));
    QVERIFY2(loss_scale->toolTip().count("20 skipped") == 2, qPrintable(loss_scale->toolTip()));
    store.remove_run(second);
    panel.redraw();

    // One more skipped step arrives: a marker and the count follow; hovering it says where the
    // step overflowed (the skipped-step ledger, issue 27).
    StepRecord s = store.run(id)->steps.back();
    s.step += 1;
    s.skipped = true;
    s.loss_scale = 32768;
    s.overflowed = {"dense_2/kernel", "dense_1/kernel"};
    store.append_steps(id, {s});
    QTRY_COMPARE(chart->drawn_points(id, QStringLiteral("skipped")), 21);
    QVERIFY(chart->chart()->title().contains(QStringLiteral("21")));
    const QString hover = chart->hover_text(id, QStringLiteral("skipped"), double(s.step));
    QVERIFY2(hover.contains(QString("step %1 skipped: dense_2/kernel's gradient overflowed "
                                    "first (scale 32768; 2 gradients held inf or NaN)")
                                .arg(s.step)),
             qPrintable(hover));
}

void TestGuiCharts::hiding_a_run_removes_its_series() {
    RunStore store;
    const int a = add_synthetic_run(store, "a", "float32", 5000, 0);
    const int b = add_synthetic_run(store, "b", "mixed_float16", 5000, 500);
    ChartsPanel panel(&store);
    panel.resize(1200, 900);
    panel.redraw();
    MetricChart* loss = panel.chart(QStringLiteral("loss"));
    const int series_both = static_cast<int>(loss->chart()->series().size());
    QVERIFY(panel.drawn_points(QStringLiteral("loss"), a) > 0);
    QVERIFY(panel.drawn_points(QStringLiteral("loss"), b) > 0);

    // Unchecking the run's checkbox in the runs list.
    QVERIFY(store.setData(store.index(0, RunStore::ColName), Qt::Unchecked, Qt::CheckStateRole));
    QTRY_COMPARE(panel.drawn_points(QStringLiteral("loss"), a), 0);
    QCOMPARE(panel.drawn_points(QStringLiteral("loss_scale"), a), 0);
    QCOMPARE(panel.drawn_points(QStringLiteral("memory"), a), 0);
    QVERIFY(panel.drawn_points(QStringLiteral("loss"), b) > 0);
    QVERIFY(loss->chart()->series().size() < series_both);

    // visible = false plus visibility_changed, as another view might do it.
    store.run(b)->visible = false;
    emit store.visibility_changed();
    QTRY_COMPARE(panel.drawn_points(QStringLiteral("loss"), b), 0);
    QCOMPARE(loss->chart()->series().size(), 0);

    // Checked again: back.
    QVERIFY(store.setData(store.index(0, RunStore::ColName), Qt::Checked, Qt::CheckStateRole));
    QTRY_VERIFY(panel.drawn_points(QStringLiteral("loss"), a) > 0);

    store.remove_run(a);
    QTRY_COMPARE(panel.drawn_points(QStringLiteral("loss"), a), 0);
}

// Issue 28: every curve says its run. Two runs of the same name are told apart by their numbers;
// a hidden run leaves the legend with its curves; the legend grows with Presentation mode.
void TestGuiCharts::legend_names_each_visible_run_in_its_colour() {
    RunStore store;
    const int a = add_synthetic_run(store, "mlp-small", "float32", 400, 0);
    const int b = add_synthetic_run(store, "mlp-small", "mixed_float16", 400, 50);
    ChartsPanel panel(&store);
    panel.resize(1200, 900);
    panel.show();
    panel.redraw();
    RunLegend* legend = panel.legend();
    QVERIFY(legend->isVisible());
    const QStringList both = {QStringLiteral("#%1 %2").arg(a).arg(store.run(a)->name),
                              QStringLiteral("#%1 %2").arg(b).arg(store.run(b)->name)};
    QCOMPARE(legend->entries(), both);
    QVERIFY(store.run(a)->color != store.run(b)->color);
    for (int id : {a, b}) QVERIFY(legend->text().contains(store.run(id)->color.name()));

    QVERIFY(store.setData(store.index(0, RunStore::ColName), Qt::Unchecked, Qt::CheckStateRole));
    QTRY_COMPARE(legend->entries(), QStringList{both[1]});
    QVERIFY(!legend->text().contains(store.run(a)->color.name()));

    const qreal normal = legend->font().pointSizeF();
    panel.set_presentation(true);
    QVERIFY(legend->font().pointSizeF() > normal);

    store.run(b)->visible = false;
    emit store.visibility_changed();
    QTRY_VERIFY(!legend->isVisible()); // no runs shown: no legend
    store.run(a)->visible = store.run(b)->visible = true;
    emit store.visibility_changed();
    panel.set_presentation(false);

    // Six runs of a comparison on a narrow chart area (840 px in a 1366-px window beside the
    // editor, with a wider font):
    // the line cut "#6 mixed_float8" at the edge; the text shrinks until every entry shows.
    for (const char* policy : {"mixed_bfloat16", "mxfp8_e4m3", "nvfp4", "mixed_float8"})
        add_synthetic_run(store, "mlp-small", policy, 400, 0);
    panel.resize(600, 700);
    panel.redraw();
    QTRY_COMPARE(legend->entries().size(), 6);
    QTRY_VERIFY2(legend->fits(), qPrintable(QString("%1 px of text in %2 px")
                                                .arg(legend->text_width())
                                                .arg(legend->contentsRect().width())));
    QVERIFY(legend->font().pointSizeF() < normal);
}

// Lesson 11's four runs are named by what they vary and share their policy ("float32 BN, Adam ·
// mixed_float16"): the legend says the policy once, so all four fit beside the Lessons panel
// (with the policy in each entry it showed three, the third cut).
void TestGuiCharts::legend_says_a_shared_policy_once() {
    RunStore store;
    for (const char* label :
         {"float32 BN, Adam", "float16 BN, Adam", "float32 BN, SGD", "float16 BN, SGD"})
        add_synthetic_run(store, label, "mixed_float16", 300, 0);
    ChartsPanel panel(&store);
    panel.resize(620, 700);
    panel.show();
    panel.redraw();
    RunLegend* legend = panel.legend();
    QTRY_COMPARE(legend->entries().size(), 4);
    QCOMPARE(legend->text().count(QStringLiteral("mixed_float16")), 1);
    QVERIFY(legend->text().contains(QStringLiteral("float16&nbsp;BN,&nbsp;SGD")));
    QTRY_VERIFY2(legend->fits(), qPrintable(QString("%1 px of text in %2 px")
                                                .arg(legend->text_width())
                                                .arg(legend->contentsRect().width())));
    // The tooltip still names every run whole.
    QVERIFY(legend->toolTip().contains(QStringLiteral("SGD · mixed_float16")));
}

// Issue 29: the rate each step used, on a log axis, while a shown run has a schedule; a constant
// rate (a flat line) leaves the middle row to the step time and the loss scale.
void TestGuiCharts::learning_rate_chart_shows_scheduled_runs() {
    RunStore store;
    const int plain = add_synthetic_run(store, "mlp-small", "float32", 300, 0);
    ChartsPanel panel(&store);
    panel.resize(1200, 900);
    panel.show();
    panel.redraw();
    MetricChart* rate = panel.chart(QStringLiteral("learning_rate"));
    QVERIFY(rate);
    QVERIFY(!rate->isVisible());

    Experiment scheduled;
    scheduled.name = "mnist-fast";
    scheduled.optimizer.schedule = default_schedule(ScheduleKind::OneCycle);
    scheduled.optimizer.schedule.total_steps = 300;
    scheduled.optimizer.learning_rate = 0.01;
    const int id = store.add_run(scheduled);
    store.set_started(id, QStringLiteral("CPU"), {}, 300);
    QVector<StepRecord> steps = synthetic_steps(300, 300, 0);
    for (StepRecord& s : steps)
        s.learning_rate = learning_rate_at(scheduled.optimizer, s.step - 1, 0);
    store.append_steps(id, steps);
    QTRY_VERIFY(rate->isVisible());
    QVERIFY(rate->log_y());
    QTRY_VERIFY(panel.drawn_points(QStringLiteral("learning_rate"), id) > 0);
    QCOMPARE(panel.drawn_points(QStringLiteral("learning_rate"), plain), 0); // no rates recorded
    QVERIFY(rate->full_title().contains(QStringLiteral("OneCycle")));

    store.run(id)->visible = false;
    emit store.visibility_changed();
    QTRY_VERIFY(!rate->isVisible());
}

void TestGuiCharts::store_signals_are_coalesced() {
    RunStore store;
    Experiment experiment;
    const int id = store.add_run(experiment);
    ChartsPanel panel(&store);
    panel.resize(1000, 800);
    const QVector<StepRecord> steps = synthetic_steps(2000, 200, 0);
    // 100 batches arrive within one redraw interval: the charts catch up once, soon after.
    for (int i = 0; i < 100; ++i) store.append_steps(id, steps.mid(i * 20, 20));
    QCOMPARE(panel.drawn_points(QStringLiteral("loss"), id), 0); // not redrawn synchronously
    QTRY_VERIFY(panel.drawn_points(QStringLiteral("loss"), id) > 0);
    QVERIFY(panel.drawn_points(QStringLiteral("step_time"), id) > 0);
}

void TestGuiCharts::incremental_smoothing_equals_full() {
    QVector<QPointF> points;
    for (int i = 0; i < 1000; ++i)
        points.append(QPointF(i, i == 500 ? std::nan("") : std::cos(i * 0.1) + i * 0.01));
    EmaState state;
    QVector<QPointF> grown;
    for (int n : {1, 7, 300, 501, 1000}) extend_ema(points.mid(0, n), 0.8, state, grown);
    const QVector<QPointF> full = smooth_ema(points, 0.8);
    auto same_curve = [](const QVector<QPointF>& a, const QVector<QPointF>& b) {
        if (a.size() != b.size()) return false;
        for (qsizetype i = 0; i < a.size(); ++i) // bit for bit; NaN passes through as NaN
            if (a[i].x() != b[i].x() ||
                (std::isnan(b[i].y()) ? !std::isnan(a[i].y()) : a[i].y() != b[i].y()))
                return false;
        return true;
    };
    QVERIFY(same_curve(grown, full));
    extend_ema(points, 0.5, state, grown); // a new weight starts over
    QVERIFY(same_curve(grown, smooth_ema(points, 0.5)));
}

void TestGuiCharts::charts_follow_a_dark_palette() {
    const QPalette light = QApplication::palette();
    MetricChart chart(QStringLiteral("loss"), QStringLiteral("loss"));
    QVERIFY(!is_dark(light));
    QVERIFY(chart.chart()->backgroundBrush().color().lightnessF() > 0.5);

    apply_theme(*qApp, ThemeChoice::Dark);
    QVERIFY(is_dark(QApplication::palette()));
    QTRY_VERIFY(chart.chart()->backgroundBrush().color().lightnessF() < 0.5);
    QVERIFY(chart.chart()->titleBrush().color().lightnessF() > 0.5); // light text on dark
    RunStore store;
    Experiment experiment;
    const int id = store.add_run(experiment);
    QCOMPARE(store.runs().front().id, id);
    QCOMPARE(store.runs().front().color, QColor(QStringLiteral("#56B4E9"))); // not the dark blue

    QApplication::setPalette(light);
    QTRY_VERIFY(chart.chart()->backgroundBrush().color().lightnessF() > 0.5);
}

// Every window has 1..12 whole ticks, contains the data and respects the metric's limits, even
// for data Qt Charts could never label at a naive step (constant, or constant up to rounding).
void TestGuiCharts::axis_windows_stay_labelable() {
    const double inf = std::numeric_limits<double>::infinity();
    struct Case {
        double y_min, y_max, floor, ceiling;
    };
    const Case cases[] = {
        {249.665, 249.665, -inf, inf},           // one step time
        {249.665, 249.665 + 1e-13, -inf, inf},   // raw and smoothed, rounding apart
        {2.302585, 2.3025851, -inf, inf},        // a loss that barely moves
        {0, 0, -inf, inf},                       // log2 of a loss scale of 1
        {-3.5, 2.0, -inf, inf},                  // crosses zero
        {-7e-9, -7e-9 + 1e-22, -inf, inf},       // tiny and negative
        {1e15, 1e15 + 1, -inf, inf},             // huge
        {97.5, 100, 0, 100},                     // accuracy near its ceiling
        {0.1, 2.4, -inf, inf},                   // an ordinary loss curve
        {std::nan(""), std::nan(""), -inf, inf}, // nothing drawn yet
    };
    for (const Case& c : cases) {
        const AxisWindow w = linear_window(c.y_min, c.y_max, c.floor, c.ceiling);
        const double ticks = (w.hi - w.lo) / w.step;
        QVERIFY2(
            ticks >= 0.99 && ticks <= 12.01,
            qPrintable(QStringLiteral("%1..%2 -> %3 ticks").arg(c.y_min).arg(c.y_max).arg(ticks)));
        QVERIFY(w.lo + w.step > w.lo); // a step Qt can add to the values
        QVERIFY(w.lo >= c.floor && w.hi <= c.ceiling);
        if (!std::isnan(c.y_min)) QVERIFY(w.lo <= c.y_min && w.hi >= c.y_max);
    }
    const AxisWindow step_time = linear_window(249.665, 249.665, -inf, inf);
    QCOMPARE(step_time.lo, 235.0); // about ±5% of the value, on whole ticks of 5
    QCOMPARE(step_time.hi, 265.0);
    const AxisWindow zero = linear_window(0, 0, -inf, inf);
    QCOMPARE(zero.lo, 0.0);
    QCOMPARE(zero.hi, 1.0);
}

// The CI hang: the first step of a run (one raw point and its smoothed twin, 1e-13 apart) once
// set a tick step of 1e-14 on an axis at 249.665, and Qt Charts labelled it forever.
void TestGuiCharts::near_constant_series_gets_readable_ticks() {
    MetricChart chart(QStringLiteral("Step time"), QStringLiteral("ms"));
    chart.resize(600, 400);
    chart.show();
    ChartLine line;
    line.run_id = 1;
    line.role = QStringLiteral("train");
    line.name = QStringLiteral("run");
    line.color = Qt::blue;
    line.smooth = true;
    line.points = {QPointF(1, 249.665), QPointF(2, 249.665 + 1e-13)};
    chart.set_smoothing(0.6);
    chart.set_lines({line});
    QApplication::processEvents(); // lays the chart out: a hang here is the bug
    QValueAxis* y = nullptr;
    for (QAbstractAxis* axis : chart.chart()->axes(Qt::Vertical))
        y = qobject_cast<QValueAxis*>(axis);
    QVERIFY(y);
    QVERIFY(y->min() <= 249.665 && y->max() >= 249.665);
    QVERIFY((y->max() - y->min()) / y->tickInterval() <= 12.01);
}

// The band an outlier-ignoring axis fits, against hand-computed percentiles: 96 typical steps
// 1.00, 1.01, ..., 1.95 ms and four of 200 ms. Rank h = 99 p, so the 5th percentile lies 0.95 of
// the way from 1.04 to 1.05 and the 95th 0.05 of the way from 1.94 to 1.95.
void TestGuiCharts::bulk_band_leaves_the_outliers_out() {
    std::vector<double> steps;
    for (int i = 0; i < 96; ++i) steps.push_back(1.0 + 0.01 * i);
    for (int i = 0; i < 4; ++i) steps.insert(steps.begin() + 25 * i, 200.0); // anywhere
    const double q05 = 1.0495, q95 = 1.9405, pad = 0.2 * (q95 - q05);
    const ValueBand band = bulk_band(steps);
    QVERIFY(!band.empty());
    QCOMPARE(band.lo, 1.0); // q05 - pad is below the smallest value: the band stops there
    QCOMPARE(band.hi, q95 + pad);
    // Nothing to leave out: the band is the values' own range.
    const ValueBand flat = bulk_band({3.0, 3.0, 3.0});
    QCOMPARE(flat.lo, 3.0);
    QCOMPARE(flat.hi, 3.0);
    // Non-finite values are not data; none at all is an empty band.
    const double inf = std::numeric_limits<double>::infinity();
    const ValueBand finite = bulk_band({std::nan(""), 2.0, inf, 4.0});
    QCOMPARE(finite.lo, 2.0);
    QCOMPARE(finite.hi, 4.0);
    QVERIFY(bulk_band({std::nan(""), -inf}).empty());
    QVERIFY(bulk_band({}).empty());
}

// A run whose first step took 500 ms (the engine setting up) and the rest about 1 ms: the step-time
// chart fits the typical steps and its title counts the one left off; unticked (View menu), or
// with log y, the axis shows every step again.
void TestGuiCharts::step_time_axis_ignores_a_slow_first_step() {
    IsolatedAppDirs dirs; // the View menu's choice is remembered in QSettings
    RunStore store;
    Experiment experiment;
    experiment.name = "warm-up";
    const int id = store.add_run(experiment);
    store.set_started(id, QStringLiteral("CPU"), {}, 200);
    QVector<StepRecord> steps = synthetic_steps(200, 200, 0);
    for (StepRecord& s : steps) s.step_ms = 1.0 + 0.05 * std::sin(s.step * 0.3);
    steps[0].step_ms = 500.0;
    store.append_steps(id, steps);
    ChartsPanel panel(&store);
    panel.resize(1000, 700);
    panel.show();
    panel.redraw();
    QApplication::processEvents();
    MetricChart* chart = panel.chart(QStringLiteral("step_time"));
    QVERIFY(panel.ignore_outliers_action()->isChecked()); // the default
    QVERIFY(chart->ignore_outliers());
    const auto y_axis = [&] {
        QValueAxis* y = nullptr;
        for (QAbstractAxis* axis : chart->chart()->axes(Qt::Vertical))
            if (axis->isVisible()) y = qobject_cast<QValueAxis*>(axis);
        return y;
    };
    QVERIFY(y_axis());
    QVERIFY2(y_axis()->max() < 2.0, qPrintable(QString::number(y_axis()->max())));
    QVERIFY(y_axis()->min() > 0.5);
    QCOMPARE(chart->points_off_the_axis(), 1);
    QVERIFY2(chart->full_title().endsWith(QStringLiteral(" · 1 step off the scale")),
             qPrintable(chart->full_title()));
    // The other charts keep every point in view.
    QVERIFY(!panel.chart(QStringLiteral("loss"))->ignore_outliers());
    // Log y fits every point even while outliers are ignored.
    chart->set_log_y(true);
    QApplication::processEvents();
    QCOMPARE(chart->points_off_the_axis(), 0);
    QLogValueAxis* log_y = nullptr;
    for (QAbstractAxis* axis : chart->chart()->axes(Qt::Vertical))
        if (axis->isVisible()) log_y = qobject_cast<QLogValueAxis*>(axis);
    QVERIFY(log_y);
    QVERIFY(log_y->max() >= 500.0);
    chart->set_log_y(false);
    QApplication::processEvents();
    QCOMPARE(chart->points_off_the_axis(), 1);

    panel.ignore_outliers_action()->setChecked(false);
    QApplication::processEvents();
    QVERIFY(!chart->ignore_outliers());
    QVERIFY(y_axis()->max() >= 500.0);
    QCOMPARE(chart->points_off_the_axis(), 0);
    QVERIFY(!chart->full_title().contains(QStringLiteral("off the scale")));
    // Remembered for the next window.
    ChartsPanel next(&store);
    QVERIFY(!next.ignore_outliers_action()->isChecked());
    QVERIFY(!next.chart(QStringLiteral("step_time"))->ignore_outliers());
    next.ignore_outliers_action()->setChecked(true); // the default again, whatever QSettings is
}

// Issue 28: Export Chart proposed a bare "loss.png", so the save dialog opened in whatever the
// working directory was; it proposes the folder the app's dialogs last used, as the others do.
void TestGuiCharts::chart_export_proposes_the_dialog_folder() {
    IsolatedAppDirs dirs;
    QTemporaryDir folder;
    QVERIFY(folder.isValid());
    mantissa::ui::remember_dialog_folder(folder.filePath("run.json"));
    RunStore store;
    ChartsPanel panel(&store);
    mantissa::ui::ChartExportDialog dialog(&panel);
    QCOMPARE(dialog.suggested_file(), QDir(folder.path()).filePath(dialog.chart_name() + ".png"));
}

QTEST_MAIN(TestGuiCharts)
#include "tst_gui_charts.moc"
