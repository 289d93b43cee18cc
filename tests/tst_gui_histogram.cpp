// The gradient histogram chart, offscreen: after a short training in the main window it shows
// bars and the float16 fractions; the unscaled view moves the bars by exactly log2(loss scale).
#include <QSlider>
#include <QTest>

#include "core/backend/histogram.h"
#include "core/train/experiment.h"
#include "isolated_app_dirs.h"
#include "ui/charts/charts_panel.h"
#include "ui/charts/gradient_histogram_chart.h"
#include "ui/runs/run_store.h"
#include "ui/training/training_controller.h"
#include "ui/window/main_window.h"

using namespace mantissa;
using namespace mantissa::ui;

namespace {

// One layer whose activation gradients sit at 2^exponent (as computed) and weights at 2^0.
GradientHistogram histogram_at(int exponent, double scale, std::int64_t step = 1) {
    GradientHistogram h;
    h.step = step;
    h.loss_scale = scale;
    LayerGradientHistogram layer;
    layer.layer = "dense_1";
    layer.has_weights = true;
    layer.activation.bins[static_cast<std::size_t>(1 + exponent - kHistogramMinExp)] = 100;
    layer.weight.bins[static_cast<std::size_t>(1 - kHistogramMinExp)] = 10;
    h.layers.push_back(layer);
    h.all_activation = layer.activation;
    h.all_weight = layer.weight;
    return h;
}

} // namespace

class TestGuiHistogram : public QObject {
    Q_OBJECT

    IsolatedAppDirs m_dirs; // no runs or recent files from elsewhere

private slots:
    void initTestCase() { Q_INIT_RESOURCE(resources); }

    void emptyChartSaysWhatWillAppear() {
        GradientHistogramChart chart;
        QCOMPARE(chart.bar_count(), 0);
        QVERIFY(chart.fractions_text().contains("appear here"));
        QVERIFY(chart.shown_histogram() == nullptr);
    }

    void unscaledViewMovesByTheLossScale() {
        GradientHistogramChart chart;
        chart.resize(600, 300);
        // Computed at 2^-12 with a scale of 2^15: without scaling they would sit at 2^-27.
        chart.add_histograms(7, "run", Qt::blue, {histogram_at(-12, 32768.0)});
        QCOMPARE(chart.shown_run(), 7);
        QCOMPARE(chart.bar_count(), 1);
        QCOMPARE(chart.fractions().underflow, 0.0);
        QVERIFY(chart.fractions_text().contains("0% underflow"));
        chart.set_unscaled(true);
        QCOMPARE(chart.fractions().underflow, 1.0);
        QVERIFY2(chart.fractions_text().contains("100% underflow"),
                 qPrintable(chart.fractions_text()));
        QVERIFY(chart.fractions_text().contains("unscaled"));
        chart.set_weights(true);
        QCOMPARE(chart.fractions().underflow, 0.0); // 2^0 / 2^15 = 2^-15: subnormal
        QCOMPARE(chart.fractions().subnormal, 1.0);
    }

    void layerSelectorAndHistory() {
        GradientHistogramChart chart;
        chart.add_histograms(1, "a", Qt::red,
                             {histogram_at(-3, 1.0, 1), histogram_at(-30, 1.0, 51)});
        QCOMPARE(chart.shown_histogram()->step, std::int64_t{51}); // follows the newest
        QCOMPARE(chart.fractions().underflow, 1.0);
        chart.set_layer("dense_1");
        QCOMPARE(chart.fractions().total, std::int64_t{100});
        chart.add_histograms(2, "b", Qt::green, {histogram_at(-3, 1.0)});
        QCOMPARE(chart.shown_run(), 2); // a new run is shown
        chart.show_run(1);
        QCOMPARE(chart.shown_run(), 1);
        chart.remove_run(1);
        QCOMPARE(chart.shown_run(), 2);
    }

    // A lesson pins the step its text reads (issue 28: lesson 3 says "at step 1", the tab showed
    // step 276): every run shows it, also as new histograms arrive, until the slider moves.
    void lessonPinsTheStepItsTextReads() {
        GradientHistogramChart chart;
        chart.pin_step(1);
        chart.add_histograms(1, "no scaling", Qt::red,
                             {histogram_at(-3, 1.0, 1), histogram_at(-30, 1.0, 26)});
        QCOMPARE(chart.shown_histogram()->step, std::int64_t{1});
        chart.add_histograms(1, "no scaling", Qt::red, {histogram_at(-30, 1.0, 51)});
        QCOMPARE(chart.shown_histogram()->step, std::int64_t{1}); // still the lesson's step
        chart.pin_step(30);                                       // the last one at or before it
        QCOMPARE(chart.shown_histogram()->step, std::int64_t{26});
        chart.add_histograms(2, "scaled", Qt::blue,
                             {histogram_at(-3, 1.0, 1), histogram_at(-3, 1.0, 26)});
        QCOMPARE(chart.shown_run(), 2);
        QCOMPARE(chart.shown_histogram()->step, std::int64_t{26});
        auto* slider = chart.findChild<QSlider*>();
        QVERIFY(slider);
        slider->setValue(0); // the user's choice unpins
        QCOMPARE(chart.shown_histogram()->step, std::int64_t{1});
        chart.add_histograms(2, "scaled", Qt::blue, {histogram_at(-3, 1.0, 51)});
        QCOMPARE(chart.shown_histogram()->step, std::int64_t{1}); // stays where the user put it
        chart.pin_step(0); // leaving the lesson: the newest again
        QCOMPARE(chart.shown_histogram()->step, std::int64_t{51});
    }

    void chartShowsBarsAndFractionsAfterTraining() {
        MainWindow window;
        window.resize(1500, 950);
        Experiment e = window.current_experiment();
        e.policy = "mixed_float16";
        e.max_steps = 12;
        e.histogram_every = 5;
        e.device = "cpu";
        window.set_experiment(e);
        window.train();
        QTRY_VERIFY_WITH_TIMEOUT(!window.controller()->is_running(), 120000);
        QTest::qWait(100); // the last drain
        GradientHistogramChart* chart = window.charts()->histogram_chart();
        QVERIFY(chart->shown_histogram() != nullptr);
        QCOMPARE(chart->shown_histogram()->step, std::int64_t{11}); // steps 1, 6, 11
        QCOMPARE(chart->shown_histogram()->loss_scale, 32768.0);
        QVERIFY(chart->bar_count() > 3);
        const QString text = chart->fractions_text();
        for (const char* word : {"underflow", "subnormal", "overflow", "exact zeros"})
            QVERIFY2(text.contains(word), qPrintable(text));
        // Unscaled, the activation gradients of mlp-small fall partly below 2^-14 (measured:
        // about 20% subnormal at step 1), as computed at 2^15 almost none do.
        const double scaled = chart->fractions().subnormal + chart->fractions().underflow;
        chart->set_unscaled(true);
        const double unscaled = chart->fractions().subnormal + chart->fractions().underflow;
        QVERIFY2(unscaled > scaled + 0.05,
                 qPrintable(QString("%1 vs %2").arg(unscaled).arg(scaled)));
        chart->set_layer("dense_2");
        chart->set_weights(true);
        QVERIFY(chart->bar_count() > 0);
    }
};

QTEST_MAIN(TestGuiHistogram)
#include "tst_gui_histogram.moc"
