// pad_matrix: copies a row-major (rows, cols) matrix of 1-byte elements into a larger
// (padded_rows, padded_cols) one with zeros around it. The FP8 GEMM uses it for operands whose
// sizes miss cuBLASLt's multiples of 16 (a 10-unit layer, a batch of 100): a zero code decodes
// to 0, so the padded product's first (m, n) block is the product itself.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace mantissa::cuda {

void launch_pad_matrix_bytes(const void* src, std::int64_t rows, std::int64_t cols, void* dst,
                             std::int64_t padded_rows, std::int64_t padded_cols,
                             cudaStream_t stream);

} // namespace mantissa::cuda
