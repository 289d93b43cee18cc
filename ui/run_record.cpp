// RunRecord helpers: the lower-case state names the runs list, the log and the comparison show,
// kept in one place so every view spells a state the same way.
#include "ui/run_record.h"

namespace mantissa::ui {

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
    }
    return QStringLiteral("unknown");
}

} // namespace mantissa::ui
