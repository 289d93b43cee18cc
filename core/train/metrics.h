// Value-type metrics records emitted by the Trainer: one per step, one per epoch, one per run.
// They match the metrics JSONL of ARCHITECTURE.md field for field, so the UI and the files agree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor/memory_category.h"

namespace mantissa {

struct StepRecord {
    std::int64_t step = 0; // 1-based global step
    int epoch = 0;         // 1-based
    double loss = 0;       // mean training loss of this batch (unscaled)
    double accuracy = 0;
    double step_ms = 0;
    double samples_per_s = 0;
    double loss_scale = 1; // the scale this step used
    bool skipped = false;  // its update was skipped (non-finite gradients)
    std::int64_t good_steps = 0;
    double learning_rate = 0; // the rate its update used (a skipped step: the one it would have)
    // The skipped-step ledger (issue 27): the parameter gradients ("dense_2/kernel") that held an
    // inf or NaN after this step's backward pass, in the order the backward pass wrote them, so
    // the first is where the overflow surfaced. Empty for a step without non-finite gradients
    // (and on a rank whose own gradients were finite when another rank's overflowed).
    std::vector<std::string> overflowed;
    MemoryByCategory memory; // bytes per category (constant for a compiled plan)
    std::size_t device_mem_used = 0;
    std::size_t device_mem_total = 0;
    // Data-parallel runs only (ranks > 1; absent from the JSONL of ordinary runs). loss,
    // accuracy and samples_per_s above are then over the global batch, step_ms the slowest rank's.
    int ranks = 1;
    std::vector<double> rank_step_ms; // each rank's wall time for this step, by rank
    std::vector<bool> rank_skipped;   // each rank's skip decision (they must all agree)
    double allreduce_ms = 0;          // the slowest rank's gradient exchange (casts + MPI)
    std::int64_t allreduce_bytes = 0; // gradient bytes each rank put into the allreduce
};

// How a data-parallel run was spread (the metrics header's "data_parallel" object).
struct DataParallelInfo {
    int ranks = 1;
    std::string allreduce_dtype; // "float32", "bfloat16", "float16"
    std::string communicator;    // "MPI (Open MPI v4.1.4)"
};

// "step 2 skipped: dense_2/kernel's gradient overflowed first (scale 32768; 5 gradients held inf
// or NaN)": what the Log and the loss-scale chart's marker say about a skipped step (a step of a
// file from before the ledger: that the gradients held inf or NaN, not which).
std::string skipped_step_text(const StepRecord& step);

struct EpochRecord {
    int epoch = 0;
    std::int64_t steps = 0;
    double loss = 0, accuracy = 0;         // training, averaged over the epoch's examples
    double val_loss = 0, val_accuracy = 0; // on the 10,000 test images
    double seconds = 0;                    // training time of the epoch (validation excluded)
    double median_step_ms = 0;
    std::int64_t skipped_steps = 0;
    double loss_scale = 1; // at the end of the epoch
};

enum class RunStatus { Completed, Stopped, Diverged, Failed };
const char* run_status_name(RunStatus status); // "completed", "stopped", "diverged", "failed"

struct RunSummary {
    RunStatus status = RunStatus::Completed;
    std::string message; // why it stopped, for the log and the banner
    std::int64_t steps = 0;
    int epochs = 0; // completed epochs
    double train_loss = 0, train_accuracy = 0;
    double val_loss = 0, val_accuracy = 0; // last evaluation (NaN when none ran)
    double seconds = 0;                    // training time, validation excluded
    double median_step_ms = 0;             // over all steps
    double samples_per_s = 0;              // at the median step time
    std::int64_t skipped_steps = 0;
    double seconds_to_97 = -1;   // training seconds until val_accuracy >= 97% (-1: never)
    std::size_t peak_memory = 0; // bytes held by the engine at its peak
};

} // namespace mantissa
