// Batch and layer normalization kernels (issue 29), with backend.h's NormArgs arithmetic: sums in
// A (float, or double when S is float64), each listed intermediate rounded to S by round_to(),
// the rounding the cast kernel's stores make. No float atomics: every sum runs in an order fixed
// by the shape, so a result is the same from run to run.
//   Column sums (BatchNormalization's statistics and both ops' dgamma/dbeta), as bias_grad.cu:
//   a 32x8 block owns 32 columns and one chunk of rows, its 8 thread rows stride down the chunk
//   (coalesced reads), then one thread per column adds the 8 partials in order into the scratch
//   slot (chunk, column); a second kernel adds the chunks in order per column and finishes the
//   statistic (mean; var and inv_std with the moving update; dgamma and dbeta).
//   BatchNormalization's y and dx: the same 32x8 blocks over (column strip, rows), each thread
//   loading its column's constants once.
//   LayerNormalization: one warp per row (cols up to a few thousand: each lane strides the row,
//   then a butterfly shuffle sum, which leaves every lane the same value); the row is read once
//   per pass (mean, var, y; or the two backward sums, dx) and stays in L1/L2 between passes.
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/dtype_access.cuh"
#include "core/backend/cuda/norm.cuh"

namespace mantissa::cuda {

namespace {

constexpr int kStrip = 32;        // columns a column block covers, one lane each
constexpr int kRowThreads = 8;    // thread rows of a column block
constexpr i64 kMinChunkRows = 64; // fewer rows a chunk than this only adds partial sums
constexpr i64 kTargetBlocks = 2048;
constexpr i64 kRowsPerThread = 8; // BatchNormalization's elementwise kernels: rows a thread takes
constexpr int kWarpsPerBlock = 8; // LayerNormalization: rows a block takes at once

// Which column sums a pass makes and what its second kernel finishes.
enum class Sum {
    BnMean, // sum x                      -> mean
    BnVar,  // sum S(d·d)                 -> var, inv_std, moving statistics
    BnGrad, // sum dy, sum dy·x̂           -> dbeta, dgamma (kept for dx)
    LnGrad, // sum dy, sum dy·x̂ (row stats) -> dbeta, dgamma
};

template <Sum M>
inline constexpr int kSums = (M == Sum::BnGrad || M == Sum::LnGrad) ? 2 : 1;

// S(v): float values rounded to float16/bfloat16 (float32: unchanged); A is double only when S is
// float64, where every S() is exact.
template <class A>
__device__ inline A to_s(DType s, A v) {
    if constexpr (sizeof(A) == sizeof(double)) {
        (void)s;
        return v;
    } else {
        return round_to(s, v);
    }
}

// inv_std = S(1 / sqrt(var + ε)), IEEE sqrt and division (no fast-math, no rsqrt).
template <class A>
__device__ inline A inv_std_of(DType s, A var, A eps) {
    if constexpr (sizeof(A) == sizeof(double))
        return to_s(s, 1.0 / ::sqrt(var + eps));
    else
        return to_s(s, 1.0f / ::sqrtf(var + eps));
}

// x̂ = S(S(x − mean) · inv_std), as the forward computes it and the backward recomputes it.
template <class A>
__device__ inline A normalized(DType s, A x, A mean, A inv) {
    const A d = to_s(s, x - mean);
    return to_s(s, d * inv);
}

// Every lane ends with the same sum: lane i adds v_i + v_(i^m), lane i^m the same two values the
// other way round, and IEEE addition commutes.
template <class A>
__device__ inline A warp_sum(A v) {
    for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
    return v;
}

// Pass 1 of a column sum: partial[(q · chunks + chunk) · cols + j] for sum q of column j over the
// chunk's rows (of the first `rows`). `stats` holds the per-column mean (BnVar).
template <class A, Sum M>
__global__ void col_partial_kernel(NormLaunch a, i64 rows, i64 chunk_rows, i64 chunks,
                                   const A* stats, A* partial) {
    constexpr int kQ = kSums<M>;
    __shared__ A part[kQ][kRowThreads][kStrip + 1];
    const DType s = a.s_dtype;
    const i64 cols = a.cols;
    const i64 j = blockIdx.x * i64(kStrip) + threadIdx.x;
    const i64 r0 = blockIdx.y * chunk_rows;
    const i64 r1 = rows < r0 + chunk_rows ? rows : r0 + chunk_rows;
    A acc[kQ] = {};
    if (j < cols) {
        A mean = A(0), inv = A(0);
        if constexpr (M == Sum::BnVar) mean = stats[j];
        if constexpr (M == Sum::BnGrad) {
            mean = load<A>(a.mean, s, j);
            inv = load<A>(a.inv_std, s, j);
        }
        for (i64 r = r0 + threadIdx.y; r < r1; r += kRowThreads) {
            const i64 i = r * cols + j;
            const A x = load<A>(a.x, a.x_dtype, i);
            if constexpr (M == Sum::BnMean) {
                acc[0] += x;
            } else if constexpr (M == Sum::BnVar) {
                const A d = to_s(s, x - mean);
                acc[0] += to_s(s, d * d);
            } else {
                if constexpr (M == Sum::LnGrad) { // the row's own statistics
                    mean = load<A>(a.mean, s, r);
                    inv = load<A>(a.inv_std, s, r);
                }
                const A g = load<A>(a.dy, a.dy_dtype, i);
                acc[0] += g;
                acc[kQ - 1] += g * normalized(s, x, mean, inv);
            }
        }
    }
#pragma unroll
    for (int q = 0; q < kQ; ++q) part[q][threadIdx.y][threadIdx.x] = acc[q];
    __syncthreads();
    if (threadIdx.y == 0 && j < cols) {
#pragma unroll
        for (int q = 0; q < kQ; ++q) {
            A sum = A(0);
            for (int k = 0; k < kRowThreads; ++k) sum += part[q][k][threadIdx.x];
            partial[(q * chunks + blockIdx.y) * cols + j] = sum;
        }
    }
}

// Pass 2: one thread per column adds the chunks in order and finishes the statistic. `stats` is
// the per-column pair the later kernels read: (mean, inv_std) forward, (dbeta, dgamma) backward.
template <class A, Sum M>
__global__ void col_total_kernel(NormLaunch a, i64 chunks, A* stats, const A* partial) {
    constexpr int kQ = kSums<M>;
    const i64 cols = a.cols;
    const i64 j = blockIdx.x * i64(blockDim.x) + threadIdx.x;
    if (j >= cols) return;
    const DType s = a.s_dtype;
    A sum[kQ] = {};
    for (i64 c = 0; c < chunks; ++c)
#pragma unroll
        for (int q = 0; q < kQ; ++q) sum[q] += partial[(q * chunks + c) * cols + j];
    if constexpr (M == Sum::BnMean) {
        stats[j] = to_s(s, sum[0] / A(a.valid_rows));
    } else if constexpr (M == Sum::BnVar) {
        const A mean = stats[j];
        const A var = to_s(s, sum[0] / A(a.valid_rows));
        const A inv = inv_std_of(s, var, A(a.epsilon));
        stats[cols + j] = inv;
        if (a.mean) store<A>(a.mean, s, j, mean); // S values: the stores are exact
        if (a.inv_std) store<A>(a.inv_std, s, j, inv);
        // Keras: moving * momentum + batch * (1.0 - momentum), the Python floats' 1 - momentum.
        const A keep = A(a.momentum), take = A(1.0 - a.momentum);
        store<A>(a.moving_mean, s, j, load<A>(a.moving_mean, s, j) * keep + mean * take);
        store<A>(a.moving_variance, s, j, load<A>(a.moving_variance, s, j) * keep + var * take);
    } else {
        if constexpr (M == Sum::BnGrad) { // dx reads the unrounded sums
            stats[j] = sum[0];
            stats[cols + j] = sum[1];
        }
        store<A>(a.dbeta, a.dbeta_dtype, j, sum[0]);
        store<A>(a.dgamma, a.dgamma_dtype, j, sum[1]);
    }
}

// Inference: the moving statistics as (mean, inv_std).
template <class A>
__global__ void bn_moving_stats_kernel(NormLaunch a, A* stats) {
    const i64 j = blockIdx.x * i64(blockDim.x) + threadIdx.x;
    if (j >= a.cols) return;
    const DType s = a.s_dtype;
    stats[j] = load<A>(a.moving_mean, s, j);
    stats[a.cols + j] = inv_std_of(s, load<A>(a.moving_variance, s, j), A(a.epsilon));
}

// y = round_y(γ·x̂ + β) for every row (padding rows too: they are masked later).
template <class A>
__global__ void bn_y_kernel(NormLaunch a, const A* stats) {
    const i64 j = blockIdx.x * i64(kStrip) + threadIdx.x;
    if (j >= a.cols) return;
    const DType s = a.s_dtype;
    const A mean = stats[j], inv = stats[a.cols + j];
    const A gamma = load<A>(a.gamma, s, j), beta = load<A>(a.beta, s, j);
    const i64 step = i64(gridDim.y) * kRowThreads;
    for (i64 r = blockIdx.y * i64(kRowThreads) + threadIdx.y; r < a.rows; r += step) {
        const i64 i = r * a.cols + j;
        const A xh = normalized(s, load<A>(a.x, a.x_dtype, i), mean, inv);
        store<A>(a.y, a.y_dtype, i, gamma * xh + beta);
    }
}

// dx = γ·inv_std / n · (n·dy − dβ − x̂·dγ) for rows < n = valid_rows, 0 beyond.
template <class A>
__global__ void bn_dx_kernel(NormLaunch a, const A* stats) {
    const i64 j = blockIdx.x * i64(kStrip) + threadIdx.x;
    if (j >= a.cols) return;
    const DType s = a.s_dtype;
    const A mean = load<A>(a.mean, s, j), inv = load<A>(a.inv_std, s, j);
    const A dbeta = stats[j], dgamma = stats[a.cols + j];
    const A n = A(a.valid_rows);
    const A scale = load<A>(a.gamma, s, j) * inv / n;
    const i64 step = i64(gridDim.y) * kRowThreads;
    for (i64 r = blockIdx.y * i64(kRowThreads) + threadIdx.y; r < a.rows; r += step) {
        const i64 i = r * a.cols + j;
        if (r >= a.valid_rows) {
            store<A>(a.dx, a.dx_dtype, i, A(0));
            continue;
        }
        const A g = load<A>(a.dy, a.dy_dtype, i);
        const A xh = normalized(s, load<A>(a.x, a.x_dtype, i), mean, inv);
        store<A>(a.dx, a.dx_dtype, i, scale * (n * g - dbeta - xh * dgamma));
    }
}

// One warp per row: statistics over the row's cols, then y.
template <class A>
__global__ void ln_forward_kernel(NormLaunch a) {
    const int lane = threadIdx.x % 32;
    const i64 warps = i64(gridDim.x) * (blockDim.x / 32);
    const DType s = a.s_dtype;
    const i64 cols = a.cols;
    const A n = A(cols);
    for (i64 r = (blockIdx.x * i64(blockDim.x) + threadIdx.x) / 32; r < a.rows; r += warps) {
        const i64 off = r * cols;
        A sum = A(0);
        for (i64 j = lane; j < cols; j += 32) sum += load<A>(a.x, a.x_dtype, off + j);
        const A mean = to_s(s, warp_sum(sum) / n);
        A squares = A(0);
        for (i64 j = lane; j < cols; j += 32) {
            const A d = to_s(s, load<A>(a.x, a.x_dtype, off + j) - mean);
            squares += to_s(s, d * d);
        }
        const A var = to_s(s, warp_sum(squares) / n);
        const A inv = inv_std_of(s, var, A(a.epsilon));
        for (i64 j = lane; j < cols; j += 32) {
            const A xh = normalized(s, load<A>(a.x, a.x_dtype, off + j), mean, inv);
            store<A>(a.y, a.y_dtype, off + j, load<A>(a.gamma, s, j) * xh + load<A>(a.beta, s, j));
        }
        if (lane == 0) {
            if (a.mean) store<A>(a.mean, s, r, mean);
            if (a.inv_std) store<A>(a.inv_std, s, r, inv);
        }
    }
}

// One warp per row: g = dy·γ, dx = inv_std / n · (n·g − sum g − x̂·sum g·x̂), n = cols.
template <class A>
__global__ void ln_dx_kernel(NormLaunch a) {
    const int lane = threadIdx.x % 32;
    const i64 warps = i64(gridDim.x) * (blockDim.x / 32);
    const DType s = a.s_dtype;
    const i64 cols = a.cols;
    const A n = A(cols);
    for (i64 r = (blockIdx.x * i64(blockDim.x) + threadIdx.x) / 32; r < a.rows; r += warps) {
        const i64 off = r * cols;
        const A mean = load<A>(a.mean, s, r), inv = load<A>(a.inv_std, s, r);
        A sum_g = A(0), sum_gx = A(0);
        for (i64 j = lane; j < cols; j += 32) {
            const A g = load<A>(a.dy, a.dy_dtype, off + j) * load<A>(a.gamma, s, j);
            sum_g += g;
            sum_gx += g * normalized(s, load<A>(a.x, a.x_dtype, off + j), mean, inv);
        }
        sum_g = warp_sum(sum_g);
        sum_gx = warp_sum(sum_gx);
        const A scale = inv / n;
        for (i64 j = lane; j < cols; j += 32) {
            const A g = load<A>(a.dy, a.dy_dtype, off + j) * load<A>(a.gamma, s, j);
            const A xh = normalized(s, load<A>(a.x, a.x_dtype, off + j), mean, inv);
            store<A>(a.dx, a.dx_dtype, off + j, scale * (n * g - sum_g - xh * sum_gx));
        }
    }
}

// The scratch as A values: the per-column pair first (2 · cols), the partial sums after it.
template <class A>
struct Scratch {
    A* stats = nullptr;
    A* partial = nullptr;
    i64 partial_elems = 0;
};

template <class A>
Scratch<A> carve(const NormLaunch& a) {
    auto* base = static_cast<A*>(a.scratch);
    const i64 capacity = static_cast<i64>(a.scratch_bytes / sizeof(A));
    return {base, base + 2 * a.cols, capacity - 2 * a.cols};
}

// Strips of 32 columns by chunks of rows; a function of the shape and the scratch only, so the
// summation order is too. At least one chunk (rows may be 0: the sums are then 0).
struct Partition {
    i64 strips = 0, chunks = 1, chunk_rows = 1;
};
Partition partition(i64 rows, i64 cols, i64 partial_elems, int sums) {
    Partition p;
    p.strips = (cols + kStrip - 1) / kStrip;
    i64 chunks = (kTargetBlocks + p.strips - 1) / p.strips;
    const i64 by_rows = (rows + kMinChunkRows - 1) / kMinChunkRows;
    const i64 by_scratch = partial_elems / (sums * cols);
    chunks = chunks < by_rows ? chunks : by_rows;
    chunks = chunks < by_scratch ? chunks : by_scratch;
    chunks = chunks < 65535 ? chunks : 65535;
    chunks = chunks > 1 ? chunks : 1;
    if (rows > 0) {
        p.chunk_rows = (rows + chunks - 1) / chunks;
        p.chunks = (rows + p.chunk_rows - 1) / p.chunk_rows; // none left empty
    }
    return p;
}

template <class A, Sum M>
void column_sums(const NormLaunch& a, i64 rows, cudaStream_t stream) {
    const Scratch<A> sc = carve<A>(a);
    const Partition p = partition(rows, a.cols, sc.partial_elems, kSums<M>);
    const dim3 grid(static_cast<unsigned>(p.strips), static_cast<unsigned>(p.chunks));
    col_partial_kernel<A, M><<<grid, dim3(kStrip, kRowThreads), 0, stream>>>(
        a, rows, p.chunk_rows, p.chunks, sc.stats, sc.partial);
    MANTISSA_CUDA_LAUNCH_CHECK();
    col_total_kernel<A, M>
        <<<blocks_for(a.cols), 256, 0, stream>>>(a, p.chunks, sc.stats, sc.partial);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

// The elementwise BatchNormalization kernels' grid: column strips by groups of row blocks.
dim3 column_grid(i64 rows, i64 cols) {
    const i64 strips = (cols + kStrip - 1) / kStrip;
    i64 ys = (rows + kRowThreads * kRowsPerThread - 1) / (kRowThreads * kRowsPerThread);
    ys = ys < 1 ? 1 : (ys > 65535 ? 65535 : ys);
    return dim3(static_cast<unsigned>(strips), static_cast<unsigned>(ys));
}

template <class A>
void bn_forward(const NormLaunch& a, cudaStream_t stream) {
    const Scratch<A> sc = carve<A>(a);
    if (a.training) {
        column_sums<A, Sum::BnMean>(a, a.valid_rows, stream);
        column_sums<A, Sum::BnVar>(a, a.valid_rows, stream);
    } else {
        bn_moving_stats_kernel<A><<<blocks_for(a.cols), 256, 0, stream>>>(a, sc.stats);
        MANTISSA_CUDA_LAUNCH_CHECK();
    }
    if (a.rows <= 0) return;
    bn_y_kernel<A>
        <<<column_grid(a.rows, a.cols), dim3(kStrip, kRowThreads), 0, stream>>>(a, sc.stats);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

template <class A>
void bn_backward(const NormLaunch& a, cudaStream_t stream) {
    column_sums<A, Sum::BnGrad>(a, a.valid_rows, stream);
    if (a.rows <= 0) return;
    bn_dx_kernel<A><<<column_grid(a.rows, a.cols), dim3(kStrip, kRowThreads), 0, stream>>>(
        a, carve<A>(a).stats);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

template <class A>
void ln_forward(const NormLaunch& a, cudaStream_t stream) {
    ln_forward_kernel<A><<<blocks_for(a.rows, kWarpsPerBlock), kWarpsPerBlock * 32, 0, stream>>>(a);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

template <class A>
void ln_backward(const NormLaunch& a, cudaStream_t stream) {
    // dgamma and dbeta first: they read dy, which dx may overwrite.
    column_sums<A, Sum::LnGrad>(a, a.rows, stream);
    if (a.rows <= 0) return;
    ln_dx_kernel<A><<<blocks_for(a.rows, kWarpsPerBlock), kWarpsPerBlock * 32, 0, stream>>>(a);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

// Calls f(A{}) with the contract's arithmetic type: double when the statistics are float64.
template <class F>
void with_arithmetic(const NormLaunch& a, F&& f) {
    if (a.s_dtype == DType::Float64)
        f(double{});
    else
        f(float{});
}

} // namespace

std::int64_t norm_max_cols(bool f64, std::size_t scratch_bytes) {
    const std::size_t value = f64 ? sizeof(double) : sizeof(float);
    return static_cast<std::int64_t>(scratch_bytes / (4 * value)); // 2 statistics + 2 sums
}

void launch_batch_norm_forward(const NormLaunch& a, cudaStream_t stream) {
    if (a.cols > 0) with_arithmetic(a, [&](auto x) { bn_forward<decltype(x)>(a, stream); });
}

void launch_batch_norm_backward(const NormLaunch& a, cudaStream_t stream) {
    if (a.cols > 0) with_arithmetic(a, [&](auto x) { bn_backward<decltype(x)>(a, stream); });
}

void launch_layer_norm_forward(const NormLaunch& a, cudaStream_t stream) {
    if (a.rows > 0 && a.cols > 0)
        with_arithmetic(a, [&](auto x) { ln_forward<decltype(x)>(a, stream); });
}

void launch_layer_norm_backward(const NormLaunch& a, cudaStream_t stream) {
    if (a.cols > 0) with_arithmetic(a, [&](auto x) { ln_backward<decltype(x)>(a, stream); });
}

} // namespace mantissa::cuda
