// dropout's kernel: one thread per element; the mask byte is written (forward) or read
// (backward), and the kept values are multiplied by the scale and rounded once.
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/dropout.cuh"
#include "core/backend/cuda/dtype_access.cuh"
#include "core/backend/dropout_hash.h"

namespace mantissa::cuda {

namespace {

template <class T>
__global__ void dropout_kernel(DropoutArgs a) {
    const T scale = static_cast<T>(a.scale);
    for (i64 i = blockIdx.x * i64(blockDim.x) + threadIdx.x; i < a.count;
         i += i64(gridDim.x) * blockDim.x) {
        bool keep;
        if (a.make_mask) {
            keep = dropout_keep(a.seed, static_cast<std::uint64_t>(i), a.threshold);
            a.mask[i] = keep ? 1 : 0;
        } else {
            keep = a.mask[i] != 0;
        }
        store<T>(a.y, a.y_dtype, i, keep ? load<T>(a.x, a.x_dtype, i) * scale : T(0));
    }
}

} // namespace

void launch_dropout(const DropoutArgs& args, cudaStream_t stream) {
    if (args.count <= 0) return;
    if (args.f64)
        dropout_kernel<double><<<blocks_for(args.count), 256, 0, stream>>>(args);
    else
        dropout_kernel<float><<<blocks_for(args.count), 256, 0, stream>>>(args);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

} // namespace mantissa::cuda
