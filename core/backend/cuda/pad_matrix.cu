// pad_matrix's kernel: one thread per element of the padded matrix (grid-stride). The operands it
// pads are small (a 10-unit layer's W or dY: at most a few hundred kilobytes a step).
#include <string>

#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/dtype_access.cuh"
#include "core/backend/cuda/pad_matrix.cuh"
#include "core/error.h"

namespace mantissa::cuda {

namespace {

template <class T>
__global__ void pad_kernel(const T* src, i64 rows, i64 cols, T* dst, i64 padded_rows,
                           i64 padded_cols) {
    const i64 count = padded_rows * padded_cols;
    for (i64 i = blockIdx.x * i64(blockDim.x) + threadIdx.x; i < count;
         i += i64(gridDim.x) * blockDim.x) {
        const i64 r = i / padded_cols, c = i - r * padded_cols;
        dst[i] = r < rows && c < cols ? src[r * cols + c] : T{0};
    }
}

} // namespace

void launch_pad_matrix(const void* src, int element_bytes, std::int64_t rows, std::int64_t cols,
                       void* dst, std::int64_t padded_rows, std::int64_t padded_cols,
                       cudaStream_t stream) {
    const i64 count = padded_rows * padded_cols;
    if (count <= 0) return;
    if (element_bytes == 1)
        pad_kernel<<<blocks_for(count), 256, 0, stream>>>(
            static_cast<const std::uint8_t*>(src), rows, cols, static_cast<std::uint8_t*>(dst),
            padded_rows, padded_cols);
    else if (element_bytes == 2)
        pad_kernel<<<blocks_for(count), 256, 0, stream>>>(
            static_cast<const std::uint16_t*>(src), rows, cols, static_cast<std::uint16_t*>(dst),
            padded_rows, padded_cols);
    else
        throw Error(ErrorKind::Internal, "pad_matrix: elements of " +
                                             std::to_string(element_bytes) +
                                             " bytes (1 or 2 expected)");
    MANTISSA_CUDA_LAUNCH_CHECK();
}

} // namespace mantissa::cuda
