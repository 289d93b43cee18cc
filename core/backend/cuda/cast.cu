// cast's kernel: load as float (or double), store rounded once to the destination dtype.
// Same-dtype copies never reach here (the host issues a device-to-device copy instead).
// Between float32, float16 and bfloat16 an aligned tensor of whole vectors takes the fast path:
// eight elements a thread in 16-byte accesses, the same single rounding (issue 26: the generic
// kernel's per-element dtype switch ran 15 launches a step at well under the H100's bandwidth).
#include "core/backend/cuda/cast.cuh"
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/dtype_access.cuh"
#include "core/backend/cuda/vec8.cuh"

namespace mantissa::cuda {

namespace {

template <class T>
__global__ void cast_kernel(const void* src, DType from, void* dst, DType to, i64 count) {
    for (i64 i = blockIdx.x * i64(blockDim.x) + threadIdx.x; i < count;
         i += i64(gridDim.x) * blockDim.x)
        store<T>(dst, to, i, load<T>(src, from, i));
}

template <class From, class To>
__global__ void cast_vec_kernel(const From* src, To* dst, i64 vectors) {
    for (i64 v = blockIdx.x * i64(blockDim.x) + threadIdx.x; v < vectors;
         v += i64(gridDim.x) * blockDim.x) {
        float x[kVec];
        load8(src, v, x);
        store8(dst, v, x);
    }
}

bool cast_vec(const void* src, DType from, void* dst, DType to, i64 count, cudaStream_t stream) {
    if (count % kVec != 0 || !vec8_dtype(from) || !vec8_dtype(to) || !vec8_aligned(src) ||
        !vec8_aligned(dst))
        return false;
    const i64 vectors = count / kVec;
    const unsigned blocks = vec8_blocks(vectors);
    with_storage(from, [&](auto from_tag) {
        using From = typename decltype(from_tag)::type;
        with_storage(to, [&](auto to_tag) {
            using To = typename decltype(to_tag)::type;
            cast_vec_kernel<From, To><<<blocks, 256, 0, stream>>>(static_cast<const From*>(src),
                                                                  static_cast<To*>(dst), vectors);
        });
    });
    MANTISSA_CUDA_LAUNCH_CHECK();
    return true;
}

} // namespace

void launch_cast(const void* src, DType from, void* dst, DType to, std::int64_t count,
                 cudaStream_t stream) {
    if (count <= 0 || cast_vec(src, from, dst, to, count, stream)) return;
    const bool wide = from == DType::Float64 || to == DType::Float64 || from == DType::Int32 ||
                      to == DType::Int32;
    if (wide)
        cast_kernel<double><<<blocks_for(count), 256, 0, stream>>>(src, from, dst, to, count);
    else
        cast_kernel<float><<<blocks_for(count), 256, 0, stream>>>(src, from, dst, to, count);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

} // namespace mantissa::cuda
