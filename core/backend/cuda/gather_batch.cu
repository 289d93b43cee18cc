// gather_batch's kernel: one thread per batch element; rows >= count repeat the first row, as on
// the CPU. An out-of-range permutation entry (never produced by the trainer) reads image 0.
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/dtype_access.cuh"
#include "core/backend/cuda/gather_batch.cuh"

namespace mantissa::cuda {

namespace {

__device__ inline i64 image_of(const GatherArgs& a, i64 r) {
    const std::int32_t index = a.rows[r < a.count ? r : 0];
    return index >= 0 && index < a.examples ? index : 0;
}

template <class U>
__global__ void gather_kernel(GatherArgs a, PixelTable table) {
    const i64 total = a.batch_rows * a.features;
    U* out = static_cast<U*>(a.batch);
    for (i64 e = blockIdx.x * i64(blockDim.x) + threadIdx.x; e < total;
         e += i64(gridDim.x) * blockDim.x) {
        const i64 r = e / a.features, f = e - r * a.features;
        const i64 image = image_of(a, r);
        out[e] = static_cast<U>(table.bits[a.images[image * a.features + f]]);
        if (f == 0) a.batch_labels[r] = a.labels[image];
    }
}

template <class U>
void launch(const GatherArgs& a, const PixelTable& table, cudaStream_t stream) {
    gather_kernel<U><<<blocks_for(a.batch_rows * a.features), 256, 0, stream>>>(a, table);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

} // namespace

void launch_gather_batch(const GatherArgs& args, const PixelTable& table, cudaStream_t stream) {
    switch (args.elem_size) {
    case 1:
        launch<std::uint8_t>(args, table, stream);
        return;
    case 2:
        launch<std::uint16_t>(args, table, stream);
        return;
    case 4:
        launch<std::uint32_t>(args, table, stream);
        return;
    default:
        launch<std::uint64_t>(args, table, stream);
        return;
    }
}

} // namespace mantissa::cuda
