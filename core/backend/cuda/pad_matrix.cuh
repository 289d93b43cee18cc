// pad_matrix: copies a row-major (rows, cols) matrix of 1- or 2-byte elements into a larger
// (padded_rows, padded_cols) one with zeros around it. The GEMMs use it for operands whose rows
// miss cuBLASLt's multiples (a 10-unit layer, a batch of 100): FP8 codes to multiples of 16,
// float16 and bfloat16 to multiples of 8. A zero code or a +0.0 decodes to 0, so the padded
// product's first (m, n) block is the product itself.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace mantissa::cuda {

// element_bytes: 1 (FP8 codes) or 2 (float16, bfloat16); anything else throws Internal.
void launch_pad_matrix(const void* src, int element_bytes, std::int64_t rows, std::int64_t cols,
                       void* dst, std::int64_t padded_rows, std::int64_t padded_cols,
                       cudaStream_t stream);

} // namespace mantissa::cuda
