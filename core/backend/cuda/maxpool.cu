// maxpool kernels: forward one thread per output element (values compared as float/double, which
// orders them exactly as the CPU's bit keys do; the maximum's bits are copied unchanged); backward
// one thread per input element, gathering from the windows that cover it (no atomics, no races).
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/dtype_access.cuh"
#include "core/backend/cuda/maxpool.cuh"

namespace mantissa::cuda {

namespace {

template <class U>
__global__ void forward_kernel(PoolGeom g, const void* x, DType dt, void* y, std::int32_t* argmax) {
    const i64 count = g.batch * g.out_h * g.out_w * g.channels;
    for (i64 e = blockIdx.x * i64(blockDim.x) + threadIdx.x; e < count;
         e += i64(gridDim.x) * blockDim.x) {
        const i64 c = e % g.channels;
        i64 rest = e / g.channels;
        const i64 ow = rest % g.out_w;
        rest /= g.out_w;
        const i64 oh = rest % g.out_h, n = rest / g.out_h;
        i64 best = -1;
        double best_v = 0.0;
        for (i64 ph = 0; ph < g.pool_h; ++ph)
            for (i64 pw = 0; pw < g.pool_w; ++pw) {
                const i64 ih = oh * g.stride_h + ph, iw = ow * g.stride_w + pw;
                const i64 index = ((n * g.in_h + ih) * g.in_w + iw) * g.channels + c;
                const double v = load_double(x, dt, index);
                const bool take = best < 0 || v > best_v || (isnan(v) && !isnan(best_v));
                if (take) {
                    best = index;
                    best_v = v;
                }
            }
        static_cast<U*>(y)[e] = static_cast<const U*>(x)[best];
        argmax[e] = static_cast<std::int32_t>(best);
    }
}

// The first window (along one axis) that covers input i: the smallest o with o*stride + pool > i.
__device__ inline i64 first_window(i64 i, i64 pool, i64 stride) {
    return i < pool ? 0 : (i - pool) / stride + 1;
}

template <class T>
__global__ void backward_kernel(PoolGeom g, const void* dy, DType dydt, const std::int32_t* argmax,
                                void* dx, DType dxdt) {
    const i64 count = g.batch * g.in_h * g.in_w * g.channels;
    for (i64 e = blockIdx.x * i64(blockDim.x) + threadIdx.x; e < count;
         e += i64(gridDim.x) * blockDim.x) {
        const i64 c = e % g.channels;
        i64 rest = e / g.channels;
        const i64 iw = rest % g.in_w;
        rest /= g.in_w;
        const i64 ih = rest % g.in_h, n = rest / g.in_h;
        const i64 oh_end = min(g.out_h, ih / g.stride_h + 1),
                  ow_end = min(g.out_w, iw / g.stride_w + 1);
        T acc = T(0);
        for (i64 oh = first_window(ih, g.pool_h, g.stride_h); oh < oh_end; ++oh)
            for (i64 ow = first_window(iw, g.pool_w, g.stride_w); ow < ow_end; ++ow) {
                const i64 o = ((n * g.out_h + oh) * g.out_w + ow) * g.channels + c;
                if (argmax[o] == e) acc += load<T>(dy, dydt, o);
            }
        store<T>(dx, dxdt, e, acc);
    }
}

template <class U>
void forward(const PoolGeom& g, const void* x, DType dt, void* y, std::int32_t* argmax,
             cudaStream_t stream) {
    forward_kernel<U><<<blocks_for(g.batch * g.out_h * g.out_w * g.channels), 256, 0, stream>>>(
        g, x, dt, y, argmax);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

} // namespace

void launch_maxpool_forward(const PoolGeom& g, const void* x, DType dtype, void* y,
                            std::int32_t* argmax, cudaStream_t stream) {
    if (g.batch * g.out_h * g.out_w * g.channels <= 0) return;
    switch (dtype_size(dtype)) {
    case 2:
        forward<std::uint16_t>(g, x, dtype, y, argmax, stream);
        return;
    case 4:
        forward<std::uint32_t>(g, x, dtype, y, argmax, stream);
        return;
    default:
        forward<std::uint64_t>(g, x, dtype, y, argmax, stream);
        return;
    }
}

void launch_maxpool_backward(const PoolGeom& g, const void* dy, DType dy_dtype,
                             const std::int32_t* argmax, void* dx, DType dx_dtype, bool f64,
                             cudaStream_t stream) {
    const i64 count = g.batch * g.in_h * g.in_w * g.channels;
    if (count <= 0) return;
    if (f64)
        backward_kernel<double>
            <<<blocks_for(count), 256, 0, stream>>>(g, dy, dy_dtype, argmax, dx, dx_dtype);
    else
        backward_kernel<float>
            <<<blocks_for(count), 256, 0, stream>>>(g, dy, dy_dtype, argmax, dx, dx_dtype);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

} // namespace mantissa::cuda
