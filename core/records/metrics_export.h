// Metrics export: one run's records as CSV (a row per step, for spreadsheets and pandas) or as
// one JSON document (config, steps, epochs, summary), written atomically by the app and the CLI.
#pragma once

#include <string>

#include "core/records/metrics_reader.h"

namespace mantissa {

// A header row, then one row per step: step, epoch, loss, accuracy, step_ms, samples_per_s,
// loss_scale, skipped (0/1), good_steps, mem_total, device_mem_used, and val_loss / val_accuracy
// on the last step of each epoch that was validated (empty elsewhere). NaN is an empty cell.
std::string metrics_to_csv(const RunMetrics& run);

// The `quant` records in long form, for spreadsheets and pivot tables: a header row, then one row
// per quantised tensor per record: step, layer, role, format, amax, scale, clipped, flushed
// (shares 0..1), count, blocks. A header only for a run whose policy does not quantise.
std::string quant_to_csv(const RunMetrics& run);

// {"format": "mantissa-metrics", "version": 1, "name", "status", "device", "config", "memory",
//  "steps": [...], "epochs": [...], "quant": [{step, tensors}], "summary": {...} | null}. Field
// names follow the JSONL; NaN is null. `name` and `status` are the caller's (the app's run
// name, "incomplete", ...).
std::string metrics_to_json(const RunMetrics& run, const std::string& name,
                            const std::string& status);

// Write the above with write_file_atomic; Error(Io) names the path.
void export_metrics_csv(const RunMetrics& run, const std::string& path);
void export_quant_csv(const RunMetrics& run, const std::string& path);
void export_metrics_json(const RunMetrics& run, const std::string& name, const std::string& status,
                         const std::string& path);

} // namespace mantissa
