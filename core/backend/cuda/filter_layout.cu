// The transpose kernel: one thread per element (filters are small; no tiling needed).
// Pure bit moves, so no rounding happens.
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/dtype_access.cuh"
#include "core/backend/cuda/filter_layout.cuh"

namespace mantissa::cuda {

namespace {

template <class U>
__global__ void transpose_kernel(const U* src, i64 rows, i64 cols, U* dst) {
    const i64 count = rows * cols;
    for (i64 i = blockIdx.x * i64(blockDim.x) + threadIdx.x; i < count;
         i += i64(gridDim.x) * blockDim.x) {
        const i64 r = i / cols, c = i - r * cols;
        dst[c * rows + r] = src[i];
    }
}

template <class U>
void launch(const void* src, i64 rows, i64 cols, void* dst, cudaStream_t stream) {
    transpose_kernel<U><<<blocks_for(rows * cols), 256, 0, stream>>>(
        static_cast<const U*>(src), rows, cols, static_cast<U*>(dst));
    MANTISSA_CUDA_LAUNCH_CHECK();
}

} // namespace

void launch_transpose(const void* src, std::int64_t rows, std::int64_t cols, void* dst,
                      std::size_t elem_size, cudaStream_t stream) {
    if (rows * cols <= 0) return;
    switch (elem_size) {
    case 2:
        launch<std::uint16_t>(src, rows, cols, dst, stream);
        return;
    case 4:
        launch<std::uint32_t>(src, rows, cols, dst, stream);
        return;
    default:
        launch<std::uint64_t>(src, rows, cols, dst, stream);
        return;
    }
}

} // namespace mantissa::cuda
