// RunRecord: everything the UI keeps about one training run (config, metrics, outcome), as plain
// values copied from the worker thread; the charts, the runs list and the comparison read it.
#pragma once

#include <QColor>
#include <QDateTime>
#include <QString>
#include <QVector>
#include <cstdint>
#include <optional>

#include "core/records/metrics_reader.h"
#include "core/train/experiment.h"
#include "core/train/gradient_histogram.h"
#include "core/train/metrics.h"
#include "core/train/quant_record.h"

namespace mantissa::ui {

// Incomplete: a run reopened from the history whose metrics end without a summary (the app was
// killed while it trained); its steps and epochs are still shown.
enum class RunState { Queued, Running, Paused, Completed, Stopped, Diverged, Failed, Incomplete };
QString run_state_name(RunState state);  // "running", "completed", ...
RunState run_state_of(RunStatus status); // how a finished run ended, as a list state

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
    // A reopened run's gradient histograms (the Gradients tab); a live run's go straight to the
    // chart (TrainingController::histograms_arrived).
    QVector<GradientHistogram> histograms;
    // What a quantised policy's quantise steps did every experiment.quant_every steps (amax, scale,
    // clipped and flushed shares per layer and role): the Scaling chart. Empty for other policies.
    QVector<QuantRecord> quant;
    std::optional<RunSummary> summary;
    QString folder;        // its folder in the run history (RunHistory); empty until it starts
    QDateTime created;     // when its folder was made (UTC)
    bool reopened = false; // loaded from the history at launch, not trained in this session
    // How a data-parallel run (`mpirun ... mantissa-cli train --data-parallel`) was spread: its
    // metrics header's "data_parallel"; empty for a one-process run.
    std::optional<DataParallelInfo> data_parallel;
};

// How the charts, their legend and an exported picture name a run: "#3 mlp-small · float32" (the
// number tells apart runs of the same name, as the Runs list numbers them).
inline QString run_label(const RunRecord& run) {
    return QStringLiteral("#%1 %2").arg(run.id).arg(run.name);
}

// The record's metrics in core's form, for the exporters (the device id is not kept: empty).
RunMetrics to_run_metrics(const RunRecord& run);
// The steps the run will take: every epoch's, or fewer when max_steps ends it first (the status
// line's ETA counts to this). 0 until the run has started and knows its steps per epoch.
std::int64_t planned_steps(const RunRecord& run);

// A data-parallel run's ranks, allreduce dtype and communicator: the metrics header's, else the
// ranks its steps recorded (a file without the header object); empty for a one-process run.
std::optional<DataParallelInfo> data_parallel_of(const RunRecord& run);
// "2 ranks · allreduce in bfloat16 · MPI (Open MPI v4.1.4)"; empty for a one-process run.
QString data_parallel_text(const RunRecord& run);
// "2 ranks": what a narrow column adds after the device; empty for a one-process run.
QString ranks_text(const RunRecord& run);
// The gradient bytes each rank put into the allreduce per step (the latest data-parallel step's;
// constant for a plan); empty for a one-process run or before its first step.
std::optional<std::int64_t> allreduce_bytes_per_step(const RunRecord& run);

} // namespace mantissa::ui
