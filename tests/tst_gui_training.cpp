// The GUI training path on real MNIST: controller signals feed a RunStore as the main window wires
// them; pause, stop, a failing experiment and quick start/stop cycles must never hang or crash.
#include <QApplication>
#include <QSignalSpy>
#include <QtTest>
#include <memory>
#include <utility>

#include "core/train/experiment.h"
#include "ui/runs/run_store.h"
#include "ui/training/training_controller.h"

using namespace mantissa;
using namespace mantissa::ui;

namespace {

Experiment mlp_small(std::int64_t max_steps) {
    Experiment e = load_experiment(MANTISSA_SOURCE_DIR "/resources/experiments/mlp-small.json");
    e.device = "cpu";
    e.max_steps = max_steps;
    return e;
}

void wire(TrainingController& controller, RunStore& store) {
    QObject::connect(&controller, &TrainingController::run_started, &store,
                     [&store](int id, const QString& device, const MemoryByCategory& memory,
                              qint64 steps_per_epoch) {
                         store.set_started(id, device, memory, steps_per_epoch);
                     });
    QObject::connect(&controller, &TrainingController::steps_arrived, &store,
                     &RunStore::append_steps);
    QObject::connect(&controller, &TrainingController::epoch_finished, &store,
                     &RunStore::append_epoch);
    QObject::connect(&controller, &TrainingController::run_finished, &store,
                     &RunStore::set_finished);
    QObject::connect(&controller, &TrainingController::run_failed, &store,
                     [&store](int id, const QString& message) {
                         store.set_state(id, RunState::Failed, message);
                     });
}

} // namespace

class TestGuiTraining : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<TrainingController> m_controller;
    std::unique_ptr<RunStore> m_store;

    qsizetype steps_of(int id) const { return m_store->run(id)->steps.size(); }

private slots:
    void initTestCase() {
        m_controller = std::make_unique<TrainingController>();
        m_store = std::make_unique<RunStore>();
        wire(*m_controller, *m_store);
    }
    // A failed check returns early; stop its run so the next test starts from an idle controller.
    void cleanup() {
        m_controller->stop();
        QTRY_VERIFY_WITH_TIMEOUT(!m_controller->is_running(), 30000);
    }
    void cleanupTestCase() {
        m_controller.reset();
        m_store.reset();
    }

    void storeBasics() {
        RunStore store;
        QSignalSpy added(&store, &RunStore::run_added);
        const int a = store.add_run(mlp_small(10));
        const int b = store.add_run(mlp_small(10));
        QCOMPARE(added.count(), 2);
        QCOMPARE(store.rowCount(), 2);
        QCOMPARE(store.columnCount(), int(RunStore::ColumnCount));
        QCOMPARE(store.run(a)->name, QStringLiteral("mlp-small · float32"));
        QVERIFY(store.run(a)->color != store.run(b)->color);
        QCOMPARE(store.data(store.index(0, RunStore::ColStatus), Qt::DisplayRole).toString(),
                 QStringLiteral("queued"));
        QSignalSpy visibility(&store, &RunStore::visibility_changed);
        QVERIFY(
            store.setData(store.index(0, RunStore::ColName), Qt::Unchecked, Qt::CheckStateRole));
        QVERIFY(!store.run(a)->visible);
        QCOMPARE(visibility.count(), 1);
        store.set_state(b, RunState::Failed, QStringLiteral("bad layer"));
        QCOMPARE(store.data(store.index(1, RunStore::ColStatus), Qt::ToolTipRole).toString(),
                 QStringLiteral("bad layer"));
        store.remove_run(a);
        QCOMPARE(store.rowCount(), 1);
        QVERIFY(store.run(a) == nullptr);
        QCOMPARE(run_state_name(RunState::Completed), QStringLiteral("completed"));
    }

    // The status line's ETA counts to the steps the run will take: max_steps when it ends the
    // run before its epochs do (it counted to the end of the epochs, so a 60-step run on
    // mlp-small showed minutes to go).
    void plannedStepsHonourMaxSteps() {
        RunRecord run;
        QCOMPARE(planned_steps(run), std::int64_t{0}); // not started: steps per epoch unknown
        run.steps_per_epoch = 469;
        run.experiment.epochs = 3;
        QCOMPARE(planned_steps(run), std::int64_t{1407});
        run.experiment.max_steps = 60;
        QCOMPARE(planned_steps(run), std::int64_t{60});
        run.experiment.max_steps = 5000; // more than the epochs hold: the epochs end it
        QCOMPARE(planned_steps(run), std::int64_t{1407});
    }

    void runGrowsAndFinishes() {
        const Experiment e = mlp_small(60);
        const int id = m_store->add_run(e);
        QSignalSpy steps(m_controller.get(), &TrainingController::steps_arrived);
        QSignalSpy finished(m_controller.get(), &TrainingController::run_finished);
        QSignalSpy epochs(m_controller.get(), &TrainingController::epoch_finished);
        QSignalSpy logs(m_controller.get(), &TrainingController::log_line);
        m_controller->start(e, id);
        QVERIFY(m_controller->is_running());
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 30000);
        QVERIFY(!m_controller->is_running());
        QVERIFY(steps.count() >= 1);
        const RunRecord* run = m_store->run(id);
        QCOMPARE(run->steps.size(), qsizetype(60));
        QCOMPARE(run->steps.front().step, std::int64_t(1));
        QCOMPARE(run->steps.back().step, std::int64_t(60));
        QCOMPARE(run->state, RunState::Completed);
        QVERIFY(!run->device.isEmpty());
        QCOMPARE(run->steps_per_epoch, std::int64_t(469));
        QVERIFY(run->memory.total() > 0);
        QVERIFY(run->summary.has_value());
        QCOMPARE(run->summary->steps, std::int64_t(60));
        QCOMPARE(epochs.count(), 1); // the partial epoch is validated once
        bool epoch_line = false;
        for (const QList<QVariant>& args : std::as_const(logs))
            epoch_line = epoch_line || args.at(0).toString().startsWith("Epoch 1/3 · 60 steps");
        QVERIFY(epoch_line);
    }

    void pauseStopsGrowthAndResumeContinues() {
        const Experiment e = mlp_small(0); // three whole epochs: far more than this test waits
        const int id = m_store->add_run(e);
        QSignalSpy finished(m_controller.get(), &TrainingController::run_finished);
        m_controller->start(e, id);
        QTRY_VERIFY_WITH_TIMEOUT(steps_of(id) >= 5, 30000);
        m_controller->pause();
        QVERIFY(m_controller->is_paused());
        // Once the worker is parked, its step in flight has been reported: drain it, then
        // nothing more may arrive however long we wait.
        QTRY_VERIFY_WITH_TIMEOUT(m_controller->is_parked(), 30000);
        m_controller->drain();
        const qsizetype paused_at = steps_of(id);
        QTest::qWait(300);
        m_controller->drain();
        QCOMPARE(steps_of(id), paused_at);
        QVERIFY(finished.isEmpty());
        m_controller->resume();
        QVERIFY(!m_controller->is_paused());
        QTRY_VERIFY_WITH_TIMEOUT(steps_of(id) > paused_at, 10000);
        m_controller->stop();
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 30000);
        QCOMPARE(m_store->run(id)->state, RunState::Stopped);
        QVERIFY(m_store->run(id)->message.contains("stopped by the user"));
    }

    void stopWhilePausedEndsStopped() {
        const Experiment e = mlp_small(0);
        const int id = m_store->add_run(e);
        QSignalSpy finished(m_controller.get(), &TrainingController::run_finished);
        m_controller->start(e, id);
        QTRY_VERIFY_WITH_TIMEOUT(steps_of(id) >= 1, 30000);
        m_controller->pause();
        m_controller->stop();
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 30000);
        QCOMPARE(finished.at(0).at(0).toInt(), id);
        QCOMPARE(m_store->run(id)->state, RunState::Stopped);
        QVERIFY(!m_controller->is_running());
        QVERIFY(!m_controller->is_paused());
    }

    void brokenExperimentFailsAndControllerStaysUsable() {
        Experiment broken = mlp_small(20);
        std::swap(broken.model.layers[0], broken.model.layers[1]); // Dense before Flatten
        const int bad = m_store->add_run(broken);
        QSignalSpy failed(m_controller.get(), &TrainingController::run_failed);
        QSignalSpy finished(m_controller.get(), &TrainingController::run_finished);
        m_controller->start(broken, bad);
        QTRY_VERIFY_WITH_TIMEOUT(failed.count() == 1, 30000);
        const QString message = failed.at(0).at(1).toString();
        QVERIFY2(message.contains("dense_1") && message.contains("Flatten"), qPrintable(message));
        QCOMPARE(m_store->run(bad)->state, RunState::Failed);
        QCOMPARE(m_store->run(bad)->message, message);
        QVERIFY(!m_controller->is_running());
        QVERIFY(finished.isEmpty());

        const Experiment good = mlp_small(10);
        const int id = m_store->add_run(good);
        m_controller->start(good, id);
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 30000);
        QCOMPARE(m_store->run(id)->state, RunState::Completed);
        QCOMPARE(m_store->run(id)->steps.size(), qsizetype(10));
    }

    void startWhileRunningIsIgnored() {
        const Experiment e = mlp_small(0);
        const int id = m_store->add_run(e);
        const int other = m_store->add_run(e);
        QSignalSpy finished(m_controller.get(), &TrainingController::run_finished);
        QSignalSpy logs(m_controller.get(), &TrainingController::log_line);
        m_controller->start(e, id);
        m_controller->start(e, other);
        QCOMPARE(m_controller->current_run(), id);
        QVERIFY(!logs.isEmpty());
        m_controller->stop();
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 30000);
        QCOMPARE(m_store->run(other)->state, RunState::Queued);
    }

    void quickStartStopCycles() {
        QSignalSpy finished(m_controller.get(), &TrainingController::run_finished);
        QSignalSpy failed(m_controller.get(), &TrainingController::run_failed);
        const Experiment e = mlp_small(0);
        for (int i = 0; i < 20; ++i) {
            const int id = m_store->add_run(e);
            m_controller->start(e, id);
            if (i % 2 == 1) QTest::qWait(5); // sometimes let a few steps run first
            m_controller->stop();
            QTRY_VERIFY_WITH_TIMEOUT(!m_controller->is_running(), 15000);
            QCOMPARE(m_store->run(id)->state, RunState::Stopped);
        }
        QCOMPARE(finished.count(), 20);
        QVERIFY(failed.isEmpty());
    }

    void destroyingWhileRunningDoesNotHang() {
        auto controller = std::make_unique<TrainingController>();
        QSignalSpy steps(controller.get(), &TrainingController::steps_arrived);
        controller->start(mlp_small(0), 1);
        QTRY_VERIFY_WITH_TIMEOUT(steps.count() >= 1, 30000);
        controller->pause();
        QElapsedTimer timer;
        timer.start();
        controller.reset(); // stops the paused run and joins the thread
        QVERIFY(timer.elapsed() < 10000);
    }
};

QTEST_MAIN(TestGuiTraining)
#include "tst_gui_training.moc"
