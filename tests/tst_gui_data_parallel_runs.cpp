// Data-parallel runs in the GUI, offscreen: a run folder written by a data-parallel run (from the
// history: experiment.json, run.json, metrics.jsonl) and one holding only a hand-written metrics
// file (what `mpirun ... mantissa-cli train --data-parallel --metrics` leaves) show their ranks
// and allreduce dtype in the runs list and the comparison, whose "Allreduce/step" column has the
// bytes per step, and "–" for a one-process run.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "core/plan/plan.h"
#include "core/records/metrics_jsonl.h"
#include "core/train/experiment.h"
#include "tiny_experiment.h"
#include "ui/runs/comparison_model.h"
#include "ui/runs/run_history.h"
#include "ui/runs/run_record.h"
#include "ui/runs/run_store.h"

using namespace mantissa;
using namespace mantissa::ui;

namespace {

StepRecord step(int i, int ranks, std::int64_t bytes) {
    StepRecord s;
    s.step = i;
    s.epoch = 1;
    s.loss = 2.0 / i;
    s.accuracy = 0.5;
    s.step_ms = 3 + 0.01 * i;
    s.samples_per_s = 100;
    if (ranks > 1) {
        s.ranks = ranks;
        s.rank_step_ms = std::vector<double>(static_cast<std::size_t>(ranks), s.step_ms);
        s.rank_skipped = std::vector<bool>(static_cast<std::size_t>(ranks), false);
        s.allreduce_ms = 0.5;
        s.allreduce_bytes = bytes;
    }
    return s;
}

// A finished run's folder as the app's history keeps it; `parallel` null for one process.
void write_history_folder(const QString& folder, const QString& name,
                          const DataParallelInfo* parallel, std::int64_t bytes) {
    QVERIFY(QDir().mkpath(folder));
    const Experiment e = tiny_experiment(name, 20);
    save_experiment(e, QDir(folder).filePath("experiment.json").toStdString());
    MetricsJsonlWriter writer(QDir(folder).filePath("metrics.jsonl").toStdString());
    writer.write_header(e, DeviceInfo{"cpu", "CPU (test)", false, 0}, Plan{}, {}, parallel);
    for (int i = 1; i <= 20; ++i) writer.write_step(step(i, parallel ? parallel->ranks : 1, bytes));
    RunSummary summary;
    summary.steps = 20;
    summary.epochs = 1;
    summary.val_accuracy = 0.9;
    summary.median_step_ms = 3.1;
    writer.write_summary(summary);
    QFile meta(QDir(folder).filePath("run.json"));
    QVERIFY(meta.open(QIODevice::WriteOnly));
    meta.write(QStringLiteral("{\"name\": \"%1\", \"status\": \"completed\"}").arg(name).toUtf8());
}

int row_of(const ComparisonModel& table, int id) {
    for (int r = 0; r < table.rowCount(); ++r)
        if (table.run_id(r) == id) return r;
    return -1;
}

QString cell(const QAbstractItemModel& model, int row, int column, int role = Qt::DisplayRole) {
    return model.data(model.index(row, column), role).toString();
}

} // namespace

class TestGuiDataParallelRuns : public QObject {
    Q_OBJECT

private slots:
    void runsShowRanksDtypeAndBytes() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString history = dir.filePath("20261125-120000-dp");
        const QString cli = dir.filePath("cli-dp");
        const QString single = dir.filePath("20261125-110000-single");

        DataParallelInfo info;
        info.ranks = 2;
        info.allreduce_dtype = "float32";
        info.communicator = "MPI (Open MPI v4.1.4)";
        write_history_folder(history, "dp float32", &info, 814120);
        write_history_folder(single, "one process", nullptr, 0);
        if (QTest::currentTestFailed()) return;

        // Only a metrics file, written by hand as the CLI writes it: a bfloat16 allreduce on 4
        // ranks, cut short (no summary).
        QVERIFY(QDir().mkpath(cli));
        {
            QFile file(QDir(cli).filePath("metrics.jsonl"));
            QVERIFY(file.open(QIODevice::WriteOnly));
            const std::string config = experiment_to_json(tiny_experiment("cli", 20));
            QByteArray text = "{\"type\":\"run\",\"config\":" +
                              QByteArray::fromStdString(config).replace('\n', ' ') +
                              ",\"device\":{\"id\":\"cpu\",\"name\":\"CPU (test)\"},"
                              "\"data_parallel\":{\"ranks\":4,\"allreduce_dtype\":\"bfloat16\","
                              "\"communicator\":\"MPI (test)\"}}\n";
            for (int i = 1; i <= 3; ++i)
                text += QStringLiteral(
                            "{\"type\":\"step\",\"step\":%1,\"epoch\":1,\"loss\":1.5,"
                            "\"accuracy\":0.5,\"step_ms\":4,\"samples_per_s\":90,\"loss_scale\":1,"
                            "\"skipped\":false,\"ranks\":4,\"rank_step_ms\":[4,4,4,3.9],"
                            "\"rank_skipped\":[false,false,false,false],\"allreduce_ms\":0.3,"
                            "\"allreduce_bytes\":407060}\n")
                            .arg(i)
                            .toUtf8();
            file.write(text);
        }

        RunStore store;
        ComparisonModel table(&store);
        int ids[3] = {};
        const QString folders[3] = {history, cli, single};
        for (int k = 0; k < 3; ++k) {
            StoredRun stored = RunHistory::read_folder(folders[k]);
            QVERIFY2(stored.loaded, qPrintable(stored.problem));
            ids[k] = store.add_stored_run(std::move(stored.record));
        }
        const RunRecord& dp = store.runs()[0];
        const RunRecord& from_file = store.runs()[1];
        const RunRecord& one = store.runs()[2];

        // The record keeps the header's object; exports get it back.
        QVERIFY(dp.data_parallel.has_value());
        QCOMPARE(dp.data_parallel->ranks, 2);
        QCOMPARE(dp.data_parallel->allreduce_dtype, std::string("float32"));
        QCOMPARE(to_run_metrics(dp).data_parallel->communicator,
                 std::string("MPI (Open MPI v4.1.4)"));
        QVERIFY(from_file.data_parallel.has_value());
        QCOMPARE(from_file.data_parallel->ranks, 4);
        QCOMPARE(from_file.state, RunState::Incomplete);
        QVERIFY(!one.data_parallel.has_value());
        QCOMPARE(data_parallel_text(dp), QString("2 ranks · allreduce in float32 · MPI (Open MPI "
                                                 "v4.1.4)"));
        QCOMPARE(data_parallel_text(one), QString());

        // The runs list: the device names the ranks, the tooltip the allreduce dtype.
        QCOMPARE(cell(store, 0, RunStore::ColDevice), QString("CPU (test) · 2 ranks"));
        QVERIFY(
            cell(store, 0, RunStore::ColDevice, Qt::ToolTipRole).contains("allreduce in float32"));
        QCOMPARE(cell(store, 1, RunStore::ColDevice), QString("CPU (test) · 4 ranks"));
        QVERIFY(
            cell(store, 1, RunStore::ColDevice, Qt::ToolTipRole).contains("allreduce in bfloat16"));
        QCOMPARE(cell(store, 2, RunStore::ColDevice), QString("CPU (test)"));
        QCOMPARE(cell(store, 2, RunStore::ColDevice, Qt::ToolTipRole), QString("CPU (test)"));

        // The comparison: bytes per step for the data-parallel runs, a dash for one process.
        QCOMPARE(table.rowCount(), 3);
        QCOMPARE(
            table.headerData(ComparisonModel::ColAllreduceBytes, Qt::Horizontal, Qt::DisplayRole)
                .toString(),
            QString("Allreduce/step"));
        const int r_dp = row_of(table, ids[0]), r_file = row_of(table, ids[1]),
                  r_one = row_of(table, ids[2]);
        QVERIFY(r_dp >= 0 && r_file >= 0 && r_one >= 0);
        QCOMPARE(cell(table, r_dp, ComparisonModel::ColAllreduceBytes), QString("795 KiB"));
        QCOMPARE(cell(table, r_file, ComparisonModel::ColAllreduceBytes), QString("398 KiB"));
        QCOMPARE(cell(table, r_one, ComparisonModel::ColAllreduceBytes), QString("–"));
        QVERIFY(cell(table, r_file, ComparisonModel::ColAllreduceBytes, Qt::ToolTipRole)
                    .contains("bfloat16"));
        QCOMPARE(cell(table, r_dp, ComparisonModel::ColDevice), QString("CPU (test) · 2 ranks"));
        QVERIFY(cell(table, r_file, ComparisonModel::ColDevice, Qt::ToolTipRole)
                    .contains("4 ranks · allreduce in bfloat16"));
        QCOMPARE(cell(table, r_one, ComparisonModel::ColDevice), QString("CPU (test)"));
        QVERIFY(cell(table, r_dp, ComparisonModel::ColConfiguration, Qt::ToolTipRole)
                    .contains("data-parallel, 2 ranks"));
        // A 2-rank float32 run is no reference for a one-process one (and the other way round).
        const QVector<RunFacts> facts = {facts_of(dp), facts_of(one)};
        QVERIFY(!float32_baseline(facts, 1).runs.contains(0));
        QVERIFY(!float32_baseline(facts, 0).runs.contains(1));
    }

    // A metrics file whose header lacks the object still shows the ranks its steps recorded.
    void ranksFromStepsWithoutHeader() {
        RunRecord run;
        run.device = "CPU";
        run.steps = {step(1, 2, 1000), step(2, 2, 1000)};
        QCOMPARE(ranks_text(run), QString("2 ranks"));
        QCOMPARE(data_parallel_text(run), QString("2 ranks"));
        QCOMPARE(allreduce_bytes_per_step(run).value_or(-1), std::int64_t(1000));
        run.steps = {step(1, 1, 0)};
        QVERIFY(!data_parallel_of(run).has_value());
        QVERIFY(!allreduce_bytes_per_step(run).has_value());
    }
};

QTEST_MAIN(TestGuiDataParallelRuns)
#include "tst_gui_data_parallel_runs.moc"
