// Run status names, used as values in the metrics JSONL and the runs list.
// Keep them stable: saved runs are read back by name.
#include "core/train/metrics.h"

namespace mantissa {

const char* run_status_name(RunStatus status) {
    switch (status) {
    case RunStatus::Completed:
        return "completed";
    case RunStatus::Stopped:
        return "stopped";
    case RunStatus::Diverged:
        return "diverged";
    case RunStatus::Failed:
        return "failed";
    }
    return "?";
}

} // namespace mantissa
