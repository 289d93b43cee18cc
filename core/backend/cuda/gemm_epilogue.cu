// The epilogue kernel: one thread per element; in place when acc == out (each element is read
// before it is written by the same thread); an accumulator with a longer row stride (the FP8
// GEMM's padded one) takes the general kernel. Float32, float16 and bfloat16 tensors with rows of
// whole vectors take the fast path: eight elements a thread in 16-byte accesses, the bias read
// as a vector of the same eight columns, the same float arithmetic (issue 26: the FP8 GEMMs'
// epilogue took 0.17 ms per 8192 x 4096 output on an H100, with a 64-bit modulo per element).
#include "core/backend/cuda/activation_math.cuh"
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/dtype_access.cuh"
#include "core/backend/cuda/gemm_epilogue.cuh"
#include "core/backend/cuda/vec8.cuh"
#include "core/backend/tensor_scales.h"

namespace mantissa::cuda {

namespace {

template <class T>
__global__ void epilogue_kernel(EpilogueArgs a) {
    const bool scaled = a.a_scale || a.b_scale;
    const T scale = tensor_scale_product<T>(a.a_scale, a.b_scale);
    const i64 count = a.rows * a.cols;
    for (i64 i = blockIdx.x * i64(blockDim.x) + threadIdx.x; i < count;
         i += i64(gridDim.x) * blockDim.x) {
        const i64 col = i % a.cols;
        const i64 at = a.acc_row_stride ? (i / a.cols) * a.acc_row_stride + col : i;
        T v = load<T>(a.acc, a.acc_dtype, at);
        if (scaled) v *= scale;
        if (a.bias) v += load<T>(a.bias, a.bias_dtype, col);
        if (a.pre) store<T>(a.pre, a.pre_dtype, i, v);
        store<T>(a.out, a.out_dtype, i, activate<T>(a.act, v));
    }
}

// Bias and pre-activation are optional: a null pointer of its storage type skips it.
template <class Acc, class Bias, class Pre, class Out>
__global__ void epilogue_vec_kernel(const Acc* acc, const float* a_scale, const float* b_scale,
                                    const Bias* bias, Pre* pre, Out* out, Activation act,
                                    i64 vectors, i64 row_vectors) {
    const bool scaled = a_scale || b_scale;
    const float scale = tensor_scale_product<float>(a_scale, b_scale);
    for (i64 v = blockIdx.x * i64(blockDim.x) + threadIdx.x; v < vectors;
         v += i64(gridDim.x) * blockDim.x) {
        float x[kVec];
        load8(acc, v, x);
        if (scaled) {
#pragma unroll
            for (int j = 0; j < kVec; ++j) x[j] *= scale;
        }
        if (bias) {
            float b[kVec];
            load8(bias, v % row_vectors, b);
#pragma unroll
            for (int j = 0; j < kVec; ++j) x[j] += b[j];
        }
        if (pre) store8(pre, v, x);
#pragma unroll
        for (int j = 0; j < kVec; ++j) x[j] = activate<float>(act, x[j]);
        store8(out, v, x);
    }
}

bool epilogue_vec(const EpilogueArgs& a, cudaStream_t stream) {
    auto fits = [](const void* p, DType dt) {
        return p == nullptr || (vec8_dtype(dt) && vec8_aligned(p));
    };
    if (a.f64 || a.cols % kVec != 0 || (a.acc_row_stride && a.acc_row_stride != a.cols) ||
        !fits(a.acc, a.acc_dtype) || !fits(a.bias, a.bias_dtype) || !fits(a.pre, a.pre_dtype) ||
        !fits(a.out, a.out_dtype))
        return false;
    const i64 vectors = a.rows * a.cols / kVec;
    const unsigned blocks = vec8_blocks(vectors);
    // A missing bias or pre-activation takes float32 as its (unused) type: fewer instances.
    const DType bias_dt = a.bias ? a.bias_dtype : DType::Float32;
    const DType pre_dt = a.pre ? a.pre_dtype : DType::Float32;
    with_storage(a.acc_dtype, [&](auto acc_tag) {
        using Acc = typename decltype(acc_tag)::type;
        with_storage(bias_dt, [&](auto bias_tag) {
            using Bias = typename decltype(bias_tag)::type;
            with_storage(pre_dt, [&](auto pre_tag) {
                using Pre = typename decltype(pre_tag)::type;
                with_storage(a.out_dtype, [&](auto out_tag) {
                    using Out = typename decltype(out_tag)::type;
                    epilogue_vec_kernel<Acc, Bias, Pre, Out><<<blocks, 256, 0, stream>>>(
                        static_cast<const Acc*>(a.acc), a.a_scale, a.b_scale,
                        static_cast<const Bias*>(a.bias), static_cast<Pre*>(a.pre),
                        static_cast<Out*>(a.out), a.act, vectors, a.cols / kVec);
                });
            });
        });
    });
    MANTISSA_CUDA_LAUNCH_CHECK();
    return true;
}

// alpha = a_scale · b_scale, beta = 0 (launch_gemm_scalars).
__global__ void gemm_scalars_kernel(const float* a_scale, const float* b_scale, float* out) {
    out[0] = (a_scale ? *a_scale : 1.0f) * (b_scale ? *b_scale : 1.0f);
    out[1] = 0.0f;
}

} // namespace

void launch_gemm_epilogue(const EpilogueArgs& args, cudaStream_t stream) {
    const i64 count = args.rows * args.cols;
    if (count <= 0 || epilogue_vec(args, stream)) return;
    if (args.f64)
        epilogue_kernel<double><<<blocks_for(count), 256, 0, stream>>>(args);
    else
        epilogue_kernel<float><<<blocks_for(count), 256, 0, stream>>>(args);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

void launch_gemm_scalars(const float* a_scale, const float* b_scale, float* out,
                         cudaStream_t stream) {
    gemm_scalars_kernel<<<1, 1, 0, stream>>>(a_scale, b_scale, out);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

} // namespace mantissa::cuda
