// The comparison table cannot mislead: rows are grouped by configuration (shown as a column), a
// ratio's reference is the float32 run of the same configuration or the cell says there is none,
// step times are medians after warm-up with their spread, memory is the model's own with the
// dataset apart, and "Compare policies…" takes a repeat count. Built runs for the rules, tiny
// real runs for the app.
#include <QApplication>
#include <QCheckBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPushButton>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include "core/train/experiment.h"
#include "isolated_app_dirs.h"
#include "tiny_experiment.h"
#include "ui/runs/compare_queue.h"
#include "ui/runs/comparison_model.h"
#include "ui/runs/run_report.h"
#include "ui/runs/run_store.h"
#include "ui/window/main_window.h"

using namespace mantissa;
using namespace mantissa::ui;

namespace {

// A finished run: 5 slow warm-up steps (80 ms), then 35 at `ms`; 1 KiB of weights (2 more with
// master weights) beside 55 MB of resident data.
RunRecord built_run(const Experiment& base, const char* policy, double ms) {
    RunRecord r;
    r.experiment = base;
    r.experiment.policy = policy;
    r.name = QString::fromStdString(base.name) + " · " + policy;
    r.device = "CPU";
    r.state = RunState::Completed;
    for (int i = 1; i <= 40; ++i) {
        StepRecord s;
        s.step = i;
        s.epoch = 1;
        s.step_ms = i <= 5 ? 80.0 : ms;
        s.samples_per_s = 128000.0 / s.step_ms;
        r.steps.append(s);
    }
    r.memory[MemCategory::Weights] = 1024;
    if (QByteArray(policy).startsWith("mixed")) r.memory[MemCategory::Master] = 2048;
    r.memory[MemCategory::Data] = 55'000'000;
    return r;
}

QString cell(const ComparisonModel& table, int row, int column) {
    return table.index(row, column).data().toString();
}

// A runs folder of its own for one test: the history does not bring back another test's runs.
struct OwnRunsDir {
    QTemporaryDir dir;
    OwnRunsDir() { qputenv(RunHistory::kEnvVar, dir.path().toUtf8()); }
};

int row_of(const ComparisonModel& table, const RunStore& store, const QString& name) {
    for (int row = 0; row < table.rowCount(); ++row)
        if (store.run(table.run_id(row))->name == name) return row;
    return -1;
}

} // namespace

class TestGuiComparison : public QObject {
    Q_OBJECT

    IsolatedAppDirs m_dirs;

private slots:
    void initTestCase() { Q_INIT_RESOURCE(resources); }

    // Two configurations, interleaved in the list, each with its float32 run; a third without.
    void twoConfigurationsEachAgainstItsOwnFloat32() {
        RunStore store;
        ComparisonModel table(&store);
        Experiment a = tiny_experiment("mlp", 40);
        Experiment b = a;
        b.batch_size = 512;
        Experiment c = a;
        c.optimizer.type = OptimizerType::Adam;
        store.add_stored_run(built_run(a, "float32", 4.0));
        store.add_stored_run(built_run(b, "float32", 16.0));
        store.add_stored_run(built_run(a, "mixed_bfloat16", 2.0));
        store.add_stored_run(built_run(b, "mixed_bfloat16", 4.0));
        store.add_stored_run(built_run(c, "mixed_float16", 1.0));
        QCOMPARE(table.rowCount(), 5);

        // Grouped: a's two runs, then b's, then c's.
        QStringList configs;
        for (int row = 0; row < 5; ++row)
            configs << cell(table, row, ComparisonModel::ColConfiguration);
        QCOMPARE(configs[0], configs[1]);
        QCOMPARE(configs[2], configs[3]);
        QVERIFY(configs[1] != configs[2]);
        QVERIFY(configs[2].contains("batch 512"));
        QVERIFY(configs[4].contains("adam"));
        QCOMPARE(
            table.headerData(ComparisonModel::ColConfiguration, Qt::Horizontal, Qt::DisplayRole)
                .toString(),
            QString("Configuration"));

        const RunStore& s = store;
        const int a16 = row_of(table, s, "mlp · mixed_bfloat16");
        QCOMPARE(a16, 1); // the first of the two runs of that name: configuration a's
        const int b16 = 3;
        // 2 ms against a's float32 (4 ms): 2×; b's 4 ms against its own 16 ms: 4×. On the CPU
        // engine bfloat16 is emulated, and the cell and its tooltip say so (issue 28).
        QCOMPARE(cell(table, a16, ComparisonModel::ColSpeedup), QString("2.00× emulated"));
        QCOMPARE(cell(table, b16, ComparisonModel::ColSpeedup), QString("4.00× emulated"));
        QVERIFY(table.index(a16, ComparisonModel::ColSpeedup)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains("emulates mixed_bfloat16 in software"));
        QCOMPARE(cell(table, 0, ComparisonModel::ColSpeedup), QString("1.00× (ref)"));
        QCOMPARE(cell(table, 4, ComparisonModel::ColSpeedup), ComparisonModel::no_baseline_text());
        QCOMPARE(cell(table, 4, ComparisonModel::ColMemoryRatio),
                 ComparisonModel::no_baseline_text());
        // The warm-up's 80 ms steps do not count; the spread is shown.
        QCOMPARE(cell(table, 0, ComparisonModel::ColMsPerStep), QString("4.00"));
        QCOMPARE(cell(table, 0, ComparisonModel::ColSpread), QString("4.00–4.00"));
        QVERIFY(table.index(0, ComparisonModel::ColMsPerStep)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains("first 5 of 40 steps were warm-up"));
        // Memory: the model's own (1 KiB + 2 KiB master = 3×), the 55 MB of data apart.
        QCOMPARE(cell(table, a16, ComparisonModel::ColMemoryRatio), QString("3.00×"));
        QCOMPARE(cell(table, a16, ComparisonModel::ColDataset), QString("52.5 MiB"));
        QVERIFY(cell(table, a16, ComparisonModel::ColModelMemory).endsWith("MiB"));

        // The table follows the charts: a hidden run leaves it, and still serves as reference.
        store.set_visibility({{store.runs()[0].id, false}});
        QCOMPARE(table.rowCount(), 4);
        QCOMPARE(cell(table, 0, ComparisonModel::ColSpeedup), QString("2.00× emulated"));
        QCOMPARE(cell(table, 0, ComparisonModel::ColPolicy), QString("mixed_bfloat16"));
    }

    // Close timings are marked as within the noise rather than read as a speedup.
    void overlappingSpreadsAreMarked() {
        RunStore store;
        ComparisonModel table(&store);
        const Experiment a = tiny_experiment("mlp", 40);
        RunRecord f32 = built_run(a, "float32", 4.0);
        RunRecord other = built_run(a, "float32", 4.0);
        for (int i = 5; i < 40; ++i) {
            f32.steps[i].step_ms = 3.0 + (i % 4);   // 3..6 ms
            other.steps[i].step_ms = 4.0 + (i % 4); // 4..7 ms: overlapping
        }
        store.add_stored_run(f32);
        store.add_stored_run(other);
        QVERIFY(cell(table, 1, ComparisonModel::ColSpeedup).startsWith("≈"));
        QVERIFY(table.index(1, ComparisonModel::ColSpeedup)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains("within the noise"));
    }

    // The app: "Compare policies" on two configurations, then the report.
    void comparePoliciesOnTwoConfigurations() {
        OwnRunsDir runs_dir;
        MainWindow window;
        Experiment e = tiny_experiment("tiny", 12);
        window.set_experiment(e);
        window.compare_policies({"float32", "mixed_bfloat16"});
        QTRY_VERIFY_WITH_TIMEOUT(!window.compare_queue()->active(), 120000);
        e.batch_size = 64;
        window.set_experiment(e);
        window.compare_policies({"mixed_bfloat16", "float32"});
        QTRY_VERIFY_WITH_TIMEOUT(!window.compare_queue()->active(), 120000);

        const ComparisonModel& table = *window.comparison_model();
        const RunStore& store = *window.run_store();
        QCOMPARE(table.rowCount(), 4);
        QCOMPARE(store.runs()[0].name, QString("tiny · float32")); // "<experiment> · <policy>"
        const QString first = cell(table, 0, ComparisonModel::ColConfiguration);
        QCOMPARE(cell(table, 1, ComparisonModel::ColConfiguration), first);
        QVERIFY(cell(table, 2, ComparisonModel::ColConfiguration).contains("batch 64"));
        for (int row = 0; row < 4; ++row) {
            const QString speedup = cell(table, row, ComparisonModel::ColSpeedup);
            QVERIFY2(speedup.contains("×"), qPrintable(speedup));
            QVERIFY(speedup != ComparisonModel::no_baseline_text());
        }

        QTemporaryDir dir;
        const QString path = dir.filePath("report.json");
        QVERIFY(write_run_report(store, path));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonArray runs = QJsonDocument::fromJson(file.readAll()).object()["runs"].toArray();
        QCOMPARE(runs.size(), 4);
        // Run 3 (batch 64, mixed_bfloat16) is measured against run 4 (batch 64, float32).
        QCOMPARE(runs[2]["float32_reference_runs"].toArray(), QJsonArray({store.runs()[3].id}));
        QCOMPARE(runs[0]["float32_reference_runs"].toArray(), QJsonArray({store.runs()[0].id}));
        QVERIFY(runs[2]["speedup_vs_float32"].toDouble() > 0);
        QCOMPARE(runs[2]["timing_after_warmup"]["warmup_steps"].toInt(), 5);
        QCOMPARE(runs[2]["timing_after_warmup"]["timed_steps"].toInt(), 7);
        QVERIFY(runs[2]["dataset_bytes"].toDouble() > runs[2]["model_bytes"].toDouble());
        QVERIFY(runs[2]["configuration"].toString().contains("batch 64"));
    }

    // The dialog asks for runs per policy; repeats take turns and are numbered.
    void compareDialogTakesARepeatCount() {
        OwnRunsDir runs_dir;
        MainWindow window;
        window.set_experiment(tiny_experiment("rep", 8));
        bool answered = false;
        QTimer::singleShot(0, this, [&] {
            auto* dialog = qobject_cast<QDialog*>(QApplication::activeModalWidget());
            QVERIFY(dialog);
            for (QCheckBox* box : dialog->findChildren<QCheckBox*>())
                box->setChecked(box->text() == "float32" || box->text() == "mixed_bfloat16");
            auto* repeats = dialog->findChild<QSpinBox*>("repeats");
            QVERIFY(repeats);
            QCOMPARE(repeats->value(), 1);
            repeats->setValue(2);
            answered = true;
            dialog->accept();
        });
        window.compare_policies({});
        QVERIFY(answered);
        QTRY_VERIFY_WITH_TIMEOUT(!window.compare_queue()->active(), 120000);
        QStringList names;
        for (const RunRecord& run : window.run_store()->runs()) names << run.name;
        QCOMPARE(names, QStringList({"rep · float32 · run 1/2", "rep · mixed_bfloat16 · run 1/2",
                                     "rep · float32 · run 2/2", "rep · mixed_bfloat16 · run 2/2"}));
        // Both float32 runs make the reference: every row has a ratio.
        for (int row = 0; row < 4; ++row)
            QVERIFY(
                cell(*window.comparison_model(), row, ComparisonModel::ColSpeedup).contains("×"));
    }
};

QTEST_MAIN(TestGuiComparison)
#include "tst_gui_comparison.moc"
