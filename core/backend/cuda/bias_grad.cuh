// bias_grad: db(j) = sum over rows of dy(r, j), for Dense (batch, units) and for a convolution's
// NHWC output read as (batch*h*w, channels). Deterministic: a fixed summation order.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "core/numeric/dtype.h"

namespace mantissa::cuda {

void launch_bias_grad(const void* dy, DType dy_dtype, std::int64_t rows, std::int64_t cols,
                      void* db, DType db_dtype, bool f64, cudaStream_t stream);

} // namespace mantissa::cuda
