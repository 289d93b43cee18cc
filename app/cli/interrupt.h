// Ctrl-C (SIGINT) and SIGTERM during a CLI run: the first asks the run to stop after its current
// step, so the summary, the metrics file and any --export are still written; a second ends at once.
#pragma once

#include "core/train/train_control.h"

namespace mantissa::cli {

class StopOnInterrupt {
public:
    // Installs the handlers for as long as this object lives; `control` must outlive it.
    explicit StopOnInterrupt(TrainControl& control);
    ~StopOnInterrupt(); // puts the previous handlers back
    StopOnInterrupt(const StopOnInterrupt&) = delete;
    StopOnInterrupt& operator=(const StopOnInterrupt&) = delete;

    // The signal that asked for the stop (SIGINT or SIGTERM), or 0 when none came.
    int signal_received() const;
};

} // namespace mantissa::cli
