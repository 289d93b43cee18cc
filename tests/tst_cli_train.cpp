// Runs the real `mantissa-cli train`, `bench` and `selftest`: progress lines, the metrics file,
// exit statuses (0 ok, 1 failed run, 2 bad input) and messages that name the argument or file.
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "tests/cli_runner.h"

using mantissa::test::CliRun;
using mantissa::test::run_cli;

namespace {

const QString kMlp = QStringLiteral(MANTISSA_SOURCE_DIR "/resources/experiments/mlp-small.json");

} // namespace

class TestCliTrain : public QObject {
    Q_OBJECT

private slots:
    void trainWritesProgressAndMetrics() {
        QTemporaryDir dir;
        const QString metrics = dir.path() + "/run.jsonl";
        const CliRun r = run_cli({"train", "--config", kMlp, "--device", "cpu", "--policy",
                                  "mixed_float16", "--max-steps", "30", "--metrics", metrics});
        QVERIFY2(r.status == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("Epoch 1/3"), qPrintable(r.out));
        QVERIFY(r.out.contains("val_accuracy:"));
        QVERIFY(r.out.contains("loss_scale: 32768"));
        QVERIFY(r.out.contains("mlp-small (mixed_float16): completed"));
        QVERIFY(r.out.contains("Total params: 118282"));
        QFile file(metrics);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = file.readAll().split('\n');
        int steps = 0;
        for (const QByteArray& line : lines)
            if (QJsonDocument::fromJson(line).object().value("type") == "step") ++steps;
        QCOMPARE(steps, 30);
        QCOMPARE(QJsonDocument::fromJson(lines.first()).object().value("type").toString(),
                 QString("run"));
    }
    void badInputExits2_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("named");
        QTest::newRow("no config") << QStringList{"train"} << "--config";
        QTest::newRow("missing file")
            << QStringList{"train", "--config", "/nonexistent/x.json"} << "/nonexistent/x.json";
        QTest::newRow("bad policy")
            << QStringList{"train", "--config", kMlp, "--policy", "float17"} << "--policy";
        QTest::newRow("bad epochs")
            << QStringList{"train", "--config", kMlp, "--epochs", "many"} << "--epochs";
        QTest::newRow("zero batch")
            << QStringList{"train", "--config", kMlp, "--batch", "0"} << "--batch";
        QTest::newRow("bad loss scale")
            << QStringList{"train", "--config", kMlp, "--loss-scale", "fixed:-1"} << "--loss-scale";
        QTest::newRow("nan lr") << QStringList{"train", "--config", kMlp, "--lr", "nan"} << "--lr";
        QTest::newRow("unknown option")
            << QStringList{"train", "--config", kMlp, "--bogus"} << "--bogus";
        QTest::newRow("bad optimizer")
            << QStringList{"bench", "--config", kMlp, "--optimizer", "lion"} << "--optimizer";
        QTest::newRow("bad device")
            << QStringList{"train", "--config", kMlp, "--device", "tpu"} << "tpu";
        QTest::newRow("bad data folder")
            << QStringList{"train", "--config", kMlp, "--device", "cpu", "--data", "/nonexistent"}
            << "/nonexistent";
    }
    void badInputExits2() {
        QFETCH(QStringList, args);
        QFETCH(QString, named);
        const CliRun r = run_cli(args);
        QVERIFY2(r.err.contains(named), qPrintable(r.err));
        // A missing data folder is a failed run (1); everything else is bad input (2).
        QCOMPARE(r.status, named == "/nonexistent" ? 1 : 2);
    }
    void cudaWithoutGpuFailsClearly() {
        const CliRun r =
            run_cli({"train", "--config", kMlp, "--device", "cuda", "--max-steps", "1"});
        if (r.status == 0) QSKIP("a CUDA engine is available here");
        QCOMPARE(r.status, 1);
        QVERIFY2(r.err.contains("cuda") && r.err.contains("--device cpu"), qPrintable(r.err));
    }
    void divergedRunExits1() {
        const CliRun r = run_cli({"train", "--config", kMlp, "--device", "cpu", "--optimizer",
                                  "sgd", "--lr", "1e6", "--max-steps", "100"});
        QCOMPARE(r.status, 1);
        QVERIFY2(r.err.contains("diverged"), qPrintable(r.err));
    }
    void benchReportsEachPolicy() {
        const CliRun r =
            run_cli({"bench", "--config", kMlp, "--device", "cpu", "--policies",
                     "float32,mixed_bfloat16", "--steps", "3", "--warmup", "1", "--json"});
        QVERIFY2(r.status == 0, qPrintable(r.err));
        const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 2);
        const QJsonObject second = QJsonDocument::fromJson(lines[1].toUtf8()).object();
        QCOMPARE(second.value("policy").toString(), QString("mixed_bfloat16"));
        QVERIFY(second.value("median_ms").toDouble() > 0);
        QVERIFY(second.value("memory_bytes").toDouble() > 0);
    }
};

QTEST_APPLESS_MAIN(TestCliTrain)
#include "tst_cli_train.moc"
