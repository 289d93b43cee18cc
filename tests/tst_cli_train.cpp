// Runs the real `mantissa-cli train`, `bench` and `selftest`: progress lines, the metrics file,
// exit statuses (0 ok, 1 failed run, 2 bad input, 130 after Ctrl-C) and messages that name the
// argument or file.
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <sys/types.h>

#include "core/io/safetensors.h"
#include "tests/cli_runner.h"

using namespace mantissa;

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
        QTest::newRow("inf lr") << QStringList{"train", "--config", kMlp, "--lr", "inf"} << "--lr";
        QTest::newRow("huge batch")
            << QStringList{"train", "--config", kMlp, "--batch", "1000001"} << "--batch";
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
    // Experiment files that are wrong in each way a hand edit goes wrong: exit 2 (bad config),
    // a message naming the file and the field or layer, and never a signal.
    void badConfigFileExits2_data() {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("named");
        const QString layers = R"([{"type": "Flatten"}, {"type": "Dense", "units": 10}])";
        auto with = [&](const QString& fields, const QString& stack) {
            return QStringLiteral(R"({"model": {"input": [28, 28, 1], "layers": %1}%2})")
                .arg(stack, fields.isEmpty() ? QString() : ", " + fields);
        };
        QTest::newRow("wrong type") << with(R"("batch_size": "128")", layers) << "batch_size";
        QTest::newRow("unknown layer")
            << with("", R"([{"type": "Flatten"}, {"type": "LSTM", "units": 10}])")
            << "model.layers[1].type";
        QTest::newRow("negative units")
            << with("", R"([{"type": "Flatten"}, {"type": "Dense", "units": -10}])")
            << "model.layers[1].units";
        QTest::newRow("zero filters")
            << with("", R"([{"type": "Conv2D", "filters": 0, "kernel": 3}, {"type": "Flatten"},
                           {"type": "Dense", "units": 10}])")
            << "model.layers[0].filters";
        QTest::newRow("kernel larger than the image")
            << with("", R"([{"type": "Conv2D", "filters": 4, "kernel": 30}, {"type": "Flatten"},
                           {"type": "Dense", "units": 10}])")
            << "conv2d_1";
        QTest::newRow("Dense before Flatten")
            << with("", R"([{"type": "Dense", "units": 10}, {"type": "Flatten"}])") << "dense_1";
        QTest::newRow("output is not 10 classes")
            << with("", R"([{"type": "Flatten"}, {"type": "Dense", "units": 7}])") << "10 classes";
        QTest::newRow("NaN learning rate")
            << with(R"("optimizer": {"type": "sgd", "learning_rate": NaN})", layers) << "line 1";
        QTest::newRow("infinite learning rate")
            << with(R"("optimizer": {"type": "sgd", "learning_rate": 1e999})", layers) << "1e999";
        QTest::newRow("zero learning rate")
            << with(R"("optimizer": {"type": "sgd", "learning_rate": 0})", layers)
            << "optimizer.learning_rate";
        QTest::newRow("batch above the limit")
            << with(R"("batch_size": 10000000)", layers) << "batch_size";
        QTest::newRow("not JSON") << "\x7f"
                                     "ELF\x02\x01"
                                  << "invalid JSON";
    }
    void badConfigFileExits2() {
        QFETCH(QString, json);
        QFETCH(QString, named);
        QTemporaryDir dir;
        const QString path = dir.filePath("bad.json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(json.toUtf8());
        f.close();
        const CliRun r =
            run_cli({"train", "--config", path, "--device", "cpu", "--max-steps", "1"});
        // The reader names the file; shape errors come later and name the layer instead.
        const bool shape_error = named.endsWith("_1") || named == "10 classes";
        if (!shape_error) QVERIFY2(r.err.contains(path), qPrintable(r.err));
        QVERIFY2(r.err.contains(named), qPrintable(r.err));
        QCOMPARE(r.status, 2);
    }
    // The largest batch the reader accepts, on Keras's Dense 4096 x 2 model, needs far more
    // memory than the host has: a failed run (1) with a message saying what to reduce, not an
    // OOM kill or a signal.
    void hugeBatchIsAClearMemoryError() {
        const CliRun r = run_cli({"train", "--config",
                                  MANTISSA_SOURCE_DIR "/resources/experiments/seed-mlp.json",
                                  "--device", "cpu", "--batch", "1000000", "--max-steps", "1"});
        QCOMPARE(r.status, 1);
        QVERIFY2(r.err.contains("out of host memory") && r.err.contains("reduce the batch size"),
                 qPrintable(r.err));
    }
    void cudaWithoutGpuFailsClearly() {
        const CliRun r =
            run_cli({"train", "--config", kMlp, "--device", "cuda", "--max-steps", "1"});
        if (r.status == 0) QSKIP("a CUDA engine is available here");
        QCOMPARE(r.status, 1);
        QVERIFY2(r.err.contains("cuda") && r.err.contains("--device cpu"), qPrintable(r.err));
    }
    // Ctrl-C during a run: the run stops after its current step, the summary reaches the metrics
    // file as "stopped", the --export is written whole, and the exit status is 130 (the shell's
    // code for SIGINT) from a normal exit, never a death by the signal.
    void interruptStopsCleanly() {
        QTemporaryDir dir;
        const QString metrics = dir.filePath("run.jsonl");
        const QString weights = dir.filePath("weights.safetensors");
        QProcess cli;
        cli.start(MANTISSA_CLI_PATH, {"train", "--config", kMlp, "--device", "cpu", "--epochs",
                                      "50", "--metrics", metrics, "--export", weights});
        QVERIFY(cli.waitForStarted());
        // "Epoch 1/50" is printed (and flushed) with the first step: training has begun.
        QByteArray out;
        QElapsedTimer waited;
        waited.start();
        while (!out.contains("Epoch 1/50") && cli.state() == QProcess::Running &&
               waited.elapsed() < 120000) {
            cli.waitForReadyRead(1000);
            out += cli.readAllStandardOutput();
        }
        QVERIFY2(out.contains("Epoch 1/50"), out.constData());
        QCOMPARE(::kill(static_cast<pid_t>(cli.processId()), SIGINT), 0);
        QVERIFY(cli.waitForFinished(120000));
        out += cli.readAllStandardOutput();
        const QString err = QString::fromUtf8(cli.readAllStandardError());
        QCOMPARE(cli.exitStatus(), QProcess::NormalExit);
        QCOMPARE(cli.exitCode(), 130);
        QVERIFY2(err.contains("stopping after this step") &&
                     err.contains("stopped by the user at step"),
                 qPrintable(err));
        QVERIFY2(out.contains("mlp-small (float32): stopped"), out.constData());
        QVERIFY2(out.contains("wrote " + weights.toUtf8()), out.constData());

        QFile file(metrics);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = file.readAll().trimmed().split('\n');
        const QJsonObject last = QJsonDocument::fromJson(lines.last()).object();
        QCOMPARE(last.value("type").toString(), QString("summary"));
        QCOMPARE(last.value("status").toString(), QString("stopped"));
        QVERIFY(last.value("steps").toInt() < 50 * 469); // it did stop early
        const SafetensorsFile exported = read_safetensors(weights.toStdString());
        QCOMPARE(exported.weights.tensors.size(), std::size_t{6}); // three Dense kernels + biases
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
