// NPZ (numpy.savez's format): a ZIP of .npy arrays, one per weight ("dense_1.kernel.npy"), so
// `numpy.load("model.npz")["dense_1.kernel"]` gives the array. Weights only: no metadata member.
#pragma once

#include <optional>
#include <string>

#include "core/io/model_weights.h"

namespace mantissa {

// The .npy (format 1.0) header for a little-endian array of `dtype` and `shape`, padded with
// spaces to a multiple of 64 bytes and ending in '\n', as numpy writes it.
std::string npy_header(DType dtype, const Shape& shape);

// Writes every tensor as .npy, stored (uncompressed), atomically. NumPy has no bfloat16 or float8,
// so such tensors are widened to float32 (exact) unless `dtype` names a NumPy dtype for all.
// Throws Error(InvalidArgument) when `dtype` is bfloat16 / float8, Error(Io) naming the path.
void write_npz(const ModelWeights& weights, const std::string& path,
               std::optional<DType> dtype = std::nullopt);

} // namespace mantissa
