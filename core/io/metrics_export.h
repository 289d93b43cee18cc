// Metrics export: a run's metrics JSONL as CSV tables (one row per step, one per epoch) and as one
// JSON document, for spreadsheets, pandas and plotting scripts. Used by `mantissa-cli metrics`
// and the app.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace mantissa {

struct MetricsRun {
    std::string source;               // the JSONL path, for messages
    std::vector<std::string> records; // each line's JSON text, in order (blank lines dropped)
    bool complete = false;            // a `summary` record was found
    bool truncated_tail = false;      // the last line was cut off (a run killed mid-write)
};

// Reads a metrics JSONL. A last line cut off mid-write is dropped (truncated_tail) so a run cut
// short stays readable; any other line that is not a JSON object is an Error(Config) naming the
// file and line number. Error(Io) when unreadable.
MetricsRun read_metrics_jsonl(const std::string& path);

// CSV of the records of one type ("step" or "epoch"): a header of every field seen, nested
// objects flattened with dots ("mem.weights"); step, epoch, loss, accuracy, val_loss and
// val_accuracy lead, the rest follow in first-seen order; null (a NaN the writer could not store)
// becomes "nan"; booleans 0/1; strings quoted when needed (RFC 4180).
std::string metrics_csv(const MetricsRun& run, const std::string& type);

// {"run": header, "steps": [...], "epochs": [...], "summary": {...} or null, "logs": [...],
//  "other": [records of other types], "complete": bool}.
std::string metrics_json(const MetricsRun& run);

} // namespace mantissa
