// Whole-file reads and crash-safe writes for experiments, metrics summaries and exports.
// A write goes to a temp file in the same folder and is renamed over the target, so readers see
// the old file or the new one, never half of one.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace mantissa {

// Writes `path` + ".tmp-<pid>-<random>" beside `path`, fsyncs it and renames it over `path`.
// On any failure the temp file is removed and Error(Io) names the path and the system's reason;
// an existing `path` is then left as it was.
void write_file_atomic(const std::string& path, std::string_view contents);

// Receives a file's bytes in pieces, in order (what an exporter hands to the streaming writer).
using ByteSink = std::function<void(std::string_view bytes)>;

// The same guarantees for contents produced piece by piece (large exports are never held twice):
// `produce` calls the sink any number of times. An exception from `produce` removes the temp file,
// leaves `path` as it was and propagates; a process killed inside `produce` leaves at most a
// stray temp file, never a half file under `path`.
void write_file_atomic(const std::string& path,
                       const std::function<void(const ByteSink&)>& produce);

// The whole file as bytes. Throws Error(Io) naming the path and the system's reason.
std::string read_file(const std::string& path);

} // namespace mantissa
