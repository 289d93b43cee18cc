// softmax_cross_entropy's kernels: one thread per row over as many blocks as the batch needs,
// each block's losses and hits reduced in a fixed tree into its own slot of the scratch, then one
// thread adds the slots in block order, so the sum is deterministic (the grid depends only on the
// row count). Until issue 26 one block did every row: 0.16 ms for 8192 x 10 logits on an H100. Rows
// follow cpu_softmax_xent.cpp: plain float32/float64 rows, or the op-by-op rounded 16-bit row whose
// probability can underflow to 0.
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/dtype_access.cuh"
#include "core/backend/cuda/softmax_xent.cuh"

namespace mantissa::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks =
    static_cast<int>(kXentScratchBytes / (sizeof(double) + sizeof(long long)));
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

// Partial sums, one slot per block: losses first, then hits.
struct Partials {
    double* loss;
    long long* correct;
};
__host__ __device__ inline Partials partials_of(void* scratch) {
    auto* loss = static_cast<double*>(scratch);
    return {loss, reinterpret_cast<long long*>(loss + kMaxBlocks)};
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
    const i64 row_stride = i64(gridDim.x) * kThreads;
    for (i64 r = blockIdx.x * i64(kThreads) + threadIdx.x; r < a.rows; r += row_stride) {
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
        const Partials out = partials_of(a.scratch);
        out.loss[blockIdx.x] = loss_part[0];
        out.correct[blockIdx.x] = correct_part[0];
    }
}

// The blocks' slots added in block order into the step scalars.
__global__ void xent_total_kernel(XentArgs a, int blocks) {
    const Partials in = partials_of(a.scratch);
    double loss = 0.0;
    long long correct = 0;
    for (int b = 0; b < blocks; ++b) {
        loss += in.loss[b];
        correct += in.correct[b];
    }
    a.scalars->loss_sum += loss;
    a.scalars->correct += correct;
    a.scalars->examples += a.valid_rows;
}

} // namespace

void launch_softmax_xent(const XentArgs& args, cudaStream_t stream) {
    if (args.rows <= 0) return;
    const i64 wanted = (args.rows + kThreads - 1) / kThreads;
    const int blocks = static_cast<int>(wanted < kMaxBlocks ? wanted : kMaxBlocks);
    if (args.logits_dtype == DType::Float64)
        xent_kernel<double><<<blocks, kThreads, 0, stream>>>(args);
    else
        xent_kernel<float><<<blocks, kThreads, 0, stream>>>(args);
    MANTISSA_CUDA_LAUNCH_CHECK();
    xent_total_kernel<<<1, 1, 0, stream>>>(args, blocks);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

} // namespace mantissa::cuda
