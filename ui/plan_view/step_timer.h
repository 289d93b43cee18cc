// StepTimer: times one training step of an experiment plan step by plan step on a background
// thread (core/run/step_profiler.h, what `mantissa-cli profile` runs), for the Plan view's
// Measured and Roof columns. The thread touches no widget; it posts its progress and its result
// to the StepTimer's (UI) thread.
#pragma once

#include <QObject>
#include <QString>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "core/plan/step_profile.h"
#include "core/train/experiment.h"

namespace mantissa::ui {

// What a finished timing hands back: the rows, and where they were measured.
struct TimedStep {
    StepProfile profile;
    // The same step under the policy it was timed against (the Plan view's "against"), if any.
    std::optional<StepProfile> against;
    QString against_policy;
    QString device; // the engine's name ("CPU (Eigen, 2 threads)", "NVIDIA H100 ...")
    QString note;   // the device choice's note (a fallback to the CPU), or which data was used
    int steps = 0, warmup = 0;
};

class StepTimer final : public QObject {
    Q_OBJECT

public:
    explicit StepTimer(QObject* parent = nullptr);
    ~StepTimer() override; // cancels a timing in flight and joins its thread

    // Starts timing `experiment` (on experiment.device; MNIST from the usual folders, or a
    // synthetic stand-in where there is none: the times do not depend on the pixels), and then the
    // same step under the policy `against` with its defaults, unless that is empty. Ignored while
    // a timing runs.
    void start(const Experiment& experiment, int steps, int warmup,
               const std::string& against = {});
    // Asks the timing in flight to stop after its current step; `cancelled` follows.
    void cancel();
    bool running() const { return m_running; }

signals:
    void progress(int done, int total);
    void finished(const mantissa::ui::TimedStep& result);
    void failed(const QString& message);
    void cancelled();

private:
    void join();

    std::thread m_thread;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    bool m_running = false;
};

} // namespace mantissa::ui
