// filter_layout: transposes a (rows, cols) matrix of 2-, 4- or 8-byte elements; turns Keras's
// HWIO filters into cuDNN's KRSC ("NHWC" filters) and the filter gradient back.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace mantissa::cuda {

// dst (cols, rows) = src (rows, cols)^T, bit for bit.
void launch_transpose(const void* src, std::int64_t rows, std::int64_t cols, void* dst,
                      std::size_t elem_size, cudaStream_t stream);

} // namespace mantissa::cuda
