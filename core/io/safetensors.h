// safetensors (Hugging Face's format): an 8-byte little-endian header length, a JSON header with
// each tensor's dtype, shape and byte offsets plus a string __metadata__ map, then the raw bytes.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/io/model_weights.h"

namespace mantissa {

// "F32", "F16", "BF16", "F64", "F8_E4M3", "F8_E5M2", "U8", "I32".
std::string safetensors_dtype_name(DType dtype);

// Writes the weights (in their stored dtype, or all converted to `dtype`) and `metadata` (the
// __metadata__ map: export_metadata() for a trained model) atomically. Throws Error(Io) naming
// the path.
void write_safetensors(const ModelWeights& weights,
                       const std::map<std::string, std::string>& metadata, const std::string& path,
                       std::optional<DType> dtype = std::nullopt);

struct SafetensorsFile {
    ModelWeights weights; // in file order
    std::map<std::string, std::string> metadata;
};

// Parses and checks the whole file: header length, JSON, dtypes, shapes and that every tensor's
// bytes lie inside the file. Throws Error(Config) starting with the path and saying what is wrong
// (a truncated file, a bad header, which tensor); Error(Io) when it cannot be read.
SafetensorsFile read_safetensors(const std::string& path);

} // namespace mantissa
