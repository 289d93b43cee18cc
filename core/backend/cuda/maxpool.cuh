// maxpool forward/backward over NHWC ("valid"), with the CPU engine's rules: the first maximum
// of a window wins a tie, NaN wins over numbers, argmax holds the flat input index (int32).
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "core/numeric/dtype.h"

namespace mantissa::cuda {

struct PoolGeom { // Pool2dArgs, as kernels see it
    std::int64_t batch = 0, in_h = 0, in_w = 0, channels = 0;
    std::int64_t out_h = 0, out_w = 0;
    std::int64_t pool_h = 2, pool_w = 2, stride_h = 2, stride_w = 2;
};

void launch_maxpool_forward(const PoolGeom& g, const void* x, DType dtype, void* y,
                            std::int32_t* argmax, cudaStream_t stream);
// dx(i) = sum of dy over the windows whose argmax is i (a copy when windows do not overlap).
void launch_maxpool_backward(const PoolGeom& g, const void* dy, DType dy_dtype,
                             const std::int32_t* argmax, void* dx, DType dx_dtype, bool f64,
                             cudaStream_t stream);

} // namespace mantissa::cuda
