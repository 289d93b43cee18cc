// Run status names, used as values in the metrics JSONL and the runs list.
// Keep them stable: saved runs are read back by name.
#include "core/train/metrics.h"

#include "core/text.h"

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

std::string skipped_step_text(const StepRecord& step) {
    std::string text = "step " + std::to_string(step.step) + " skipped: ";
    const std::string scale = "scale " + number_text(step.loss_scale);
    // No names: another rank's gradients overflowed (each rank records its own), or a metrics file
    // written before the ledger.
    if (step.overflowed.empty())
        return text +
               (step.ranks > 1 ? "another rank's gradients held inf or NaN ("
                               : "its gradients held inf or NaN (which was not recorded; ") +
               scale + ")";
    text += step.overflowed.front() + "'s gradient overflowed first (" + scale;
    const std::size_t n = step.overflowed.size();
    if (n == 1) return text + ")";
    return text + "; " + std::to_string(n) + " gradients held inf or NaN)";
}

} // namespace mantissa
