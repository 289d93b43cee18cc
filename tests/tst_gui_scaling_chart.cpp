// The Scaling tab, offscreen: a short real mxfp8_e4m3 run in the main window plots amax, the scale
// in use and the clipped and flushed shares per layer and role; switching the role changes the
// series; a float32 run explains why there is nothing to show; a run reopened from the history
// plots the same points from its metrics file.
#include <QAbstractItemModel>
#include <QComboBox>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

#include "isolated_app_dirs.h"
#include "tiny_experiment.h"
#include "ui/charts/charts_panel.h"
#include "ui/charts/scaling_chart.h"
#include "ui/runs/run_history.h"
#include "ui/runs/run_store.h"
#include "ui/training/training_controller.h"
#include "ui/window/main_window.h"

using namespace mantissa;
using namespace mantissa::ui;

namespace {

const RunRecord* run_named(const MainWindow& window, const std::string& name) {
    for (const RunRecord& run : window.run_store()->runs())
        if (run.experiment.name == name) return &run;
    return nullptr;
}

// Trains `e` in a fresh main window to the end.
void train(MainWindow& window, const Experiment& e) {
    QTRY_VERIFY(!window.run_history()->is_loading());
    window.set_experiment(e);
    window.train();
    QTRY_VERIFY_WITH_TIMEOUT(!window.controller()->is_running(), 120000);
    QTest::qWait(100); // the last drain
    window.charts()->redraw();
}

Experiment mxfp8_experiment() {
    Experiment e = tiny_experiment("scaling-mxfp8", 12);
    e.policy = "mxfp8_e4m3";
    e.quant_every = 5; // steps 1, 5 and 10 (or 6 and 11): a few points, fast
    return e;
}

} // namespace

// The roles mlp-small's second layer records under mxfp8: the three GEMM inputs and the three
// column-wise copies (X and dZ for dW, W for dX). The first computes no dX: it makes neither a
// row-wise dZ nor a column-wise W.
const QString kRoles[] = {"activation",        "weight",
                          "gradient",          "activation_columnwise",
                          "weight_columnwise", "gradient_columnwise"};

class TestGuiScalingChart : public QObject {
    Q_OBJECT

    IsolatedAppDirs m_dirs;
    QHash<QString, QVector<QPointF>> m_live; // the live run's points, by "role/series"

private slots:
    void initTestCase() { Q_INIT_RESOURCE(resources); }

    void emptyChartExplainsItself() {
        ScalingChart chart;
        QVERIFY(chart.empty_state());
        QVERIFY2(chart.empty_text().contains("mixed_float8"), qPrintable(chart.empty_text()));
        QCOMPARE(chart.drawn_points("amax"), 0);
    }

    void quantisedRunShowsPointsPerRole() {
        MainWindow window;
        window.resize(1366, 768);
        window.show();
        train(window, mxfp8_experiment());
        const RunRecord* run = run_named(window, "scaling-mxfp8");
        QVERIFY(run);
        QCOMPARE(run->state, RunState::Completed);
        QVERIFY2(run->quant.size() >= 2, qPrintable(QString::number(run->quant.size())));
        QCOMPARE(run->quant.front().step, std::int64_t(1));

        ScalingChart* chart = window.charts()->scaling_chart();
        QCOMPARE(chart->shown_run(), run->id);
        QVERIFY(!chart->empty_state());
        QVERIFY(!chart->layer().isEmpty());
        const auto* layers = chart->findChild<QComboBox*>("scaling_layer");
        QVERIFY(layers && layers->count() >= 2); // mlp-small quantises every dense layer
        // A redraw (every 40 ms while training) leaves the boxes' items alone: clearing them
        // would close a popup the user has open.
        const auto* runs = chart->findChild<QComboBox*>("scaling_run");
        QVERIFY(runs);
        QSignalSpy run_rows(runs->model(), &QAbstractItemModel::rowsRemoved);
        QSignalSpy layer_rows(layers->model(), &QAbstractItemModel::rowsRemoved);
        window.charts()->redraw();
        QCOMPARE(run_rows.count(), 0);
        QCOMPARE(layer_rows.count(), 0);

        // The first layer makes no row-wise gradient copy: the chart says so and names the
        // copies it makes, rather than drawing empty axes.
        QCOMPARE(chart->layer(), layers->itemData(0).toString());
        chart->set_role("gradient");
        QVERIFY(chart->empty_state());
        QVERIFY2(chart->empty_text().contains("makes no copy of its gradients") &&
                     chart->empty_text().contains("gradients, column-wise (dW)") &&
                     chart->empty_text().contains("computes no dX"),
                 qPrintable(chart->empty_text()));
        QCOMPARE(chart->drawn_points("amax"), 0);
        chart->set_role("gradient_columnwise");
        QVERIFY(!chart->empty_state());

        // Every record of the second layer, which makes every copy, is a point on each series.
        chart->set_layer(layers->itemData(1).toString());
        for (const QString& role : kRoles) {
            chart->set_role(role);
            QCOMPARE(chart->role(), role);
            qsizetype expected = 0;
            for (const QuantRecord& record : run->quant)
                for (const QuantTensorRecord& t : record.tensors)
                    if (QString::fromStdString(t.layer) == chart->layer() &&
                        QString::fromStdString(t.role) == role && t.amax > 0)
                        ++expected;
            QVERIFY2(expected >= 2, qPrintable(role));
            for (const char* series : {"amax", "scale", "clipped", "flushed"}) {
                QCOMPARE(chart->points(series).size(), expected);
                QVERIFY2(chart->drawn_points(series) > 0, series);
                m_live[role + "/" + series] = chart->points(series);
            }
            for (const QPointF& p : chart->points("clipped")) QVERIFY(p.y() >= 0 && p.y() <= 100);
        }
        // Weights and activations of a layer differ in magnitude: the role picks other data.
        QVERIFY(m_live["activation/amax"] != m_live["weight/amax"]);
        QVERIFY(m_live["weight/amax"] != m_live["gradient/amax"]);
        // The plotted amax is log2 of the recorded one.
        chart->set_role("weight");
        for (const QuantTensorRecord& t : run->quant.front().tensors)
            if (QString::fromStdString(t.layer) == chart->layer() && t.role == "weight")
                QCOMPARE(chart->points("amax").front().y(), std::log2(t.amax));
        m_layer = chart->layer();
    }

    void float32RunShowsTheEmptyState() {
        MainWindow window;
        Experiment e = tiny_experiment("scaling-float32", 4);
        e.policy = "float32";
        train(window, e);
        const RunRecord* run = run_named(window, "scaling-float32");
        QVERIFY(run);
        QVERIFY(run->quant.isEmpty());
        ScalingChart* chart = window.charts()->scaling_chart();
        QCOMPARE(chart->shown_run(), run->id); // the newest run
        QVERIFY(chart->empty_state());
        QVERIFY2(chart->empty_text().contains("does not quantise"),
                 qPrintable(chart->empty_text()));
        QCOMPARE(chart->drawn_points("amax"), 0);
        // Picking the reopened mxfp8 run shows its points again.
        const RunRecord* mxfp8 = run_named(window, "scaling-mxfp8");
        QVERIFY(mxfp8 && mxfp8->reopened);
        chart->show_run(mxfp8->id);
        QVERIFY(!chart->empty_state());
        QVERIFY(chart->drawn_points("amax") > 0);
    }

    void reopenedRunShowsTheSamePoints() {
        QVERIFY(!m_live.isEmpty());
        MainWindow window;
        QTRY_VERIFY(!window.run_history()->is_loading());
        const RunRecord* run = run_named(window, "scaling-mxfp8");
        QVERIFY(run && run->reopened);
        window.charts()->redraw();
        ScalingChart* chart = window.charts()->scaling_chart();
        chart->show_run(run->id);
        chart->set_layer(m_layer);
        QCOMPARE(chart->layer(), m_layer);
        for (const QString& role : kRoles) {
            chart->set_role(role);
            for (const char* series : {"amax", "scale", "clipped", "flushed"})
                QCOMPARE(chart->points(series), m_live[role + "/" + series]);
        }
        // The app's CSV export writes the quant records beside the steps, in long form.
        QTemporaryDir out;
        const QString csv = out.filePath("run.csv");
        QCOMPARE(window.run_history()->export_metrics(run->id, csv), QString());
        QFile quant(out.filePath("run-quant.csv"));
        QVERIFY(quant.open(QIODevice::ReadOnly));
        const QStringList rows = QString::fromUtf8(quant.readAll()).split('\n', Qt::SkipEmptyParts);
        QVERIFY(rows.front().startsWith("step,layer,role,format,amax,scale,clipped,flushed"));
        qsizetype tensors = 0;
        for (const QuantRecord& record : run->quant) tensors += qsizetype(record.tensors.size());
        QCOMPARE(rows.size(), 1 + tensors);
    }

private:
    QString m_layer;
};

QTEST_MAIN(TestGuiScalingChart)
#include "tst_gui_scaling_chart.moc"
