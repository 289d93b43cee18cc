// Stress: 200 start/pause/resume/stop cycles through the real TrainingController and its worker
// thread, with stops landing before, during and after plan compilation, mid-run and at validation,
// then stops held deterministically inside compilation, validation and the weights export.
// Each cycle has a deadline, so a deadlock fails the test instead of hanging CI; under the ASan
// build LeakSanitizer checks at exit that the cycles leak nothing, and under TSan that they race on
// nothing. A tiny model (Flatten + Dense 10) keeps a cycle at a few tens of milliseconds.
#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QSemaphore>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <atomic>
#include <cmath>
#include <memory>
#include <thread>

#include "core/io/safetensors.h"
#include "core/train/experiment.h"
#include "ui/runs/run_history.h"
#include "ui/training/training_controller.h"

using namespace mantissa;
using namespace mantissa::ui;

namespace {

constexpr int kCycles = 200;
// A deadlock detector, not a timing test: a cycle takes ~0.1 s in a normal build, but the
// sanitizer builds on a busy 2-core CI machine were measured up to 25 s for the slowest.
constexpr int kCycleDeadlineMs = 60000;

Experiment tiny(std::int64_t max_steps) {
    Experiment e;
    e.name = "stress";
    e.model.input = {28, 28, 1};
    LayerSpec flatten;
    flatten.type = LayerType::Flatten;
    LayerSpec dense;
    dense.type = LayerType::Dense;
    dense.units = 10;
    dense.activation = Activation::Softmax;
    e.model.layers = {flatten, dense};
    e.policy = "float32";
    e.batch_size = 32;
    e.epochs = 1;
    e.max_steps = max_steps;
    e.device = "cpu";
    return e;
}

// A stack whose shapes do not fit (Dense before Flatten): the worker fails during compilation.
Experiment broken() {
    Experiment e = tiny(5);
    std::swap(e.model.layers[0], e.model.layers[1]);
    return e;
}

// Holds the worker inside one phase of one run (the controller's phase observer runs on the
// worker thread, inside the phase) until the test releases it. Semaphores only: the observer
// must not touch a QObject.
struct PhaseGate {
    std::atomic<int> run_id{-1};
    std::atomic<RunPhase> phase{RunPhase::Preparing};
    QSemaphore entered;
    QSemaphore released;

    void arm(int id, RunPhase at) {
        phase.store(at);
        run_id.store(id);
    }
    void observe(int id, RunPhase now) {
        if (id != run_id.load() || now != phase.load()) return;
        entered.release();
        // Bounded, so a test that fails before releasing cannot hang the worker for ever.
        released.tryAcquire(1, kCycleDeadlineMs);
    }
};

// Each run's metrics and weights go to <root>/run-<id>/, as the run history lays them out.
std::function<QString(int)> run_folders(const QString& root) {
    return [root](int id) {
        const QString dir = QDir(root).filePath(QStringLiteral("run-%1").arg(id));
        QDir().mkpath(dir);
        return QDir(dir).filePath(RunHistory::kMetricsFile);
    };
}

QString weights_path(const QString& root, int id) {
    return QDir(root).filePath(QStringLiteral("run-%1/%2").arg(id).arg(RunHistory::kWeightsFile));
}

} // namespace

class TestGuiStress : public QObject {
    Q_OBJECT

private slots:
    void startPauseStopCycles() {
        TrainingController controller;
        QSignalSpy started(&controller, &TrainingController::run_started);
        QSignalSpy steps(&controller, &TrainingController::steps_arrived);
        QSignalSpy finished(&controller, &TrainingController::run_finished);
        QSignalSpy failed(&controller, &TrainingController::run_failed);

        // Warm-up: the worker loads MNIST on its first run (seconds under the sanitizers), once.
        controller.start(tiny(1), 0);
        QTRY_VERIFY_WITH_TIMEOUT(!controller.is_running(), 4 * kCycleDeadlineMs);
        QCOMPARE(finished.count(), qsizetype(1));
        finished.clear();
        started.clear();
        steps.clear();

        int failing_cycles = 0, racing_stops = 0;
        for (int cycle = 0; cycle < kCycles; ++cycle) {
            const int id = cycle + 1;
            const qsizetype ended_before = finished.count() + failed.count();
            QElapsedTimer timer;
            timer.start();
            switch (cycle % 8) {
            case 0: // stop at once: the worker sees the stop before or while it compiles the plan
                controller.start(tiny(0), id);
                controller.stop();
                break;
            case 1: // stop a few ms in: lands in compilation or the first steps
            case 2:
                controller.start(tiny(0), id);
                QTest::qWait(cycle % 5);
                controller.stop();
                break;
            case 3: { // run, pause, resume, pause again, stop while paused
                const qsizetype before = steps.count();
                controller.start(tiny(0), id);
                QTRY_VERIFY_WITH_TIMEOUT(steps.count() > before, kCycleDeadlineMs);
                controller.pause();
                QVERIFY(controller.is_paused());
                controller.resume();
                controller.pause();
                controller.stop();
                break;
            }
            case 4: // pause before the first step, then stop
                controller.start(tiny(0), id);
                controller.pause();
                QTest::qWait(2);
                controller.stop();
                break;
            case 5: { // stop once the last of 3 steps has arrived: the worker is validating
                const qsizetype before = steps.count();
                controller.start(tiny(3), id);
                QTRY_VERIFY_WITH_TIMEOUT(steps.count() > before || !controller.is_running(),
                                         kCycleDeadlineMs);
                controller.stop();
                break;
            }
            case 6: // a failing stack: the failure path must leave the controller usable
                ++failing_cycles;
                controller.start(broken(), id);
                if (cycle % 16 == 6) { // a stop racing the failure: either outcome is fine
                    controller.stop();
                    ++racing_stops;
                }
                break;
            default: // a short run to completion with no stop at all
                controller.start(tiny(2), id);
                break;
            }
            QTRY_VERIFY2_WITH_TIMEOUT(!controller.is_running(),
                                      qPrintable(QStringLiteral("cycle %1 did not end within %2 ms")
                                                     .arg(cycle)
                                                     .arg(kCycleDeadlineMs)),
                                      kCycleDeadlineMs);
            QVERIFY(!controller.is_paused());
            QCOMPARE(finished.count() + failed.count(), ended_before + 1);
            QVERIFY2(timer.elapsed() < kCycleDeadlineMs, qPrintable(QString::number(cycle)));
        }
        QVERIFY(failed.count() >= failing_cycles - racing_stops);
        QVERIFY(failed.count() <= failing_cycles);
        QCOMPARE(finished.count() + failed.count(), qsizetype(kCycles));
        for (const QList<QVariant>& f : std::as_const(failed))
            QVERIFY2(f.at(1).toString().contains("Flatten"), qPrintable(f.at(1).toString()));
        // A run that started (compiled its plan) ended through run_finished, never run_failed.
        QVERIFY(started.count() <= finished.count());
    }

    // A stop (or a pause and a stop) that arrives while the worker is held inside a phase: the
    // plan's compilation, the end-of-epoch validation, or the weights export. Each run ends in
    // exactly one run_finished, the phase it was in completes (a validated accuracy, a weights
    // file that reads back whole), and the controller is ready for the next run.
    void stopInsideEachPhase() {
        QTemporaryDir root;
        QVERIFY(root.isValid());
        auto gate = std::make_shared<PhaseGate>();
        TrainingController controller;
        controller.set_metrics_path_provider(run_folders(root.path()));
        controller.set_phase_observer([gate](int id, RunPhase phase) { gate->observe(id, phase); });
        QSignalSpy finished(&controller, &TrainingController::run_finished);
        QSignalSpy failed(&controller, &TrainingController::run_failed);
        QSignalSpy phases(&controller, &TrainingController::phase_changed);

        const RunPhase held[] = {RunPhase::Preparing, RunPhase::Validating, RunPhase::Saving};
        int id = 0;
        for (int round = 0; round < 4; ++round) {
            for (RunPhase phase : held) {
                ++id;
                const QString what =
                    QStringLiteral("run %1, held in %2").arg(id).arg(run_phase_name(phase));
                gate->arm(id, phase);
                finished.clear();
                controller.start(tiny(3), id);
                QVERIFY2(gate->entered.tryAcquire(1, kCycleDeadlineMs), qPrintable(what));
                // The drain timer samples the phase while the worker is held in it (a run starts
                // in Preparing, so only the later phases are a change to report).
                if (phase != RunPhase::Preparing)
                    QTRY_VERIFY2_WITH_TIMEOUT(!phases.isEmpty() &&
                                                  phases.last().at(0).toInt() == id &&
                                                  phases.last().at(1).value<RunPhase>() == phase,
                                              qPrintable(what), kCycleDeadlineMs);
                if (round % 2 == 1) controller.pause(); // a pause first, then the stop
                controller.stop();
                QVERIFY(controller.is_running()); // held: the run cannot have ended yet
                gate->released.release();
                QTRY_VERIFY2_WITH_TIMEOUT(!controller.is_running(), qPrintable(what),
                                          kCycleDeadlineMs);
                QVERIFY(!controller.is_paused());
                QCOMPARE(finished.count(), qsizetype(1));
                QVERIFY2(failed.isEmpty(), qPrintable(what));
                const auto summary = finished.first().at(1).value<RunSummary>();
                if (phase == RunPhase::Preparing) {
                    // Stopped before its first step: nothing trained, nothing validated.
                    QCOMPARE(summary.status, RunStatus::Stopped);
                    QCOMPARE(summary.steps, std::int64_t{0});
                    QVERIFY(std::isnan(summary.val_accuracy));
                } else {
                    // The stop came after the last step: validation finished regardless.
                    QCOMPARE(summary.steps, std::int64_t{3});
                    QVERIFY2(summary.val_accuracy > 0.1, qPrintable(what));
                }
                // The export completed: the file reads back whole, every tensor in place.
                const SafetensorsFile file =
                    read_safetensors(weights_path(root.path(), id).toStdString());
                QCOMPARE(file.weights.tensors.size(), std::size_t{2}); // Dense kernel + bias
            }
        }
        // The controller still trains normally afterwards.
        gate->arm(-1, RunPhase::Preparing);
        finished.clear();
        controller.start(tiny(2), ++id);
        QTRY_VERIFY_WITH_TIMEOUT(!controller.is_running(), kCycleDeadlineMs);
        QCOMPARE(finished.count(), qsizetype(1));
        QCOMPARE(finished.first().at(1).value<RunSummary>().status, RunStatus::Completed);
    }

    // Closing the window while the worker writes the weights: the destructor's stop waits for the
    // export, which finishes the file rather than leaving half of it.
    void destroyDuringExport() {
        QTemporaryDir root;
        QVERIFY(root.isValid());
        for (int i = 0; i < 2; ++i) {
            auto gate = std::make_shared<PhaseGate>();
            auto controller = std::make_unique<TrainingController>();
            controller->set_metrics_path_provider(run_folders(root.path()));
            controller->set_phase_observer(
                [gate](int id, RunPhase phase) { gate->observe(id, phase); });
            gate->arm(1 + i, RunPhase::Saving);
            controller->start(tiny(2), 1 + i);
            QVERIFY(gate->entered.tryAcquire(1, kCycleDeadlineMs));
            // Released from another thread while this one is inside the destructor's join.
            std::thread releaser([gate] {
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
                gate->released.release();
            });
            QElapsedTimer timer;
            timer.start();
            controller.reset();
            releaser.join();
            QVERIFY(timer.elapsed() < kCycleDeadlineMs);
            const SafetensorsFile file =
                read_safetensors(weights_path(root.path(), 1 + i).toStdString());
            QCOMPARE(file.weights.tensors.size(), std::size_t{2});
        }
    }

    // Destroying the controller mid-run (closing the window) joins the thread without hanging,
    // and a new controller trains again: five times over, each from a different point.
    void destroyMidRunCycles() {
        for (int i = 0; i < 5; ++i) {
            auto controller = std::make_unique<TrainingController>();
            QSignalSpy steps(controller.get(), &TrainingController::steps_arrived);
            controller->start(tiny(0), 1);
            if (i % 2 == 1) QTRY_VERIFY_WITH_TIMEOUT(steps.count() >= 1, kCycleDeadlineMs);
            if (i == 3) controller->pause();
            QElapsedTimer timer;
            timer.start();
            controller.reset();
            QVERIFY2(timer.elapsed() < kCycleDeadlineMs, qPrintable(QString::number(i)));
        }
    }
};

QTEST_MAIN(TestGuiStress)
#include "tst_gui_stress.moc"
