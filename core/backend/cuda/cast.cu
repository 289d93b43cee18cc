// cast's kernel: load as float (or double), store rounded once to the destination dtype.
// Same-dtype copies never reach here (the host issues a device-to-device copy instead).
#include "core/backend/cuda/cast.cuh"
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/dtype_access.cuh"

namespace mantissa::cuda {

namespace {

template <class T>
__global__ void cast_kernel(const void* src, DType from, void* dst, DType to, i64 count) {
    for (i64 i = blockIdx.x * i64(blockDim.x) + threadIdx.x; i < count;
         i += i64(gridDim.x) * blockDim.x)
        store<T>(dst, to, i, load<T>(src, from, i));
}

} // namespace

void launch_cast(const void* src, DType from, void* dst, DType to, std::int64_t count,
                 cudaStream_t stream) {
    if (count <= 0) return;
    const bool wide = from == DType::Float64 || to == DType::Float64 || from == DType::Int32 ||
                      to == DType::Int32;
    if (wide)
        cast_kernel<double><<<blocks_for(count), 256, 0, stream>>>(src, from, dst, to, count);
    else
        cast_kernel<float><<<blocks_for(count), 256, 0, stream>>>(src, from, dst, to, count);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

} // namespace mantissa::cuda
