// bias_grad's kernels. Deterministic: the partition depends only on the shape, and every sum runs
// in a fixed order.
//   1. partial_kernel: a 32x8 block owns 32 columns and one chunk of rows; its 8 thread rows
//      stride down the chunk (coalesced reads), then one thread per column adds the 8 partial
//      sums in order into the scratch slot (chunk, column);
//   2. total_kernel: one thread per column adds the chunks' slots in chunk order and stores db
//      (eight slots loaded at a time, added in the same order).
// Splitting the rows into chunks fills the GPU when there are few columns (issue 26: one 32x32
// block per 32 columns took 0.11 ms for 8192 rows of 10 logits, 0.11 ms for 8192 x 4096 on an
// H100). A float32, float16 or bfloat16 dy with rows of whole 8-element vectors is read eight
// columns a lane in 16-byte loads (partial_vec_kernel: 256 columns a block), each column still
// summed in the same order. A shape whose partial sums would not fit the scratch takes the
// one-stage kernel. partial_act_vec_kernel fuses an elementwise activation's backward in front
// of the 16-byte path (launch_activation_bias_grad), with the same partition.
#include "core/backend/cuda/activation_math.cuh"
#include "core/backend/cuda/bias_grad.cuh"
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/dtype_access.cuh"
#include "core/backend/cuda/vec8.cuh"

namespace mantissa::cuda {

namespace {

constexpr int kRowThreads = 8;
constexpr i64 kMinChunkRows = 64; // fewer rows a chunk than this only adds partial sums
constexpr i64 kTargetBlocks = 2048;

template <class T>
__global__ void partial_kernel(const void* dy, DType dydt, i64 rows, i64 cols, i64 chunk_rows,
                               T* partial) {
    __shared__ T part[kRowThreads][33];
    const i64 j = blockIdx.x * i64(32) + threadIdx.x;
    const i64 r0 = blockIdx.y * chunk_rows;
    const i64 r1 = rows < r0 + chunk_rows ? rows : r0 + chunk_rows;
    T acc = T(0);
    if (j < cols)
        for (i64 r = r0 + threadIdx.y; r < r1; r += kRowThreads)
            acc += load<T>(dy, dydt, r * cols + j);
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && j < cols) {
        T sum = T(0);
        for (int k = 0; k < kRowThreads; ++k) sum += part[k][threadIdx.x];
        partial[blockIdx.y * cols + j] = sum;
    }
}

// The end of a 16-byte-path block (32 x kRowThreads threads, a strip of 32 * kVec columns): each
// thread's eight column sums into shared memory, then one thread per column adds the 8 row
// threads' sums in order into the partial slot (chunk blockIdx.y, column).
__device__ inline void add_strip_partials(const float (&acc)[kVec], i64 cols, float* partial) {
    constexpr int kCols = 32 * kVec; // a block's strip
    __shared__ float part[kRowThreads][kCols + 1];
#pragma unroll
    for (int j = 0; j < kVec; ++j) part[threadIdx.y][threadIdx.x * kVec + j] = acc[j];
    __syncthreads();
    const int t = threadIdx.y * 32 + threadIdx.x;
    const i64 j = blockIdx.x * i64(kCols) + t;
    if (j < cols) {
        float sum = 0.0f;
        for (int k = 0; k < kRowThreads; ++k) sum += part[k][t];
        partial[blockIdx.y * cols + j] = sum;
    }
}

template <class S>
__global__ void partial_vec_kernel(const S* dy, i64 rows, i64 cols, i64 chunk_rows,
                                   float* partial) {
    const i64 v = blockIdx.x * i64(32) + threadIdx.x; // this lane's vector within a row
    const i64 row_vectors = cols / kVec;
    const i64 r0 = blockIdx.y * chunk_rows;
    const i64 r1 = rows < r0 + chunk_rows ? rows : r0 + chunk_rows;
    float acc[kVec] = {};
    if (v < row_vectors)
        for (i64 r = r0 + threadIdx.y; r < r1; r += kRowThreads) {
            float x[kVec];
            load8(dy, r * row_vectors + v, x);
#pragma unroll
            for (int j = 0; j < kVec; ++j) acc[j] += x[j];
        }
    add_strip_partials(acc, cols, partial);
}

// partial_vec_kernel with the activation's backward in front: each lane computes
// dZ = dY ⊙ act'(in) (in: y, or x for GELU) for its eight columns of a row as activation.cu's
// backward_vec_kernel does (float arithmetic, one rounding to S), stores it, and adds the stored
// values, so dZ and the partial sums are exactly those of the two kernels run one after the other,
// without reading dZ back.
template <class S>
__global__ void partial_act_vec_kernel(Activation act, const S* in, const S* dy, S* dz, i64 rows,
                                       i64 cols, i64 chunk_rows, float* partial) {
    const i64 v = blockIdx.x * i64(32) + threadIdx.x;
    const i64 row_vectors = cols / kVec;
    const i64 r0 = blockIdx.y * chunk_rows;
    const i64 r1 = rows < r0 + chunk_rows ? rows : r0 + chunk_rows;
    float acc[kVec] = {};
    if (v < row_vectors)
        for (i64 r = r0 + threadIdx.y; r < r1; r += kRowThreads) {
            float g[kVec], t[kVec];
            load8(dy, r * row_vectors + v, g);
            load8(in, r * row_vectors + v, t);
#pragma unroll
            for (int j = 0; j < kVec; ++j) // dZ as stored: one rounding to S
                g[j] = to_float(from_float<S>(elementwise_backward(act, t[j], g[j])));
            store8(dz, r * row_vectors + v, g);
#pragma unroll
            for (int j = 0; j < kVec; ++j) acc[j] += g[j];
        }
    add_strip_partials(acc, cols, partial);
}

// Eight slots are loaded before any of them is added: the loop of one load, then one add per
// slot left each thread a chain of 128 dependent memory round trips (0.016 ms for 10 logits'
// 128 chunks on an H200, 2026-11-28). The additions keep their order, so the sum is the same.
constexpr int kTotalBatch = 8;

template <class T>
__global__ void total_kernel(const T* partial, i64 chunks, i64 cols, void* db, DType dbdt) {
    const i64 j = blockIdx.x * i64(blockDim.x) + threadIdx.x;
    if (j >= cols) return;
    T sum = T(0);
    i64 c = 0;
    for (; c + kTotalBatch <= chunks; c += kTotalBatch) {
        T slot[kTotalBatch];
#pragma unroll
        for (int u = 0; u < kTotalBatch; ++u) slot[u] = partial[(c + u) * cols + j];
#pragma unroll
        for (int u = 0; u < kTotalBatch; ++u) sum += slot[u];
    }
    for (; c < chunks; ++c) sum += partial[c * cols + j];
    store<T>(db, dbdt, j, sum);
}

// The one-stage kernel: a 32x32 block owns 32 columns and strides down every row.
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

// The partition of a (rows, cols) gradient: strips of columns (256 on the 16-byte path, else 32)
// by chunks of rows; chunks < 2 means the one-stage kernel. A function of the shape, the element
// size of the sums and the path only, so the fused kernel below partitions as bias_grad does.
struct Partition {
    i64 strips = 0, chunks = 0, chunk_rows = 0;
};
Partition partition(i64 rows, i64 cols, bool vec, std::size_t sum_bytes) {
    Partition p;
    const i64 strip = vec ? 32 * kVec : 32;
    p.strips = (cols + strip - 1) / strip;
    i64 chunks = (kTargetBlocks + p.strips - 1) / p.strips;
    const i64 by_rows = (rows + kMinChunkRows - 1) / kMinChunkRows;
    const i64 by_scratch = static_cast<i64>(kBiasGradScratchBytes / sum_bytes) / cols;
    chunks = chunks < by_rows ? chunks : by_rows;
    chunks = chunks < by_scratch ? chunks : by_scratch;
    chunks = chunks < 65535 ? chunks : 65535;
    if (chunks < 2) return p;
    p.chunk_rows = (rows + chunks - 1) / chunks;
    p.chunks = (rows + p.chunk_rows - 1) / p.chunk_rows; // none left empty
    return p;
}

template <class T>
void launch(const void* dy, DType dy_dtype, i64 rows, i64 cols, void* db, DType db_dtype,
            void* scratch, cudaStream_t stream) {
    // The 16-byte path reads a strip of 256 columns a block, the scalar one 32.
    const bool vec =
        sizeof(T) == sizeof(float) && cols % kVec == 0 && vec8_dtype(dy_dtype) && vec8_aligned(dy);
    const Partition p = partition(rows, cols, vec, sizeof(T));
    if (p.chunks < 2 || scratch == nullptr) {
        bias_grad_kernel<T><<<static_cast<unsigned>((cols + 31) / 32), dim3(32, 32), 0, stream>>>(
            dy, dy_dtype, rows, cols, db, db_dtype);
        MANTISSA_CUDA_LAUNCH_CHECK();
        return;
    }
    const i64 chunks = p.chunks, chunk_rows = p.chunk_rows;
    auto* partial = static_cast<T*>(scratch);
    const dim3 grid(static_cast<unsigned>(p.strips), static_cast<unsigned>(chunks));
    if constexpr (sizeof(T) == sizeof(float)) {
        if (vec)
            with_storage(dy_dtype, [&](auto tag) {
                using S = typename decltype(tag)::type;
                partial_vec_kernel<S><<<grid, dim3(32, kRowThreads), 0, stream>>>(
                    static_cast<const S*>(dy), rows, cols, chunk_rows, partial);
            });
    }
    if (!vec)
        partial_kernel<T><<<grid, dim3(32, kRowThreads), 0, stream>>>(dy, dy_dtype, rows, cols,
                                                                      chunk_rows, partial);
    MANTISSA_CUDA_LAUNCH_CHECK();
    total_kernel<T><<<blocks_for(cols), 256, 0, stream>>>(partial, chunks, cols, db, db_dtype);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

} // namespace

bool launch_activation_bias_grad(Activation act, const void* in, const void* dy, void* dz,
                                 DType dtype, std::int64_t rows, std::int64_t cols, void* db,
                                 DType db_dtype, void* scratch, cudaStream_t stream) {
    const bool elementwise = act == Activation::Relu || act == Activation::Tanh ||
                             act == Activation::Sigmoid || act == Activation::Gelu;
    if (!elementwise || scratch == nullptr || rows <= 0 || cols <= 0 || cols % kVec != 0 ||
        !vec8_dtype(dtype) || db_dtype == DType::Float64 || !vec8_aligned(in) ||
        !vec8_aligned(dy) || !vec8_aligned(dz))
        return false;
    const Partition p = partition(rows, cols, true, sizeof(float));
    if (p.chunks < 2) return false;
    auto* partial = static_cast<float*>(scratch);
    const dim3 grid(static_cast<unsigned>(p.strips), static_cast<unsigned>(p.chunks));
    with_storage(dtype, [&](auto tag) {
        using S = typename decltype(tag)::type;
        partial_act_vec_kernel<S><<<grid, dim3(32, kRowThreads), 0, stream>>>(
            act, static_cast<const S*>(in), static_cast<const S*>(dy), static_cast<S*>(dz), rows,
            cols, p.chunk_rows, partial);
    });
    MANTISSA_CUDA_LAUNCH_CHECK();
    total_kernel<float>
        <<<blocks_for(cols), 256, 0, stream>>>(partial, p.chunks, cols, db, db_dtype);
    MANTISSA_CUDA_LAUNCH_CHECK();
    return true;
}

void launch_bias_totals(const float* partial, std::int64_t chunks, std::int64_t cols, void* db,
                        DType db_dtype, cudaStream_t stream) {
    if (cols <= 0) return;
    total_kernel<float><<<blocks_for(cols), 256, 0, stream>>>(partial, chunks, cols, db, db_dtype);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

void launch_bias_grad(const void* dy, DType dy_dtype, std::int64_t rows, std::int64_t cols,
                      void* db, DType db_dtype, bool f64, void* scratch, cudaStream_t stream) {
    if (cols <= 0) return;
    if (f64)
        launch<double>(dy, dy_dtype, rows, cols, db, db_dtype, scratch, stream);
    else
        launch<float>(dy, dy_dtype, rows, cols, db, db_dtype, scratch, stream);
}

} // namespace mantissa::cuda
