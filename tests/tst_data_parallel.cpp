// Data-parallel training on MPI: `mpirun -np 2 --oversubscribe mantissa-cli train --data-parallel`
// on loopback against one process with the same global batch. Needs mpirun (Open MPI); without
// it the mpirun cases skip with a message. Not run under ASan (mantissa.sh's ASAN_SKIP): Open MPI
// allocates and leaks at start-up in ways LeakSanitizer reports.
//
// Tolerance of the float32 comparison: the two ranks compute every row's gradient exactly as one
// process does (GradientSync weights the loss scale by each rank's share of the rows), so the only
// difference is the order of the float32 sums: the weight gradient of 128 rows is summed as two
// GEMMs of 64 rows plus one allreduce addition instead of one GEMM. Each such reordering moves a
// gradient by a few float32 ulps (~1e-7 relative); RMSprop carries that through 50 steps to
// ~5e-7 relative in the loss (measured), so 1e-4 relative leaves a wide margin and still catches
// any real error (a wrong shard or weight changes the loss by 1e-2 or more within a few steps).
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

namespace {

const QString kMlp = QStringLiteral(MANTISSA_SOURCE_DIR "/resources/experiments/mlp-small.json");
const QString kCli = QStringLiteral(MANTISSA_CLI_PATH);
constexpr int kParams = 784 * 128 + 128 + 128 * 128 + 128 + 128 * 10 + 10; // mlp-small

struct Run {
    int status = -1; // -1: crashed or timed out
    QString out, err;
};

// Environment for mpirun in CI containers: root allowed, shared memory without CMA (often
// blocked by seccomp), and only loopback for the runtime's own TCP, never another address.
QProcessEnvironment mpi_environment(const QStringList& extra = {}) {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    const QStringList defaults = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                  "OMPI_MCA_btl_vader_single_copy_mechanism=none",
                                  "OMPI_MCA_btl=self,vader", "OMPI_MCA_oob_tcp_if_include=lo",
                                  "OMPI_MCA_rmaps_base_oversubscribe=1",
                                  // two ranks on two cores: one thread each, no fighting
                                  "OMP_NUM_THREADS=1"};
    for (const QString& kv : defaults) {
        const QString key = kv.section('=', 0, 0);
        if (!env.contains(key)) env.insert(key, kv.section('=', 1));
    }
    for (const QString& kv : extra) env.insert(kv.section('=', 0, 0), kv.section('=', 1));
    return env;
}

Run run(const QString& program, const QStringList& args, const QStringList& extra_env = {},
        int timeout_ms = 120000) {
    QProcess process;
    process.setProcessEnvironment(mpi_environment(extra_env));
    process.start(program, args);
    Run r;
    if (!process.waitForFinished(timeout_ms)) {
        process.kill();
        process.waitForFinished();
        r.err = "timed out";
        return r;
    }
    r.status = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    r.out = QString::fromUtf8(process.readAllStandardOutput());
    r.err = QString::fromUtf8(process.readAllStandardError());
    return r;
}

QString mpirun_path() {
    return QStandardPaths::findExecutable("mpirun");
}

// `mantissa-cli train` on mlp-small for `steps` steps; ranks 0 = one process without mpirun.
Run train(int ranks, const QString& metrics, const QStringList& extra, const QStringList& env = {},
          int steps = 50) {
    QStringList args = {
        "train",     "--config", kMlp,     "--device", "cpu", "--max-steps", QString::number(steps),
        "--metrics", metrics,    "--quiet"};
    args += extra;
    if (ranks == 0) return run(kCli, args, env);
    QStringList mpi = {"-np", QString::number(ranks), "--oversubscribe"};
    for (const QString& kv : env) mpi += {"-x", kv.section('=', 0, 0)};
    mpi += kCli;
    mpi += args;
    mpi += "--data-parallel";
    return run(mpirun_path(), mpi, env);
}

QList<QJsonObject> records(const QString& path, const QString& type) {
    QList<QJsonObject> out;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return out;
    for (const QByteArray& line : file.readAll().split('\n')) {
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        if (o.value("type").toString() == type) out.push_back(o);
    }
    return out;
}

double max_relative_loss_difference(const QList<QJsonObject>& a, const QList<QJsonObject>& b) {
    double worst = 0;
    for (qsizetype i = 0; i < std::min(a.size(), b.size()); ++i) {
        const double x = a[i].value("loss").toDouble(), y = b[i].value("loss").toDouble();
        worst = std::max(worst, std::abs(x - y) / std::abs(x));
    }
    return worst;
}

// Every step: both ranks took the same skip decision, and it is the step's.
void verify_ranks_agree(const QList<QJsonObject>& steps) {
    for (const QJsonObject& s : steps) {
        const QJsonArray skipped = s.value("rank_skipped").toArray();
        QCOMPARE(skipped.size(), 2);
        QCOMPARE(skipped[0].toBool(), s.value("skipped").toBool());
        QCOMPARE(skipped[1].toBool(), s.value("skipped").toBool());
        QCOMPARE(s.value("ranks").toInt(), 2);
        QCOMPARE(s.value("rank_step_ms").toArray().size(), 2);
    }
}

} // namespace

class TestDataParallel : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QList<QJsonObject> m_one; // one process, float32 policy: the reference

    void require_mpirun() {
        if (mpirun_path().isEmpty())
            QSKIP("mpirun is not installed: apt install openmpi-bin libopenmpi-dev (or run "
                  "./mantissa.sh), then rebuild");
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        const Run r = train(0, m_dir.filePath("one.jsonl"), {});
        QVERIFY2(r.status == 0, qPrintable(r.err));
        m_one = records(m_dir.filePath("one.jsonl"), "step");
        QCOMPARE(m_one.size(), 50);
    }

    void float32AllreduceMatchesOneProcess() {
        require_mpirun();
        const QString metrics = m_dir.filePath("two.jsonl");
        const Run r = train(2, metrics, {});
        QVERIFY2(r.status == 0, qPrintable(r.out + r.err));
        const QList<QJsonObject> two = records(metrics, "step");
        QCOMPARE(two.size(), 50);
        const double worst = max_relative_loss_difference(m_one, two);
        qInfo("float32 allreduce: max relative loss difference to one process %.3g", worst);
        QVERIFY2(worst < 1e-4, qPrintable(QString::number(worst)));
        verify_ranks_agree(two);
        QCOMPARE(two[0].value("allreduce_bytes").toInteger(), qint64(4) * kParams);
        const QJsonObject header = records(metrics, "run").value(0);
        QCOMPARE(header.value("data_parallel").toObject().value("ranks").toInt(), 2);
        QCOMPARE(header.value("data_parallel").toObject().value("allreduce_dtype").toString(),
                 QStringLiteral("float32"));
        QCOMPARE(records(metrics, "summary").size(), 1); // rank 0 wrote it, once
    }

    void sixteenBitAllreduceHalvesTheBytes_data() {
        QTest::addColumn<QString>("dtype");
        QTest::newRow("bfloat16") << QStringLiteral("bfloat16");
        QTest::newRow("float16") << QStringLiteral("float16");
    }
    void sixteenBitAllreduceHalvesTheBytes() {
        require_mpirun();
        QFETCH(QString, dtype);
        const QString metrics = m_dir.filePath(dtype + ".jsonl");
        const Run r = train(2, metrics, {"--allreduce-dtype", dtype});
        QVERIFY2(r.status == 0, qPrintable(r.out + r.err));
        const QList<QJsonObject> steps = records(metrics, "step");
        QCOMPARE(steps.size(), 50);
        QCOMPARE(steps[0].value("allreduce_bytes").toInteger(), qint64(2) * kParams);
        // One rounding of each gradient to 8 (bfloat16) or 11 (float16) significant bits per
        // step: measured 1.0e-4 (bfloat16) and 2.9e-5 (float16) after 50 steps.
        const double worst = max_relative_loss_difference(m_one, steps);
        qInfo("%s allreduce: max relative loss difference %.3g", qPrintable(dtype), worst);
        QVERIFY2(worst < 1e-2, qPrintable(QString::number(worst)));
        verify_ranks_agree(steps);
    }

    // mixed_float16: the loss scale, and so every skip decision, follows one process's. (At the
    // float16 overflow boundary a B/N-row partial sum can fit where the B-row sum does not, so
    // with a scale that keeps overflowing the two may skip different steps; the default 32768
    // does not overflow here.)
    void mixedFloat16FollowsOneProcess() {
        require_mpirun();
        const Run one = train(0, m_dir.filePath("mf1.jsonl"), {"--policy", "mixed_float16"});
        QVERIFY2(one.status == 0, qPrintable(one.err));
        const Run two = train(2, m_dir.filePath("mf2.jsonl"), {"--policy", "mixed_float16"});
        QVERIFY2(two.status == 0, qPrintable(two.out + two.err));
        const QList<QJsonObject> a = records(m_dir.filePath("mf1.jsonl"), "step");
        const QList<QJsonObject> b = records(m_dir.filePath("mf2.jsonl"), "step");
        QCOMPARE(b.size(), a.size());
        for (qsizetype i = 0; i < a.size(); ++i) {
            QCOMPARE(b[i].value("skipped").toBool(), a[i].value("skipped").toBool());
            QCOMPARE(b[i].value("loss_scale").toDouble(), a[i].value("loss_scale").toDouble());
        }
        verify_ranks_agree(b);
        // Per-rank float16 GEMM outputs are rounded over 64 rows instead of 128: measured 7e-4.
        QVERIFY(max_relative_loss_difference(a, b) < 1e-2);
    }

    // Rank 1 alone sees an inf gradient at step 7 (after the allreduce, as if its own copy had
    // overflowed): the MAX of found_inf makes both ranks skip it and halve the scale together.
    void nonFiniteOnOneRankSkipsOnEveryRank() {
        require_mpirun();
        const QString metrics = m_dir.filePath("inject.jsonl");
        const Run r = train(2, metrics, {"--policy", "mixed_float16"},
                            {"MANTISSA_TEST_INJECT_NONFINITE=1:7"}, 10);
        QVERIFY2(r.status == 0, qPrintable(r.out + r.err));
        const QList<QJsonObject> steps = records(metrics, "step");
        QCOMPARE(steps.size(), 10);
        verify_ranks_agree(steps);
        for (const QJsonObject& s : steps)
            QCOMPARE(s.value("skipped").toBool(), s.value("step").toInt() == 7);
        QCOMPARE(steps[6].value("loss_scale").toDouble(), 32768.0);
        QCOMPARE(steps[7].value("loss_scale").toDouble(), 16384.0);
    }

    void batchThatDoesNotDivideIsAnError() {
        require_mpirun();
        const Run r = train(2, m_dir.filePath("odd.jsonl"), {"--batch", "127"});
        QVERIFY2(r.status != 0, qPrintable(r.out));
        QVERIFY2(r.err.contains("batch_size: 127 does not divide by the 2 ranks"),
                 qPrintable(r.err));
        // Rank 0 says it once; rank 1 failed the same way and stays quiet.
        QCOMPARE(r.err.count("does not divide"), 1);
    }

    // A rank that fails mid-run: MPI_Abort ends the job with a message naming the rank, well
    // before the 120 s the helper waits, and rank 0's metrics keep the steps it finished.
    void deadRankStopsEveryRank() {
        require_mpirun();
        const QString metrics = m_dir.filePath("dead.jsonl");
        const Run r = train(2, metrics, {}, {"MANTISSA_TEST_FAIL_RANK=1:10"}, 400);
        QVERIFY2(r.status > 0, qPrintable(r.err)); // not a time-out (-1)
        QVERIFY2(r.err.contains("rank 1 of 2 failed"), qPrintable(r.err));
        QVERIFY2(r.err.contains("MANTISSA_TEST_FAIL_RANK"), qPrintable(r.err));
        const QList<QJsonObject> steps = records(metrics, "step");
        QVERIFY2(steps.size() >= 9 && steps.size() < 400,
                 qPrintable(QString::number(steps.size())));
        QCOMPARE(records(metrics, "summary").size(), 0);
    }

    // Needs no mpirun: started alone, --data-parallel refuses and says how to start it.
    void dataParallelOutsideMpirunIsAnError() {
        QStringList args = {"train", "--config", kMlp, "--data-parallel"};
        QProcess process;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const char* key : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"})
            env.remove(key);
        process.setProcessEnvironment(env);
        process.start(kCli, args);
        QVERIFY(process.waitForFinished(60000));
        QCOMPARE(process.exitCode(), 2);
        const QString err = QString::fromUtf8(process.readAllStandardError());
        QVERIFY2(err.contains("--data-parallel") && err.contains("mpirun"), qPrintable(err));
        // CUDA ranks too (tst_nccl checks the message for builds with and without NCCL).
        process.start(kCli, args + QStringList{"--device", "cuda"});
        QVERIFY(process.waitForFinished(60000));
        QCOMPARE(process.exitCode(), 2);
        const QString cuda = QString::fromUtf8(process.readAllStandardError());
        QVERIFY2(cuda.contains("this build has no NCCL") || cuda.contains("mpirun"),
                 qPrintable(cuda));
    }
};

QTEST_APPLESS_MAIN(TestDataParallel)
#include "tst_data_parallel.moc"
