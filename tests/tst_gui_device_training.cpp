// The app training on the engine MANTISSA_GUI_DEVICE names ("cpu" when unset): the path a
// lecturer uses (MainWindow, the worker thread, the run store, the charts) with that engine
// underneath, checked where the charts read it: step times, the loss, the memory bars and the
// device memory in use. ctest runs it on the CPU engine; bench/run_gpu.sh's gui stage runs the
// same binary with "cuda" on the GPU machine (issue 26: the app had never trained on a GPU).
#include <QApplication>
#include <QtTest>
#include <algorithm>
#include <vector>

#include "core/train/experiment.h"
#include "tests/isolated_app_dirs.h"
#include "ui/charts/charts_panel.h"
#include "ui/charts/memory_chart.h"
#include "ui/editor/experiment_document.h"
#include "ui/runs/run_store.h"
#include "ui/training/training_controller.h"
#include "ui/window/main_window.h"

using namespace mantissa;
using namespace mantissa::ui;

class TestGuiDeviceTraining : public QObject {
    Q_OBJECT

    IsolatedAppDirs m_dirs; // the runs and settings of this test only

private slots:
    void initTestCase() {
        Q_INIT_RESOURCE(resources);
        QVERIFY(m_dirs.root.isValid());
    }

    void trainsAndFeedsTheCharts() {
        const QString device = qEnvironmentVariable("MANTISSA_GUI_DEVICE", QStringLiteral("cpu"));
        MainWindow window;
        window.document()->set_prompt(
            [](const QString&) { return ExperimentDocument::Choice::Discard; });
        Experiment e = window.current_experiment(); // the default experiment: mlp-small
        e.device = device.toStdString();
        e.epochs = 1;
        e.max_steps = 60;
        e.histogram_every = 20;
        window.set_experiment(e);
        QVERIFY2(window.train_action()->isEnabled(), qPrintable(window.train_action()->toolTip()));
        window.train_action()->trigger();
        RunStore* store = window.run_store();
        QTRY_VERIFY_WITH_TIMEOUT(store->runs().size() == 1, 10000);
        const int id = store->runs().front().id;
        auto finished = [&] {
            const RunRecord* run = store->run(id);
            return run && run->state != RunState::Queued && run->state != RunState::Running &&
                   !window.controller()->is_running();
        };
        QTRY_VERIFY_WITH_TIMEOUT(finished(), 300000);
        const RunRecord& run = *store->run(id);
        QVERIFY2(run.state == RunState::Completed, qPrintable(run.message));
        QCOMPARE(run.steps.size(), qsizetype(60));
        // The engine asked for is the one that trained: the CUDA engine names its GPU.
        const bool cpu = device == QLatin1String("cpu");
        QVERIFY2(run.device.startsWith(QLatin1String("CPU")) == cpu, qPrintable(run.device));
        std::vector<double> times;
        for (const StepRecord& s : run.steps) {
            QVERIFY(s.step_ms > 0);
            QVERIFY(s.device_mem_used > 0);
            QVERIFY(s.device_mem_total >= s.device_mem_used);
            times.push_back(s.step_ms);
        }
        // What the charts draw for the run.
        window.charts()->redraw();
        QVERIFY(window.charts()->drawn_points("step_time", id) > 0);
        QVERIFY(window.charts()->drawn_points("loss", id) > 0);
        QVERIFY(window.charts()->drawn_points("memory", id) > 0);
        auto* memory = window.findChild<MemoryChart*>();
        QVERIFY(memory);
        const QString tip = memory->tooltip(0, MemCategory::Weights);
        QVERIFY2(tip.contains(QLatin1String("device memory in use")), qPrintable(tip));
        std::nth_element(times.begin(), times.begin() + 30, times.end());
        qInfo("%s: %d steps, median %.3f ms/step, %.1f MiB in use of %.1f GiB; %s",
              qPrintable(run.device), int(run.steps.size()), times[30],
              double(run.steps.back().device_mem_used) / (1 << 20),
              double(run.steps.back().device_mem_total) / (1 << 30), qPrintable(tip));
    }
};

QTEST_MAIN(TestGuiDeviceTraining)
#include "tst_gui_device_training.moc"
