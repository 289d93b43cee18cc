// The epilogue kernel: one thread per element; in place when acc == out (each element is read
// before it is written by the same thread).
#include "core/backend/cuda/activation_math.cuh"
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/dtype_access.cuh"
#include "core/backend/cuda/gemm_epilogue.cuh"

namespace mantissa::cuda {

namespace {

template <class T>
__global__ void epilogue_kernel(EpilogueArgs a) {
    const i64 count = a.rows * a.cols;
    for (i64 i = blockIdx.x * i64(blockDim.x) + threadIdx.x; i < count;
         i += i64(gridDim.x) * blockDim.x) {
        T v = load<T>(a.acc, a.acc_dtype, i);
        if (a.bias) v += load<T>(a.bias, a.bias_dtype, i % a.cols);
        if (a.pre) store<T>(a.pre, a.pre_dtype, i, v);
        store<T>(a.out, a.out_dtype, i, activate<T>(a.act, v));
    }
}

} // namespace

void launch_gemm_epilogue(const EpilogueArgs& args, cudaStream_t stream) {
    const i64 count = args.rows * args.cols;
    if (count <= 0) return;
    if (args.f64)
        epilogue_kernel<double><<<blocks_for(count), 256, 0, stream>>>(args);
    else
        epilogue_kernel<float><<<blocks_for(count), 256, 0, stream>>>(args);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

} // namespace mantissa::cuda
