// activation kernels: one thread per element, or one thread per softmax row (rows are short,
// ten classes for MNIST, and a sequential sum keeps the CPU engine's order of additions).
#include "core/backend/cuda/activation.cuh"
#include "core/backend/cuda/activation_math.cuh"
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/dtype_access.cuh"
#include "core/backend/cuda/vec8.cuh"

namespace mantissa::cuda {

namespace {

template <class T>
__global__ void forward_kernel(Activation act, DevTensor x, void* y, DType ydt, i64 count) {
    for (i64 i = blockIdx.x * i64(blockDim.x) + threadIdx.x; i < count;
         i += i64(gridDim.x) * blockDim.x)
        store<T>(y, ydt, i, activate<T>(act, load<T>(x.data, x.dtype, i)));
}

// softmax_row of cpu_kernels.h: max, exp and sum in order, multiply by the reciprocal.
// The exponentials are written to y (as T would round them) and re-read only when y holds T.
template <class T>
__global__ void softmax_forward_kernel(DevTensor x, void* y, DType ydt, i64 rows, i64 cols) {
    for (i64 r = blockIdx.x * i64(blockDim.x) + threadIdx.x; r < rows;
         r += i64(gridDim.x) * blockDim.x) {
        const i64 off = r * cols;
        T m = load<T>(x.data, x.dtype, off);
        for (i64 j = 1; j < cols; ++j) {
            const T v = load<T>(x.data, x.dtype, off + j);
            m = m < v ? v : m; // std::max
        }
        T sum = T(0);
        for (i64 j = 0; j < cols; ++j) sum += exp(load<T>(x.data, x.dtype, off + j) - m);
        const T inv = T(1) / sum;
        for (i64 j = 0; j < cols; ++j)
            store<T>(y, ydt, off + j, exp(load<T>(x.data, x.dtype, off + j) - m) * inv);
    }
}

template <class T>
__global__ void backward_kernel(Activation act, DevTensor x, DevTensor y, DevTensor dy, void* dx,
                                DType dxdt, i64 count) {
    for (i64 i = blockIdx.x * i64(blockDim.x) + threadIdx.x; i < count;
         i += i64(gridDim.x) * blockDim.x) {
        const T g = load<T>(dy.data, dy.dtype, i);
        T out = g;
        switch (act) {
        case Activation::Relu:
            out = activation_math::relu_backward(load<T>(y.data, y.dtype, i), g);
            break;
        case Activation::Gelu:
            out = g * gelu_grad(load<T>(x.data, x.dtype, i));
            break;
        case Activation::Tanh:
            out = activation_math::tanh_backward(load<T>(y.data, y.dtype, i), g);
            break;
        case Activation::Sigmoid:
            out = activation_math::sigmoid_backward(load<T>(y.data, y.dtype, i), g);
            break;
        default:
            break;
        }
        store<T>(dx, dxdt, i, out);
    }
}

// backward_kernel<float>'s fast path (issue 26: 0.14 ms for 8192 x 4096 16-bit elements on an
// H100, twice what its bytes take): float32, float16 or bfloat16 tensors, aligned, eight elements
// a thread in 16-byte accesses, the same float arithmetic. `in` is x for GELU, y otherwise.
template <class In, class Dy, class Dx>
__global__ void backward_vec_kernel(Activation act, const In* in, const Dy* dy, Dx* dx,
                                    i64 vectors) {
    for (i64 v = blockIdx.x * i64(blockDim.x) + threadIdx.x; v < vectors;
         v += i64(gridDim.x) * blockDim.x) {
        float g[kVec], t[kVec];
        load8(dy, v, g);
        load8(in, v, t);
#pragma unroll
        for (int j = 0; j < kVec; ++j) g[j] = elementwise_backward(act, t[j], g[j]);
        store8(dx, v, g);
    }
}

// Takes the fast path when it applies; false leaves the work to the generic kernel.
bool backward_vec(Activation act, DevTensor x, DevTensor y, DevTensor dy, void* dx, DType dxdt,
                  i64 count, cudaStream_t stream) {
    const DevTensor in = act == Activation::Gelu ? x : y;
    const bool elementwise = act == Activation::Relu || act == Activation::Gelu ||
                             act == Activation::Tanh || act == Activation::Sigmoid;
    if (!elementwise || count % kVec != 0 || !vec8_dtype(in.dtype) || !vec8_dtype(dy.dtype) ||
        !vec8_dtype(dxdt) || !vec8_aligned(in.data) || !vec8_aligned(dy.data) || !vec8_aligned(dx))
        return false;
    const i64 vectors = count / kVec;
    const unsigned blocks = vec8_blocks(vectors);
    with_storage(in.dtype, [&](auto in_tag) {
        using In = typename decltype(in_tag)::type;
        with_storage(dy.dtype, [&](auto dy_tag) {
            using Dy = typename decltype(dy_tag)::type;
            with_storage(dxdt, [&](auto dx_tag) {
                using Dx = typename decltype(dx_tag)::type;
                backward_vec_kernel<In, Dy, Dx><<<blocks, 256, 0, stream>>>(
                    act, static_cast<const In*>(in.data), static_cast<const Dy*>(dy.data),
                    static_cast<Dx*>(dx), vectors);
            });
        });
    });
    MANTISSA_CUDA_LAUNCH_CHECK();
    return true;
}

// dx = y * (dy - sum_j dy_j * y_j), per row.
template <class T>
__global__ void softmax_backward_kernel(DevTensor y, DevTensor dy, void* dx, DType dxdt, i64 rows,
                                        i64 cols) {
    for (i64 r = blockIdx.x * i64(blockDim.x) + threadIdx.x; r < rows;
         r += i64(gridDim.x) * blockDim.x) {
        const i64 off = r * cols;
        T dot = T(0);
        for (i64 j = 0; j < cols; ++j)
            dot += load<T>(dy.data, dy.dtype, off + j) * load<T>(y.data, y.dtype, off + j);
        for (i64 j = 0; j < cols; ++j) {
            const T v = load<T>(y.data, y.dtype, off + j);
            store<T>(dx, dxdt, off + j, v * (load<T>(dy.data, dy.dtype, off + j) - dot));
        }
    }
}

template <class T>
void forward(Activation act, DevTensor x, void* y, DType ydt, i64 count, i64 cols,
             cudaStream_t stream) {
    if (act == Activation::Softmax) {
        const i64 rows = count / cols;
        softmax_forward_kernel<T><<<blocks_for(rows, 128), 128, 0, stream>>>(x, y, ydt, rows, cols);
    } else {
        forward_kernel<T><<<blocks_for(count), 256, 0, stream>>>(act, x, y, ydt, count);
    }
    MANTISSA_CUDA_LAUNCH_CHECK();
}

template <class T>
void backward(Activation act, DevTensor x, DevTensor y, DevTensor dy, void* dx, DType dxdt,
              i64 count, i64 cols, cudaStream_t stream) {
    if (act == Activation::Softmax) {
        const i64 rows = count / cols;
        softmax_backward_kernel<T>
            <<<blocks_for(rows, 128), 128, 0, stream>>>(y, dy, dx, dxdt, rows, cols);
    } else {
        backward_kernel<T><<<blocks_for(count), 256, 0, stream>>>(act, x, y, dy, dx, dxdt, count);
    }
    MANTISSA_CUDA_LAUNCH_CHECK();
}

} // namespace

void launch_activation_forward(Activation act, DevTensor x, void* y, DType y_dtype,
                               std::int64_t count, std::int64_t cols, bool f64,
                               cudaStream_t stream) {
    if (count <= 0 || cols <= 0) return;
    if (f64)
        forward<double>(act, x, y, y_dtype, count, cols, stream);
    else
        forward<float>(act, x, y, y_dtype, count, cols, stream);
}

void launch_activation_backward(Activation act, DevTensor x, DevTensor y, DevTensor dy, void* dx,
                                DType dx_dtype, std::int64_t count, std::int64_t cols, bool f64,
                                cudaStream_t stream) {
    if (count <= 0 || cols <= 0) return;
    if (f64)
        backward<double>(act, x, y, dy, dx, dx_dtype, count, cols, stream);
    else if (!backward_vec(act, x, y, dy, dx, dx_dtype, count, stream))
        backward<float>(act, x, y, dy, dx, dx_dtype, count, cols, stream);
}

} // namespace mantissa::cuda
