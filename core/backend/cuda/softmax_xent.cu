// softmax_cross_entropy's kernel: one block, one thread per row at a time, a fixed-order reduction
// of the per-row losses, so the sum is deterministic. Rows follow cpu_softmax_xent.cpp: plain
// float32/float64 rows, or the op-by-op rounded 16-bit row whose probability can underflow to 0.
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/dtype_access.cuh"
#include "core/backend/cuda/softmax_xent.cuh"

namespace mantissa::cuda {

namespace {

constexpr int kThreads = 512;
constexpr int kMaxClasses = 64; // per-thread row buffer; wider rows recompute instead of caching

// Lowest index wins ties; NaN never wins.
template <class T>
__device__ i64 argmax_row(const XentArgs& a, i64 off) {
    i64 best = 0;
    T best_v = load<T>(a.logits, a.logits_dtype, off);
    for (i64 i = 1; i < a.classes; ++i) {
        const T v = load<T>(a.logits, a.logits_dtype, off + i);
        if (v > best_v) {
            best = i;
            best_v = v;
        }
    }
    return best;
}

// p_i for the row into p (classes <= kMaxClasses); returns the row's loss.
template <class T>
__device__ double plain_row(const XentArgs& a, i64 off, int label, T* p) {
    const T m = load<T>(a.logits, a.logits_dtype, off + argmax_row<T>(a, off));
    T sum = T(0);
    for (i64 i = 0; i < a.classes; ++i) {
        p[i] = exp(load<T>(a.logits, a.logits_dtype, off + i) - m);
        sum += p[i];
    }
    const T inv = T(1) / sum;
    for (i64 i = 0; i < a.classes; ++i) p[i] *= inv;
    return static_cast<double>(log(sum) - (load<T>(a.logits, a.logits_dtype, off + label) - m));
}

__device__ double emulated_row(const XentArgs& a, i64 off, int label, float* p) {
    const DType dt = a.logits_dtype;
    float m = load_float(a.logits, dt, off);
    for (i64 i = 1; i < a.classes; ++i) {
        const float v = load_float(a.logits, dt, off + i);
        m = m < v ? v : m;
    }
    for (i64 i = 0; i < a.classes; ++i)
        p[i] = round_to(dt, expf(load_float(a.logits, dt, off + i) - m));
    float sum = 0.0f;
    for (i64 i = 0; i < a.classes; ++i) sum += p[i];
    sum = round_to(dt, sum);
    for (i64 i = 0; i < a.classes; ++i) p[i] = round_to(dt, p[i] / sum);
    return static_cast<double>(-logf(p[label]));
}

template <class T>
__global__ void xent_kernel(XentArgs a) {
    __shared__ double loss_part[kThreads];
    __shared__ long long correct_part[kThreads];
    const bool emulated = a.logits_dtype == DType::Float16 || a.logits_dtype == DType::BFloat16;
    const T grad_scale =
        a.valid_rows > 0 ? static_cast<T>(a.scalars->loss_scale / double(a.valid_rows)) : T(0);
    double loss = 0.0;
    long long correct = 0;
    T p[kMaxClasses];
    for (i64 r = threadIdx.x; r < a.rows; r += kThreads) {
        const i64 off = r * a.classes;
        const bool valid = r < a.valid_rows;
        const int raw = a.labels[r];
        const int label = raw >= 0 && raw < a.classes ? raw : 0;
        double row_loss;
        if constexpr (sizeof(T) == sizeof(float)) {
            row_loss = emulated ? emulated_row(a, off, label, p) : plain_row<T>(a, off, label, p);
        } else {
            row_loss = plain_row<T>(a, off, label, p);
        }
        if (valid) {
            loss += row_loss;
            correct += argmax_row<T>(a, off) == label ? 1 : 0;
        }
        for (i64 i = 0; i < a.classes; ++i) {
            if (a.probs) store<T>(a.probs, a.probs_dtype, off + i, p[i]);
            if (a.dlogits) {
                const T g = valid ? (p[i] - (i == raw ? T(1) : T(0))) * grad_scale : T(0);
                store<T>(a.dlogits, a.dlogits_dtype, off + i, g);
            }
        }
    }
    loss_part[threadIdx.x] = loss;
    correct_part[threadIdx.x] = correct;
    __syncthreads();
    for (int stride = kThreads / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) {
            loss_part[threadIdx.x] += loss_part[threadIdx.x + stride];
            correct_part[threadIdx.x] += correct_part[threadIdx.x + stride];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        a.scalars->loss_sum += loss_part[0];
        a.scalars->correct += correct_part[0];
        a.scalars->examples += a.valid_rows;
    }
}

} // namespace

void launch_softmax_xent(const XentArgs& args, cudaStream_t stream) {
    if (args.rows <= 0) return;
    if (args.logits_dtype == DType::Float64)
        xent_kernel<double><<<1, kThreads, 0, stream>>>(args);
    else
        xent_kernel<float><<<1, kThreads, 0, stream>>>(args);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

} // namespace mantissa::cuda
