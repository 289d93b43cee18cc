// bias_grad: db(j) = sum over rows of dy(r, j), for Dense (batch, units) and for a convolution's
// NHWC output read as (batch*h*w, channels). Deterministic: a fixed summation order.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "core/numeric/dtype.h"

namespace mantissa::cuda {

// Bytes of device scratch for the per-chunk partial sums (one engine's, reused in stream order,
// allocated once so that a captured step allocates nothing).
inline constexpr std::size_t kBiasGradScratchBytes = std::size_t(1) << 20;

// `scratch`: kBiasGradScratchBytes on the device (null: the one-stage kernel).
void launch_bias_grad(const void* dy, DType dy_dtype, std::int64_t rows, std::int64_t cols,
                      void* db, DType db_dtype, bool f64, void* scratch, cudaStream_t stream);

} // namespace mantissa::cuda
