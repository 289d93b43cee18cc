// fill's kernel: one store of the prepared bit pattern per element (grid-stride).
// The rounding happened once on the host (convert_from_double), so both engines hold equal bits.
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/dtype_access.cuh"
#include "core/backend/cuda/fill.cuh"

namespace mantissa::cuda {

namespace {

template <class U>
__global__ void fill_kernel(U* data, i64 count, U bits) {
    for (i64 i = blockIdx.x * i64(blockDim.x) + threadIdx.x; i < count;
         i += i64(gridDim.x) * blockDim.x)
        data[i] = bits;
}

template <class U>
void launch(void* data, i64 count, std::uint64_t bits, cudaStream_t stream) {
    fill_kernel<U>
        <<<blocks_for(count), 256, 0, stream>>>(static_cast<U*>(data), count, static_cast<U>(bits));
    MANTISSA_CUDA_LAUNCH_CHECK();
}

} // namespace

void launch_fill_bits(void* data, std::size_t elem_size, std::int64_t count, std::uint64_t bits,
                      cudaStream_t stream) {
    if (count <= 0) return;
    switch (elem_size) {
    case 1:
        launch<std::uint8_t>(data, count, bits, stream);
        return;
    case 2:
        launch<std::uint16_t>(data, count, bits, stream);
        return;
    case 4:
        launch<std::uint32_t>(data, count, bits, stream);
        return;
    default:
        launch<std::uint64_t>(data, count, bits, stream);
        return;
    }
}

} // namespace mantissa::cuda
