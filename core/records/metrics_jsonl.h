// Metrics JSONL writer: a `run` header, `step` and `epoch` records, and a `summary`, one JSON
// object per line (see ARCHITECTURE.md). Flushed every epoch so a cut-short run stays readable.
#pragma once

#include <fstream>
#include <string>

#include "core/backend/backend.h"
#include "core/plan/plan.h"
#include "core/train/experiment.h"
#include "core/train/gradient_histogram.h"
#include "core/train/metrics.h"
#include "core/train/quant_record.h"

namespace mantissa {

class MetricsJsonlWriter {
public:
    // Opens (truncates) `path`; throws Error(Io) naming the path.
    explicit MetricsJsonlWriter(const std::string& path);

    // `parallel` (data-parallel runs) adds {"data_parallel": {ranks, allreduce_dtype,
    // communicator}}; a reader that does not know it skips it.
    void write_header(const Experiment& experiment, const DeviceInfo& device, const Plan& plan,
                      const MemoryByCategory& memory, const DataParallelInfo* parallel = nullptr);
    // Data-parallel steps (record.ranks > 1) add ranks, rank_step_ms, rank_skipped, allreduce_ms
    // and allreduce_bytes; ordinary steps are written exactly as before.
    void write_step(const StepRecord& record);
    void write_epoch(const EpochRecord& record);   // also flushes
    void write_summary(const RunSummary& summary); // also flushes
    void write_log(const std::string& message);
    void flush(); // data-parallel runs flush every step: a killed job keeps its steps
    // {"type": "histogram", step, loss_scale, min_exponent, layers: [{name, activation, weight}],
    //  all: {activation, weight}}: each list is the kHistogramBins counts of histogram.h.
    void write_histogram(const GradientHistogram& histogram);
    // {"type": "quant", step, tensors: [{layer, role, format, amax, scale, clipped, flushed,
    //  count, blocks}]}: the frontier policies' scaling statistics (clipped, flushed: shares 0..1;
    //  a non-finite amax or scale is written as null).
    void write_quant(const QuantRecord& record);

private:
    void write_line(const std::string& line);

    std::string m_path;
    std::ofstream m_out;
};

} // namespace mantissa
