// gather_batch's kernel: a few batch rows per thread block; rows >= count repeat the first row, as
// on the CPU. An out-of-range permutation entry (never produced by the trainer) reads image 0.
#include <cstdint>

#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/dtype_access.cuh"
#include "core/backend/cuda/gather_batch.cuh"

namespace mantissa::cuda {

namespace {

// `start`: the batch's first entry of `rows` (0, or the device-side position when it fits).
__device__ inline i64 image_of(const GatherArgs& a, i64 start, i64 r) {
    const std::int32_t index = a.rows[start + (r < a.count ? r : 0)];
    return index >= 0 && index < a.examples ? index : 0;
}

__device__ inline i64 start_of(const GatherArgs& a) {
    if (!a.position) return 0;
    const i64 p = *a.position;
    const i64 last = p + (a.count > 0 ? a.count : 1);
    return p >= 0 && last <= a.permutation_size ? p : 0;
}

// Four adjacent elements of a batch row, stored as one access (16 bytes for float32).
template <class U>
struct alignas(4 * sizeof(U)) Quad {
    U v[4];
};

// kRowsPerBlock batch rows per thread block (threadIdx.y), a grid-stride loop over rows; the pixel
// table copied once into shared memory. Where `quads` (a row length that is a multiple of 4: the
// rows of both the images and the batch then stay aligned to four elements), a thread reads four
// pixels as one 4-byte load and writes their four values as one store; otherwise one element at
// a time. Issue 26: one thread per element, with a 64-bit division per element and the table
// indexed in the kernel's parameters, took 0.05 ms for an 8192 x 784 batch on an H100; one block
// of 256 threads per row with one-byte loads, 0.039 ms on an H200 (2026-11-30), five times what
// its 32 MB of traffic need. __grid_constant__ lets the table be read where the parameters are,
// not copied per thread.
constexpr unsigned kRowThreads = 64, kRowsPerBlock = 4;

template <class U>
__global__ void gather_kernel(const __grid_constant__ GatherArgs a,
                              const __grid_constant__ PixelTable table, bool quads) {
    __shared__ U lut[256];
    const unsigned tid = threadIdx.y * blockDim.x + threadIdx.x;
    for (unsigned p = tid; p < 256; p += blockDim.x * blockDim.y)
        lut[p] = static_cast<U>(table.bits[p]);
    __syncthreads();
    U* out = static_cast<U*>(a.batch);
    const i64 start = start_of(a);
    for (i64 r = blockIdx.x * i64(blockDim.y) + threadIdx.y; r < a.batch_rows;
         r += i64(gridDim.x) * blockDim.y) {
        const i64 image = image_of(a, start, r);
        const std::uint8_t* pixels = a.images + image * a.features;
        U* row = out + r * a.features;
        if (quads) {
            const auto* in4 = reinterpret_cast<const uchar4*>(pixels);
            auto* out4 = reinterpret_cast<Quad<U>*>(row);
            for (i64 q = threadIdx.x; q < a.features / 4; q += blockDim.x) {
                const uchar4 p = in4[q];
                out4[q] = Quad<U>{{lut[p.x], lut[p.y], lut[p.z], lut[p.w]}};
            }
        } else {
            for (i64 f = threadIdx.x; f < a.features; f += blockDim.x) row[f] = lut[pixels[f]];
        }
        if (threadIdx.x == 0) a.batch_labels[r] = a.labels[image];
    }
}

template <class U>
void launch(const GatherArgs& a, const PixelTable& table, cudaStream_t stream) {
    if (a.batch_rows <= 0) return;
    const i64 blocks = (a.batch_rows + kRowsPerBlock - 1) / kRowsPerBlock;
    const unsigned grid = blocks > 8192 ? 8192u : static_cast<unsigned>(blocks);
    auto aligned = [](const void* p, std::size_t bytes) {
        return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
    };
    const bool quads =
        a.features % 4 == 0 && aligned(a.images, 4) && aligned(a.batch, sizeof(Quad<U>));
    gather_kernel<U><<<grid, dim3(kRowThreads, kRowsPerBlock), 0, stream>>>(a, table, quads);
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
