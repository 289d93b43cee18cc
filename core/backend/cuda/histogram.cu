// exponent_histogram's kernel: per-block counters in shared memory, then one atomic add per bin.
// Integer atomics, so the counts are exact and independent of the order.
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/dtype_access.cuh"
#include "core/backend/cuda/histogram.cuh"
#include "core/backend/histogram.h"

namespace mantissa::cuda {

namespace {

// histogram_bin() of histogram.cpp: frexp is exact for every finite double.
__device__ inline int bin_of(double x) {
    if (x == 0.0) return kHistogramZeroBin;
    if (!isfinite(x)) return kHistogramNonFiniteBin;
    int exponent = 0;
    frexp(x, &exponent);
    int e = exponent - 1;
    e = e < kHistogramMinExp ? kHistogramMinExp : (e > kHistogramMaxExp ? kHistogramMaxExp : e);
    return 1 + (e - kHistogramMinExp);
}

__global__ void histogram_kernel(const void* x, DType dt, i64 count, std::int32_t* counts) {
    __shared__ int local[kHistogramBins];
    for (int b = threadIdx.x; b < kHistogramBins; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (i64 i = blockIdx.x * i64(blockDim.x) + threadIdx.x; i < count;
         i += i64(gridDim.x) * blockDim.x)
        atomicAdd(&local[bin_of(load_double(x, dt, i))], 1);
    __syncthreads();
    for (int b = threadIdx.x; b < kHistogramBins; b += blockDim.x)
        if (local[b]) atomicAdd(&counts[b], local[b]);
}

} // namespace

void launch_exponent_histogram(const void* x, DType dtype, std::int64_t count, std::int32_t* counts,
                               cudaStream_t stream) {
    if (count <= 0) return;
    const unsigned blocks = blocks_for(count) > 1024 ? 1024 : blocks_for(count);
    histogram_kernel<<<blocks, 256, 0, stream>>>(x, dtype, count, counts);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

} // namespace mantissa::cuda
