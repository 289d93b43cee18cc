// Whole-file reads and crash-safe writes for experiments, metrics summaries and exports.
// A write goes to a temp file in the same folder and is renamed over the target, so readers see
// the old file or the new one, never half of one.
#pragma once

#include <string>
#include <string_view>

namespace mantissa {

// Writes `path` + ".tmp-<pid>-<random>" beside `path`, fsyncs it and renames it over `path`.
// On any failure the temp file is removed and Error(Io) names the path and the system's reason;
// an existing `path` is then left as it was.
void write_file_atomic(const std::string& path, std::string_view contents);

// The whole file as bytes. Throws Error(Io) naming the path and the system's reason.
std::string read_file(const std::string& path);

} // namespace mantissa
