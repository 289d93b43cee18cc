// The composed main window, offscreen: a default experiment is ready at launch, an invalid stack
// disables Train with the reason, and "Compare policies" fills the comparison table.
#include <QAction>
#include <QTest>

#include "core/nn/layer_spec.h"
#include "ui/compare_queue.h"
#include "ui/comparison_model.h"
#include "ui/error_banner.h"
#include "ui/main_window.h"
#include "ui/run_store.h"

using namespace mantissa;
using namespace mantissa::ui;

class TestGuiMainWindow : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { Q_INIT_RESOURCE(resources); }

    void defaultExperimentIsReady() {
        MainWindow window;
        const Experiment e = window.current_experiment();
        QCOMPARE(QString::fromStdString(e.name), QString("mlp-small"));
        QCOMPARE(e.model.layers.size(), std::size_t(5));
        QVERIFY(window.train_action()->isEnabled());
        QVERIFY(!window.stop_action()->isEnabled());
        QVERIFY(window.error_banner()->isHidden());
    }

    void invalidStackDisablesTrain() {
        MainWindow window;
        Experiment e = window.current_experiment();
        LayerSpec dense;
        dense.type = LayerType::Dense;
        dense.units = 10;
        e.model.layers = {dense}; // Dense straight on the 28x28x1 image: needs a Flatten
        window.set_experiment(e);
        QVERIFY(!window.train_action()->isEnabled());
        QVERIFY2(window.train_action()->toolTip().contains("dense_1"),
                 qPrintable(window.train_action()->toolTip()));
    }

    void badExperimentFileShowsBanner() {
        MainWindow window;
        window.load_experiment_file("/nonexistent/experiment.json");
        QVERIFY(!window.error_banner()->isHidden());
        QVERIFY(window.error_banner()->text().contains("/nonexistent/experiment.json"));
        QVERIFY(window.train_action()->isEnabled()); // the previous experiment is still there
    }

    void comparePoliciesFillsTheTable() {
        MainWindow window;
        Experiment e = window.current_experiment();
        e.device = "cpu";
        e.epochs = 1;
        e.max_steps = 40;
        window.set_experiment(e);
        window.compare_policies({"float32", "mixed_bfloat16"});
        QTRY_VERIFY_WITH_TIMEOUT(!window.compare_queue()->active(), 120000);
        ComparisonModel* table = window.comparison_model();
        QCOMPARE(table->rowCount(), 2);
        QCOMPARE(table->index(1, ComparisonModel::ColPolicy).data().toString(),
                 QString("mixed_bfloat16"));
        QVERIFY(table->index(1, ComparisonModel::ColAccuracy).data().toString().endsWith("%"));
        QVERIFY(table->index(1, ComparisonModel::ColSpeedup).data().toString().endsWith("×"));
        QCOMPARE(table->index(0, ComparisonModel::ColMemoryRatio).data().toString(),
                 QString("1.00×"));
        for (const RunRecord& run : window.run_store()->runs()) {
            QCOMPARE(run.state, RunState::Completed);
            QCOMPARE(run.steps.size(), 40);
        }
    }
};

QTEST_MAIN(TestGuiMainWindow)
#include "tst_gui_main_window.moc"
