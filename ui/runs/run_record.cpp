// RunRecord helpers: the lower-case state names the runs list, the log and the comparison show,
// kept in one place so every view spells a state the same way.
#include "ui/runs/run_record.h"

#include <algorithm>

namespace mantissa::ui {

RunState run_state_of(RunStatus status) {
    switch (status) {
    case RunStatus::Completed:
        return RunState::Completed;
    case RunStatus::Stopped:
        return RunState::Stopped;
    case RunStatus::Diverged:
        return RunState::Diverged;
    case RunStatus::Failed:
        return RunState::Failed;
    }
    return RunState::Failed;
}

QString run_state_name(RunState state) {
    switch (state) {
    case RunState::Queued:
        return QStringLiteral("queued");
    case RunState::Running:
        return QStringLiteral("running");
    case RunState::Paused:
        return QStringLiteral("paused");
    case RunState::Completed:
        return QStringLiteral("completed");
    case RunState::Stopped:
        return QStringLiteral("stopped");
    case RunState::Diverged:
        return QStringLiteral("diverged");
    case RunState::Failed:
        return QStringLiteral("failed");
    case RunState::Incomplete:
        return QStringLiteral("incomplete");
    }
    return QStringLiteral("unknown");
}

RunMetrics to_run_metrics(const RunRecord& run) {
    RunMetrics out;
    out.config = run.experiment;
    out.device_name = run.device.toStdString();
    out.memory = run.memory;
    out.steps.assign(run.steps.begin(), run.steps.end());
    out.epochs.assign(run.epochs.begin(), run.epochs.end());
    out.histograms.assign(run.histograms.begin(), run.histograms.end());
    out.quant.assign(run.quant.begin(), run.quant.end());
    out.summary = run.summary;
    out.data_parallel = run.data_parallel;
    return out;
}

std::int64_t planned_steps(const RunRecord& run) {
    const std::int64_t all_epochs = run.steps_per_epoch * run.experiment.epochs;
    const std::int64_t max_steps = run.experiment.max_steps;
    return max_steps > 0 ? std::min(all_epochs, max_steps) : all_epochs;
}

std::optional<DataParallelInfo> data_parallel_of(const RunRecord& run) {
    if (run.data_parallel && run.data_parallel->ranks > 1) return run.data_parallel;
    for (auto it = run.steps.crbegin(); it != run.steps.crend(); ++it)
        if (it->ranks > 1) {
            DataParallelInfo info;
            info.ranks = it->ranks;
            return info;
        }
    return std::nullopt;
}

QString data_parallel_text(const RunRecord& run) {
    const std::optional<DataParallelInfo> info = data_parallel_of(run);
    if (!info) return {};
    QString text = QStringLiteral("%1 ranks").arg(info->ranks);
    if (!info->allreduce_dtype.empty())
        text += QStringLiteral(" · allreduce in ") + QString::fromStdString(info->allreduce_dtype);
    if (!info->communicator.empty())
        text += QStringLiteral(" · ") + QString::fromStdString(info->communicator);
    return text;
}

QString ranks_text(const RunRecord& run) {
    const std::optional<DataParallelInfo> info = data_parallel_of(run);
    return info ? QStringLiteral("%1 ranks").arg(info->ranks) : QString();
}

std::optional<std::int64_t> allreduce_bytes_per_step(const RunRecord& run) {
    for (auto it = run.steps.crbegin(); it != run.steps.crend(); ++it)
        if (it->ranks > 1) return it->allreduce_bytes;
    return std::nullopt;
}

} // namespace mantissa::ui
