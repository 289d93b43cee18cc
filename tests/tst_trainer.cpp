// The Trainer on real MNIST: seeded determinism, pause/resume/stop from another thread,
// learning under float32 and mixed policies, divergence handling and the metrics JSONL.
#include <QScopeGuard>
#include <QtTest>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <limits>
#include <thread>

#include "core/backend/cpu/cpu_backend.h"
#include "core/data/mnist.h"
#include "core/data/synthetic_mnist.h"
#include "core/error.h"
#include "core/parallel/single_process_communicator.h"
#include "core/records/metrics_jsonl.h"
#include "core/train/trainer.h"
#include "tests/test_support.h"

using namespace mantissa;
using namespace mantissa::test;

namespace {
const Mnist& mnist() {
    static const Mnist data = load_mnist(find_data_dir(""));
    return data;
}

Experiment mlp_experiment(const char* policy, std::int64_t max_steps) {
    Experiment e;
    e.name = "mlp-small";
    e.model = mlp_small();
    e.policy = policy;
    e.optimizer = optimizer_defaults(OptimizerType::RMSprop);
    e.batch_size = 128;
    e.epochs = 1;
    e.max_steps = max_steps;
    e.device = "cpu";
    return e;
}

std::vector<StepRecord> run_steps(const Experiment& e, RunSummary* summary = nullptr,
                                  const DataParallelOptions& parallel = {}) {
    CpuBackend backend;
    Trainer trainer(e, mnist(), backend, parallel);
    TrainControl control;
    std::vector<StepRecord> steps;
    TrainerCallbacks callbacks;
    callbacks.on_step = [&](const StepRecord& r) { steps.push_back(r); };
    RunSummary s = trainer.run(control, callbacks);
    if (summary) *summary = s;
    return steps;
}
} // namespace

class TestTrainer : public QObject {
    Q_OBJECT

private slots:
    void sameSeedSameNumbers() {
        const auto a = run_steps(mlp_experiment("mixed_float16", 25));
        const auto b = run_steps(mlp_experiment("mixed_float16", 25));
        QCOMPARE(a.size(), std::size_t(25));
        QCOMPARE(b.size(), a.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
            QCOMPARE(a[i].loss, b[i].loss); // bit-identical, not approximately equal
            QCOMPARE(a[i].accuracy, b[i].accuracy);
            QCOMPARE(a[i].loss_scale, b[i].loss_scale);
        }
        Experiment other = mlp_experiment("mixed_float16", 25);
        other.seed = 43;
        const auto c = run_steps(other);
        QVERIFY(c.back().loss != a.back().loss);
    }
    // A one-rank group changes nothing: no gradient exchange, the same steps bit for bit.
    void singleProcessCommunicatorChangesNothing() {
        const auto a = run_steps(mlp_experiment("mixed_float16", 25));
        SingleProcessCommunicator one;
        DataParallelOptions parallel;
        parallel.communicator = &one;
        parallel.allreduce_dtype = DType::BFloat16; // would round the gradients if it ran
        const auto b = run_steps(mlp_experiment("mixed_float16", 25), nullptr, parallel);
        QCOMPARE(b.size(), a.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
            QCOMPARE(b[i].loss, a[i].loss); // bit-identical
            QCOMPARE(b[i].loss_scale, a[i].loss_scale);
            QCOMPARE(b[i].ranks, 1);
            QCOMPARE(b[i].allreduce_bytes, std::int64_t(0));
        }
    }
    void learnsUnderEachPolicy_data() {
        QTest::addColumn<QString>("policy");
        for (const char* p : {"float32", "mixed_float16", "mixed_bfloat16", "float64"})
            QTest::newRow(p) << p;
    }
    void learnsUnderEachPolicy() {
        QFETCH(QString, policy);
        RunSummary summary;
        const auto steps = run_steps(mlp_experiment(policy.toUtf8().constData(), 150), &summary);
        QCOMPARE(summary.status, RunStatus::Completed);
        QCOMPARE(summary.steps, std::int64_t(150));
        QVERIFY2(summary.val_accuracy > 0.90, qPrintable(QString::number(summary.val_accuracy)));
        QVERIFY(steps.back().loss < steps.front().loss);
    }
    void dynamicLossScaleIsReported() {
        const auto steps = run_steps(mlp_experiment("mixed_float16", 20));
        QCOMPARE(steps.front().loss_scale, 32768.0); // Keras's initial scale
        for (const StepRecord& r : steps) {
            QVERIFY(r.loss_scale <= 32768.0);
            QCOMPARE(r.memory.total(), steps.front().memory.total());
            QVERIFY(r.memory[MemCategory::Master] > 0);
        }
        const auto fp32 = run_steps(mlp_experiment("float32", 3));
        QCOMPARE(fp32.front().loss_scale, 1.0);
        QVERIFY(!fp32.front().skipped);
    }
    void pauseResumeStop() {
        CpuBackend backend;
        Experiment e = mlp_experiment("float32", 0);
        e.epochs = 50;
        Trainer trainer(e, mnist(), backend);
        TrainControl control;
        std::atomic<std::int64_t> last_step{0};
        std::atomic<std::int64_t> step_us{0}; // duration of the latest step
        TrainerCallbacks callbacks;
        callbacks.on_step = [&](const StepRecord& r) {
            step_us = static_cast<std::int64_t>(r.step_ms * 1000.0);
            last_step = r.step;
        };
        RunSummary summary;
        std::thread worker([&] { summary = trainer.run(control, callbacks); });
        // A failed check returns early: stop and join the worker whatever happens.
        const auto join = qScopeGuard([&] {
            control.request_stop();
            if (worker.joinable()) worker.join();
        });
        while (last_step < 5) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        // Windows of several step times: a step takes milliseconds in a normal build and up to
        // a second under the sanitizers, so fixed sleeps made this test flaky there.
        const auto window = std::max(std::chrono::microseconds(300000),
                                     std::chrono::microseconds(8 * step_us.load()));
        const std::int64_t at_pause = last_step;
        control.set_paused(true);
        // Parked: the step in flight has finished and been reported, however loaded the machine.
        while (!control.parked()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        const std::int64_t paused_at = last_step;
        QVERIFY(paused_at <= at_pause + 1); // only the step in flight may finish
        std::this_thread::sleep_for(window);
        QCOMPARE(last_step.load(), paused_at); // no step runs while paused
        control.set_paused(false);
        while (last_step < paused_at + 5) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        control.request_stop();
        worker.join();
        QVERIFY(!control.parked());
        QCOMPARE(summary.status, RunStatus::Stopped);
        QVERIFY(summary.steps >= paused_at + 5);
        QVERIFY(std::isfinite(summary.val_accuracy)); // the partial epoch was still evaluated
    }
    void divergenceStopsTheRun() {
        Experiment e = mlp_experiment("float32", 200);
        e.optimizer = optimizer_defaults(OptimizerType::SGD);
        e.optimizer.learning_rate = 1e6;
        RunSummary summary;
        run_steps(e, &summary);
        QCOMPARE(summary.status, RunStatus::Diverged);
        QVERIFY2(QString::fromStdString(summary.message).contains("diverged"),
                 summary.message.c_str());
        QVERIFY(summary.steps < 200);
        e.on_divergence = DivergencePolicy::Continue;
        run_steps(e, &summary);
        QCOMPARE(summary.status, RunStatus::Diverged);
        QCOMPARE(summary.steps, std::int64_t(200));
    }
    void partialLastBatchCoversTheEpoch() {
        CpuBackend backend;
        Experiment e = mlp_experiment("float32", 0);
        e.batch_size = 7000; // 60000 = 8·7000 + 4000
        e.model.layers[1].units = 16;
        e.model.layers[2].units = 16;
        Trainer trainer(e, mnist(), backend);
        QCOMPARE(trainer.steps_per_epoch(), std::int64_t(9));
        TrainControl control;
        std::int64_t examples = 0;
        TrainerCallbacks callbacks;
        callbacks.on_step = [&](const StepRecord& r) {
            examples += static_cast<std::int64_t>(r.samples_per_s * r.step_ms / 1000.0 + 0.5);
        };
        RunSummary summary = trainer.run(control, callbacks);
        QCOMPARE(examples, std::int64_t(60000));
        QCOMPARE(trainer.evaluate().examples, std::int64_t(10000));
    }
    void metricsJsonl() {
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/run.jsonl").toStdString();
        {
            CpuBackend backend;
            Experiment e = mlp_experiment("mixed_float16", 12);
            Trainer trainer(e, mnist(), backend);
            MetricsJsonlWriter writer(path);
            writer.write_header(e, backend.info(), trainer.plan(), trainer.memory());
            TrainControl control;
            TrainerCallbacks callbacks;
            callbacks.on_step = [&](const StepRecord& r) { writer.write_step(r); };
            callbacks.on_epoch = [&](const EpochRecord& r) { writer.write_epoch(r); };
            writer.write_summary(trainer.run(control, callbacks));
        }
        std::ifstream in(path);
        std::string line;
        QStringList types;
        while (std::getline(in, line)) {
            QJsonParseError error;
            const QJsonObject object =
                QJsonDocument::fromJson(QByteArray::fromStdString(line), &error).object();
            QCOMPARE(error.error, QJsonParseError::NoError);
            types << object["type"].toString();
            if (object["type"] == "step") {
                for (const char* key :
                     {"step", "epoch", "loss", "accuracy", "step_ms", "samples_per_s", "loss_scale",
                      "skipped", "mem", "device_mem_used", "device_mem_total"})
                    QVERIFY2(object.contains(key), key);
                for (const char* key : {"weights", "master", "activations", "gradients",
                                        "optimizer", "workspace", "total"})
                    QVERIFY2(object["mem"].toObject().contains(key), key);
            }
            if (object["type"] == "epoch")
                for (const char* key : {"epoch", "loss", "accuracy", "val_loss", "val_accuracy",
                                        "seconds", "skipped_steps"})
                    QVERIFY2(object.contains(key), key);
        }
        QCOMPARE(types.first(), QString("run"));
        QCOMPARE(types.count("step"), 12);
        QCOMPARE(types.count("epoch"), 1);
        QCOMPARE(types.last(), QString("summary"));
    }
    void badBatchSizeIsAConfigError() {
        CpuBackend backend;
        Experiment e = mlp_experiment("float32", 1);
        e.batch_size = 0;
        try {
            Trainer trainer(e, mnist(), backend);
            QFAIL("accepted batch_size 0");
        } catch (const Error& err) {
            QCOMPARE(err.kind(), ErrorKind::Config);
            QVERIFY(QString(err.what()).contains("batch_size"));
        }
    }
    // A batch of a million (the most the experiment reader accepts) on Keras's Dense 4096 x 2
    // model needs far more than any host's memory: the plan's arena is refused up front with an
    // OutOfMemory error that says what to reduce, before anything of that size is allocated.
    void hugeBatchIsAMemoryError() {
        CpuBackend backend;
        Experiment e = mlp_experiment("float32", 1);
        e.model.layers[1].units = 4096;
        e.model.layers[2].units = 4096;
        e.batch_size = 1000000;
        const Mnist data = synthetic_mnist(64, 64);
        try {
            Trainer trainer(e, data, backend);
            QFAIL("a batch of 10^6 on Dense 4096 x 2 was accepted");
        } catch (const Error& err) {
            QCOMPARE(err.kind(), ErrorKind::OutOfMemory);
            const QString msg = err.what();
            QVERIFY2(msg.contains("reduce the batch size"), qPrintable(msg));
        }
        QCOMPARE(backend.memory_in_use(), std::size_t(0)); // nothing was left allocated
    }
    // Linux overcommits: a block between MemAvailable and the installed RAM used to be granted,
    // and zeroing it got the process OOM-killed. MemAvailable is always below MemTotal, so a
    // request for all of the RAM must now be refused up front.
    void allocationBeyondAvailableMemoryIsRefused() {
        CpuBackend backend;
        const std::size_t ram = backend.info().memory_total;
        if (ram == 0) QSKIP("this system does not report its RAM");
        try {
            Buffer b = backend.allocate(ram);
            QFAIL("an allocation of all the RAM was granted");
        } catch (const Error& err) {
            QCOMPARE(err.kind(), ErrorKind::OutOfMemory);
            QVERIFY2(QString(err.what()).contains("available"), err.what());
        }
        QCOMPARE(backend.memory_in_use(), std::size_t(0));
    }
    // Set in code (the GUI's form, a script), an infinite or NaN learning rate is refused by
    // name before the first step; from a file, 1e999 is already a parse error (tst_experiment).
    void nonFiniteLearningRateIsAConfigError_data() {
        QTest::addColumn<double>("lr");
        QTest::newRow("inf") << std::numeric_limits<double>::infinity();
        QTest::newRow("nan") << std::numeric_limits<double>::quiet_NaN();
        QTest::newRow("-inf") << -std::numeric_limits<double>::infinity();
    }
    void nonFiniteLearningRateIsAConfigError() {
        QFETCH(double, lr);
        CpuBackend backend;
        Experiment e = mlp_experiment("float32", 1);
        e.optimizer.learning_rate = lr;
        try {
            Trainer trainer(e, synthetic_mnist(64, 64), backend);
            QFAIL("a non-finite learning rate was accepted");
        } catch (const Error& err) {
            QCOMPARE(err.kind(), ErrorKind::Config);
            QVERIFY2(QString(err.what()).contains("learning_rate"), err.what());
        }
    }
    // Regression (fuzz/fuzz_metrics_jsonl): a message with bytes that are not UTF-8 (a file path
    // in a legacy encoding, a cut multi-byte character) made nlohmann throw and ended the run;
    // now each line stays valid JSON with U+FFFD in their place, and NaN/inf become null.
    void metricsJsonlSurvivesInvalidUtf8() {
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/run.jsonl").toStdString();
        {
            MetricsJsonlWriter writer(path);
            writer.write_log("Loading MNIST from /data/\xe9t\xe9 and \xc3");
            StepRecord step;
            step.loss = std::numeric_limits<double>::quiet_NaN();
            step.step_ms = std::numeric_limits<double>::infinity();
            writer.write_step(step);
            RunSummary summary;
            summary.status = RunStatus::Failed;
            summary.message = std::string("/tmp/\xff\xfe: file not found\0tail", 28);
            writer.write_summary(summary);
        }
        std::ifstream in(path);
        std::string line;
        QStringList types;
        while (std::getline(in, line)) {
            QJsonParseError error;
            const QJsonObject o =
                QJsonDocument::fromJson(QByteArray::fromStdString(line), &error).object();
            QVERIFY2(error.error == QJsonParseError::NoError, line.c_str());
            types << o["type"].toString();
            if (o["type"] == "log")
                QCOMPARE(o["message"].toString(),
                         QString::fromUtf8("Loading MNIST from /data/\uFFFDt\uFFFD and \uFFFD"));
            if (o["type"] == "step") {
                QVERIFY(o["loss"].isNull());
                QVERIFY(o["step_ms"].isNull());
            }
            if (o["type"] == "summary")
                QVERIFY2(o["message"].toString().contains("file not found"), line.c_str());
        }
        QCOMPARE(types, QStringList({"log", "step", "summary"}));
    }
};

QTEST_APPLESS_MAIN(TestTrainer)
#include "tst_trainer.moc"
