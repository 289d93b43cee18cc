// RunRecord: everything the UI keeps about one training run (config, metrics, outcome), as plain
// values copied from the worker thread; the charts, the runs list and the comparison read it.
#pragma once

#include <QColor>
#include <QString>
#include <QVector>
#include <optional>

#include "core/train/experiment.h"
#include "core/train/metrics.h"

namespace mantissa::ui {

enum class RunState { Queued, Running, Paused, Completed, Stopped, Diverged, Failed };
QString run_state_name(RunState state); // "running", "completed", ...

struct RunRecord {
    int id = 0;
    QString name;        // "mlp-small · mixed_float16"
    QColor color;        // its line colour on every chart
    bool visible = true; // overlaid on the charts
    Experiment experiment;
    QString device; // "CPU (Eigen, 2 threads)"
    RunState state = RunState::Queued;
    QString message; // why it failed or diverged
    std::int64_t steps_per_epoch = 0;
    MemoryByCategory memory;     // the compiled plan + data, bytes per category
    QVector<StepRecord> steps;   // every step, in order
    QVector<EpochRecord> epochs; // every epoch, in order
    std::optional<RunSummary> summary;
};

} // namespace mantissa::ui
