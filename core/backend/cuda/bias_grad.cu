// bias_grad's kernel: a 32x32 block owns 32 columns; its 32 thread rows stride down the rows
// (coalesced reads), then one thread per column adds the 32 partial sums in order.
#include "core/backend/cuda/bias_grad.cuh"
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/dtype_access.cuh"

namespace mantissa::cuda {

namespace {

template <class T>
__global__ void bias_grad_kernel(const void* dy, DType dydt, i64 rows, i64 cols, void* db,
                                 DType dbdt) {
    __shared__ T part[32][33];
    const i64 j = blockIdx.x * i64(32) + threadIdx.x;
    T acc = T(0);
    if (j < cols)
        for (i64 r = threadIdx.y; r < rows; r += 32) acc += load<T>(dy, dydt, r * cols + j);
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && j < cols) {
        T sum = T(0);
        for (int k = 0; k < 32; ++k) sum += part[k][threadIdx.x];
        store<T>(db, dbdt, j, sum);
    }
}

} // namespace

void launch_bias_grad(const void* dy, DType dy_dtype, std::int64_t rows, std::int64_t cols,
                      void* db, DType db_dtype, bool f64, cudaStream_t stream) {
    if (cols <= 0) return;
    const dim3 block(32, 32);
    const dim3 grid(static_cast<unsigned>((cols + 31) / 32));
    if (f64)
        bias_grad_kernel<double>
            <<<grid, block, 0, stream>>>(dy, dy_dtype, rows, cols, db, db_dtype);
    else
        bias_grad_kernel<float><<<grid, block, 0, stream>>>(dy, dy_dtype, rows, cols, db, db_dtype);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

} // namespace mantissa::cuda
