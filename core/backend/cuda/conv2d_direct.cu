// Direct convolution kernels: one thread per output element of y and dx, one block per weight of
// dw (a fixed-order reduction over batch·h·w); every sum runs in an order fixed by the shape, so
// results are deterministic. Simple rather than fast.
#include "core/backend/cuda/activation_math.cuh"
#include "core/backend/cuda/conv2d_direct.cuh"
#include "core/backend/cuda/conv_filter_taps.h"
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/dtype_access.cuh"
#include "core/backend/tensor_scales.h"

namespace mantissa::cuda {

namespace {

// The sum times the pass's tensor scales (ConvIo::a_scale, b_scale); the sum itself without them.
template <class T>
__device__ T scaled(const ConvIo& io, T sum) {
    if (!io.a_scale && !io.b_scale) return sum;
    return sum * tensor_scale_product<T>(io.a_scale, io.b_scale);
}

template <class T>
__global__ void forward_kernel(ConvGeom g, ConvIo io) {
    const i64 count = g.batch * g.out_h * g.out_w * g.out_c;
    for (i64 e = blockIdx.x * i64(blockDim.x) + threadIdx.x; e < count;
         e += i64(gridDim.x) * blockDim.x) {
        const i64 oc = e % g.out_c;
        i64 rest = e / g.out_c;
        const i64 ow = rest % g.out_w;
        rest /= g.out_w;
        const i64 oh = rest % g.out_h, n = rest / g.out_h;
        T acc = T(0);
        for (i64 kh = 0; kh < g.kernel_h; ++kh) {
            const i64 ih = oh * g.stride_h + kh - g.pad_top;
            if (ih < 0 || ih >= g.in_h) continue;
            for (i64 kw = 0; kw < g.kernel_w; ++kw) {
                const i64 iw = ow * g.stride_w + kw - g.pad_left;
                if (iw < 0 || iw >= g.in_w) continue;
                const i64 x0 = ((n * g.in_h + ih) * g.in_w + iw) * g.in_c;
                const i64 w0 = (kh * g.kernel_w + kw) * g.in_c * g.out_c + oc;
                for (i64 ic = 0; ic < g.in_c; ++ic)
                    acc += load<T>(io.a, io.a_dtype, x0 + ic) *
                           load<T>(io.b, io.b_dtype, w0 + ic * g.out_c);
            }
        }
        acc = scaled(io, acc);
        if (io.bias) acc += load<T>(io.bias, io.bias_dtype, oc);
        if (io.pre) store<T>(io.pre, io.pre_dtype, e, acc);
        store<T>(io.out, io.out_dtype, e, activate<T>(io.act, acc));
    }
}

template <class T>
__global__ void backward_data_kernel(ConvGeom g, ConvIo io) {
    const i64 count = g.batch * g.in_h * g.in_w * g.in_c;
    for (i64 e = blockIdx.x * i64(blockDim.x) + threadIdx.x; e < count;
         e += i64(gridDim.x) * blockDim.x) {
        const i64 ic = e % g.in_c;
        i64 rest = e / g.in_c;
        const i64 iw = rest % g.in_w;
        rest /= g.in_w;
        const i64 ih = rest % g.in_h, n = rest / g.in_h;
        T acc = T(0);
        for (i64 kh = 0; kh < g.kernel_h; ++kh) {
            const i64 th = ih + g.pad_top - kh; // = oh * stride_h
            if (th < 0 || th % g.stride_h) continue;
            const i64 oh = th / g.stride_h;
            if (oh >= g.out_h) continue;
            for (i64 kw = 0; kw < g.kernel_w; ++kw) {
                const i64 tw = iw + g.pad_left - kw;
                if (tw < 0 || tw % g.stride_w) continue;
                const i64 ow = tw / g.stride_w;
                if (ow >= g.out_w) continue;
                const i64 y0 = ((n * g.out_h + oh) * g.out_w + ow) * g.out_c;
                const i64 w0 = ((kh * g.kernel_w + kw) * g.in_c + ic) * g.out_c;
                for (i64 oc = 0; oc < g.out_c; ++oc)
                    acc += load<T>(io.a, io.a_dtype, y0 + oc) * load<T>(io.b, io.b_dtype, w0 + oc);
            }
        }
        store<T>(io.out, io.out_dtype, e, scaled(io, acc));
    }
}

// One block per weight; its threads split the batch·h·w positions (thread t takes t, t + 256,
// ...; the index arithmetic is conv_filter_taps.h's, tested on the host), then add their partial
// sums in a fixed halving tree. The order depends only on the shape, never on scheduling, so
// the result is the same on every run (the old one-thread-per-weight loop left most of the GPU
// idle: a 3x3x1x32 filter is 288 threads).
template <class T>
__global__ void backward_filter_kernel(ConvGeom g, ConvIo io) {
    __shared__ T partial[kFilterThreads];
    const i64 count = g.kernel_h * g.kernel_w * g.in_c * g.out_c;
    const i64 positions = g.batch * g.out_h * g.out_w;
    for (i64 e = blockIdx.x; e < count; e += gridDim.x) {
        const FilterWeight w = filter_weight(g, e);
        T acc = T(0);
        for (i64 p = threadIdx.x; p < positions; p += kFilterThreads) {
            const FilterTap t = filter_tap(g, w, p);
            if (!t.inside) continue;
            acc += load<T>(io.a, io.a_dtype, t.x_index) * load<T>(io.b, io.b_dtype, t.dy_index);
        }
        partial[threadIdx.x] = acc;
        __syncthreads();
        for (int half = kFilterThreads / 2; half > 0; half /= 2) {
            if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
            __syncthreads();
        }
        if (threadIdx.x == 0) store<T>(io.out, io.out_dtype, e, scaled(io, partial[0]));
        __syncthreads(); // partial[] is refilled for the next weight
    }
}

} // namespace

void launch_conv2d_direct_forward(const ConvGeom& g, const ConvIo& io, cudaStream_t stream) {
    const i64 count = g.batch * g.out_h * g.out_w * g.out_c;
    if (count <= 0) return;
    if (io.f64)
        forward_kernel<double><<<blocks_for(count), 256, 0, stream>>>(g, io);
    else
        forward_kernel<float><<<blocks_for(count), 256, 0, stream>>>(g, io);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

void launch_conv2d_direct_backward_data(const ConvGeom& g, const ConvIo& io, cudaStream_t stream) {
    const i64 count = g.batch * g.in_h * g.in_w * g.in_c;
    if (count <= 0) return;
    if (io.f64)
        backward_data_kernel<double><<<blocks_for(count), 256, 0, stream>>>(g, io);
    else
        backward_data_kernel<float><<<blocks_for(count), 256, 0, stream>>>(g, io);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

void launch_conv2d_direct_backward_filter(const ConvGeom& g, const ConvIo& io,
                                          cudaStream_t stream) {
    const i64 count = g.kernel_h * g.kernel_w * g.in_c * g.out_c;
    if (count <= 0) return;
    const unsigned blocks = static_cast<unsigned>(count < 65535 * 8 ? count : 65535 * 8);
    if (io.f64)
        backward_filter_kernel<double><<<blocks, kFilterThreads, 0, stream>>>(g, io);
    else
        backward_filter_kernel<float><<<blocks, kFilterThreads, 0, stream>>>(g, io);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

} // namespace mantissa::cuda
