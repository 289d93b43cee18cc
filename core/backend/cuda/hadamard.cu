// The random Hadamard transform's kernel: one thread per (run of 16 rows, column), so a warp's
// 32 threads read 32 adjacent columns of each row (coalesced) and keep the run in registers.
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/dtype_access.cuh"
#include "core/backend/cuda/hadamard.cuh"
#include "core/numeric/hadamard_math.h"

namespace mantissa::cuda {

namespace {

namespace hm = hadamard_math;

__global__ void hadamard_kernel(float* data, i64 runs, i64 cols, HadamardSigns signs) {
    for (i64 t = blockIdx.x * i64(blockDim.x) + threadIdx.x; t < runs * cols;
         t += i64(gridDim.x) * blockDim.x) {
        const i64 run = t / cols, col = t % cols;
        float* first = data + run * hm::kRun * cols + col;
        float v[hm::kRun];
        for (int i = 0; i < hm::kRun; ++i) v[i] = first[i * cols];
        hm::random_hadamard_run(v, signs.s);
        for (int i = 0; i < hm::kRun; ++i) first[i * cols] = v[i];
    }
}

} // namespace

void launch_random_hadamard_rows(float* data, std::int64_t rows, std::int64_t cols,
                                 const HadamardSigns& signs, cudaStream_t stream) {
    const i64 runs = rows / hm::kRun;
    if (runs <= 0 || cols <= 0) return;
    hadamard_kernel<<<blocks_for(runs * cols), 256, 0, stream>>>(data, runs, cols, signs);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

} // namespace mantissa::cuda
