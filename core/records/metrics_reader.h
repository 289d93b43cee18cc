// Metrics JSONL reader: parses a file written by MetricsJsonlWriter back into the records the
// Trainer emitted, so the app can reopen past runs and the CLI and fuzzers can reuse one parser.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor/memory_category.h"
#include "core/train/experiment.h"
#include "core/train/gradient_histogram.h"
#include "core/train/metrics.h"
#include "core/train/quant_record.h"

namespace mantissa {

// Everything one metrics file holds. `summary` is empty for a run cut short (the app or the CLI
// was killed): such a run is "incomplete" and its steps and epochs are still there.
struct RunMetrics {
    std::optional<Experiment> config; // from the `run` header (absent when the file has none)
    std::string device_id, device_name;
    std::size_t device_memory_total = 0;
    MemoryByCategory memory;                       // the header's bytes per category (plan + data)
    std::optional<DataParallelInfo> data_parallel; // the header's, for data-parallel runs
    std::vector<StepRecord> steps;
    std::vector<EpochRecord> epochs;
    std::vector<GradientHistogram> histograms; // `histogram` records, in order
    std::vector<QuantRecord> quant;            // `quant` records (quantised policies), in order
    std::optional<RunSummary> summary;
    std::vector<std::string> log; // `log` records, in order
    // The last line had no newline and did not parse: the writer was killed mid-line.
    bool truncated_tail = false;

    bool complete() const { return summary.has_value(); }
};

// Parses JSONL text. `source` names the file in messages. A line that is not a JSON object, lacks
// a known field or has one of the wrong type throws Error(Data) naming the source, the 1-based
// line and the field ("run-3/metrics.jsonl: line 17: field 'loss': expected a number").
// A `histogram` record whose bin layout differs from this build's is an error naming the field.
// Records of unknown types are skipped (newer writers may add some); null numbers read as NaN.
// Only a final line without its newline may be unparseable: it is dropped (see truncated_tail).
RunMetrics parse_metrics_jsonl(const std::string& text, const std::string& source);

// Reads and parses a file; Error(Io) when it cannot be read.
RunMetrics read_metrics_jsonl(const std::string& path);

} // namespace mantissa
