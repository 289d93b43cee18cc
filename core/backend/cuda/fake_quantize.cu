// fake_quantize's kernels. OCP Microscaling Formats (MX) v1.0 block scaling (E8M0 scale per block,
// §6.3 floor rule or Transformer Engine's ceil), NVFP4 (E4M3 block scale times a float32 tensor
// scale) and Transformer Engine's per-tensor FP8 recipes (current scaling: scale from this tensor's
// amax; delayed scaling: from an amax history kept on the device and updated after the cast).
// Every rounding decision is quant_math.h's or element_codec.h's (MANTISSA_HD), the CPU engine's
// own definitions, so the two engines agree bit for bit (the op-case table checks it with
// tolerance 0); the hardware's float32 <-> FP8 conversions (fp8_convert.h) are used only where a
// proof and a sweep say they give the same codes and values: per-tensor FP8 codes
// (hardware_code) and MX elements in FP8 (mx_round).
//
// The launch sequence, all in stream order with no host synchronisation:
//   1. (the scratch counters start at zero: the last sequence's finish cleared them;)
//   2. amax_kernel: the tensor's amax, as the max of |x|'s float32 bits (a NaN's bits exceed
//      infinity's, so "bits > 0x7F800000" means the tensor held a NaN), where the cast needs it
//      first (current scaling, NVFP4); delayed scaling and MX fold it into step 3's pass;
//   3. block_kernel (one warp per block of block_rows x block_cols over the row-major view, edge
//      blocks partial: the block's amax by warp reduction, its scale, then each element) or
//      cast_kernel (per tensor: every thread derives the same scale, then casts its elements);
//   4. the finish (finish_totals), in step 3's kernel's last thread block to add its totals
//      (add_totals_and_finish; a one-thread finish_kernel only where step 3 has no element):
//      the stats, and delayed scaling's history and next scale; then it zeroes the scratch, so no
//      launch sequence needs a memset of its own (issue 26: a memset, then a finish_kernel, were
//      one launch each per quantised tensor).
// One-dimensional blocks (stochastic rounding only for E2M1) and NVFP4's 16x16 weight tiles take
// launch_fake_quantize_lines instead: (NVFP4: a typed amax over the source,) line_block_kernel
// or nvfp4_tile_kernel from the source straight into the copy (float32, or bfloat16 where every
// decoded value is one), which finishes. Both MX copies of one tensor (1x32 and 32x1 blocks,
// launch_fake_quantize_pair) take mx_pair_kernel, one read of the source for the two, with a
// scratch for each copy, finishing both; both NVFP4 copies (1x16 and 16x1) take one typed amax
// pass, then nvfp4_pair_kernel.
// quantize_fp8 (codes for the FP8 GEMMs): a typed amax over the source (current scaling only),
// then code_tile_kernel, which writes each code row-major and transposed in one pass (and, under
// delayed scaling, finds the amax), and finishes. launch_relu_grad_fp8 runs the same tiled pass
// on a ReLU layer's dZ formed from dY and y as it loads (never stored), adding the bias
// gradient's partial sums on the way, then bias_grad's totals.
// Clipped and flushed counts are integer atomics, so they are exact in any order.
#include <string>
#include <type_traits>

#include <cuda_fp8.h>

#include "core/backend/activation_math.h"
#include "core/backend/cuda/bias_grad.cuh"
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/dtype_access.cuh"
#include "core/backend/cuda/fake_quantize.cuh"
#include "core/backend/cuda/fp8_convert.h"
#include "core/backend/cuda/mx_scale_bits.h"
#include "core/backend/cuda/vec8.cuh"
#include "core/error.h"
#include "core/numeric/element_codec.h"
#include "core/numeric/quant_math.h"

namespace mantissa::cuda {

namespace {

namespace qm = quant_math;

struct Scratch {
    unsigned int amax_bits; // max over the tensor of |x|'s float32 bits
    // The sequence's last kernel: how many of its thread blocks have added their totals.
    unsigned int blocks_done;
    unsigned long long clipped, zeros;
    unsigned long long top_scale_bits; // max over blocks of the scale's float64 bits (>= 0)
};
static_assert(sizeof(Scratch) <= kQuantScratchBytes, "kQuantScratchBytes is too small");

constexpr unsigned kFullMask = 0xFFFFFFFFu;

__device__ inline unsigned warp_max(unsigned v) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        const unsigned o = __shfl_xor_sync(kFullMask, v, offset);
        v = o > v ? o : v;
    }
    return v;
}

__device__ inline unsigned long long warp_sum(unsigned long long v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(kFullMask, v, offset);
    return v;
}

__device__ inline unsigned abs_bits(float x) {
    return __float_as_uint(x) & 0x7FFFFFFFu;
}

// A block's share of the scratch totals, reduced in the block first so that each block makes
// one atomic per total: one per warp (65,536 warps for an 8192 x 4096 tensor) would queue on one
// address. Integer sums and maxima: exact in any order. Every thread of the block must call it
// (it synchronises the block); the block's thread count is a multiple of 32, at most 1024, and
// its warps are runs of 32 linear thread indices (x fastest), 1-D and 2-D blocks alike.
struct BlockTotals {
    unsigned long long clipped = 0, zeros = 0;
    unsigned amax_bits = 0;           // max of |x|'s float32 bits
    unsigned long long top_scale = 0; // max of a block scale's float64 bits
};
__device__ inline void add_block_totals(BlockTotals t, Scratch* s) {
    // Plain arrays: a __shared__ variable may not have a constructor.
    __shared__ unsigned long long part_clipped[32], part_zeros[32], part_top[32];
    __shared__ unsigned part_amax[32];
    t.clipped = warp_sum(t.clipped);
    t.zeros = warp_sum(t.zeros);
    t.amax_bits = warp_max(t.amax_bits);
    for (int offset = 16; offset > 0; offset >>= 1) {
        const unsigned long long o = __shfl_xor_sync(kFullMask, t.top_scale, offset);
        t.top_scale = o > t.top_scale ? o : t.top_scale;
    }
    const unsigned tid = threadIdx.y * blockDim.x + threadIdx.x;
    if ((tid & 31) == 0) {
        const unsigned w = tid >> 5;
        part_clipped[w] = t.clipped;
        part_zeros[w] = t.zeros;
        part_amax[w] = t.amax_bits;
        part_top[w] = t.top_scale;
    }
    __syncthreads();
    if (tid != 0) return;
    BlockTotals sum;
    for (unsigned w = 0; w < blockDim.x * blockDim.y / 32; ++w) {
        sum.clipped += part_clipped[w];
        sum.zeros += part_zeros[w];
        sum.amax_bits = part_amax[w] > sum.amax_bits ? part_amax[w] : sum.amax_bits;
        sum.top_scale = part_top[w] > sum.top_scale ? part_top[w] : sum.top_scale;
    }
    if (sum.clipped) atomicAdd(&s->clipped, sum.clipped);
    if (sum.zeros) atomicAdd(&s->zeros, sum.zeros);
    if (sum.amax_bits) atomicMax(&s->amax_bits, sum.amax_bits);
    if (sum.top_scale) atomicMax(&s->top_scale_bits, sum.top_scale);
}

// A thread's amax bits into the scratch's (add_block_totals).
__device__ inline void add_amax(unsigned m, Scratch* s) {
    BlockTotals t;
    t.amax_bits = m;
    add_block_totals(t, s);
}

// The amax the CPU engine computes (a float32 max, NaN if any element is NaN), as a double.
__device__ inline double amax_of_bits(unsigned bits) {
    return bits > 0x7F800000u ? qm::nan_value() : static_cast<double>(__uint_as_float(bits));
}

// Whether a cast needs the tensor's amax before it starts: current scaling makes its scale from
// it, NVFP4 its tensor scale. Delayed scaling casts with the scale its history made and MX with
// each block's own, so their kernels fold the tensor's amax (for the stats and the history) into
// the cast's own pass: one read of the tensor instead of two (issue 26).
__host__ __device__ inline bool amax_before_cast(const DeviceQuant& q) {
    return q.block ? q.tensor_scale : !q.delayed;
}

// A thread's clipped and flushed counts and amax bits as BlockTotals.
__device__ inline BlockTotals counts_amax(unsigned long long clipped, unsigned long long zeros,
                                          unsigned amax_bits) {
    BlockTotals t;
    t.clipped = clipped;
    t.zeros = zeros;
    t.amax_bits = amax_bits;
    return t;
}

// The per-tensor scale this step casts with (TE): current scaling from the tensor's amax,
// delayed scaling from state[0] (0 before the first recorded step: 1, as TE starts).
__device__ inline float tensor_scale_of(const DeviceQuant& q, const float* state, double amax) {
    if (!q.delayed) return qm::fp8_scale_for(amax, q.max_elem, 0, 1.0f);
    return state[0] > 0 ? state[0] : 1.0f;
}

// What a launch sequence's finish writes besides the scratch: the view's shape, the stats and
// delayed scaling's state.
struct SequenceEnd {
    i64 rows = 0, cols = 0;
    float* state = nullptr;
    double* stats = nullptr;
    bool record = false;
};

// A launch sequence's finish, from the totals its kernels left in `s`: the stats, delayed
// scaling's history and next scale, NVFP4's tensor scale for the GEMM; then `s` zeroed for the
// next sequence (fake_quantize.cuh). The totals are read through volatile loads: in a sequence's
// last kernel (add_totals_and_finish) other thread blocks' atomics wrote them, and this block may
// hold an older copy of the line in its L1 (it read the amax when it started).
__device__ inline void finish_totals(const DeviceQuant& q, const SequenceEnd& e, Scratch* s) {
    const volatile Scratch* v = s;
    Scratch totals;
    totals.amax_bits = v->amax_bits;
    totals.clipped = v->clipped;
    totals.zeros = v->zeros;
    totals.top_scale_bits = v->top_scale_bits;
    *s = Scratch{};
    const double amax = amax_of_bits(totals.amax_bits);
    double scale;
    i64 blocks = 1;
    if (q.block) {
        scale = __longlong_as_double(static_cast<long long>(totals.top_scale_bits));
        blocks = ((e.rows + q.block_rows - 1) / q.block_rows) *
                 ((e.cols + q.block_cols - 1) / q.block_cols);
    } else {
        const float used = tensor_scale_of(q, e.state, amax);
        scale = static_cast<double>(1.0f / used);
        if (q.delayed && e.record)
            qm::delayed_record(e.state, static_cast<std::size_t>(q.history_len), amax, q.max_elem,
                               q.margin, q.most_recent, used);
    }
    // NVFP4's tensor scale for the GEMM, from the amax the blocks' kernels scaled with.
    if (q.gemm_scale) *q.gemm_scale = qm::nvfp4_gemm_scale(qm::nvfp4_global_scale(amax));
    if (!e.record) return;
    e.stats[0] = amax;
    e.stats[1] = scale;
    e.stats[2] = static_cast<double>(totals.clipped);
    e.stats[3] = static_cast<double>(totals.zeros);
    e.stats[4] = static_cast<double>(e.rows * e.cols);
    e.stats[5] = static_cast<double>(blocks);
}

// Issue 26: a sequence's last kernel finishes it in its last thread block to add its totals,
// where a one-thread finish_kernel launch followed it (one launch fewer per quantised tensor: 9
// to 11 a step for mlp-small under mixed_float8, nvfp4 and mxfp8_e4m3). Called by thread 0 after
// its atomics: the fence makes them visible before its ticket, so the block that draws the last
// ticket sees every block's totals (the CUDA samples' threadFenceReduction).
__device__ inline bool last_block_in(Scratch* s) {
    __threadfence();
    const unsigned blocks = gridDim.x * gridDim.y * gridDim.z;
    const bool last = atomicAdd(&s->blocks_done, 1u) == blocks - 1;
    if (last) __threadfence(); // the totals are read only after the ticket
    return last;
}

// The block's totals into `s` (add_block_totals), then the sequence's finish in the last block.
__device__ inline void add_totals_and_finish(BlockTotals t, Scratch* s, const DeviceQuant& q,
                                             const SequenceEnd& end) {
    add_block_totals(t, s);
    if (threadIdx.x == 0 && threadIdx.y == 0 && last_block_in(s)) finish_totals(q, end, s);
}

// A pair's two copies' totals into s and s + 1, then both finishes in the last block (one ticket,
// counted in s).
__device__ inline void add_pair_totals_and_finish(BlockTotals row, BlockTotals col, Scratch* s,
                                                  const DeviceQuant& row_q,
                                                  const DeviceQuant& col_q,
                                                  const SequenceEnd& row_end,
                                                  const SequenceEnd& col_end) {
    add_block_totals(row, s);
    __syncthreads(); // add_block_totals' shared partial sums are read by thread 0 until here
    add_block_totals(col, s + 1);
    if (threadIdx.x == 0 && threadIdx.y == 0 && last_block_in(s)) {
        finish_totals(row_q, row_end, s);
        finish_totals(col_q, col_end, s + 1);
    }
}

// F's largest finite magnitude code, where saturation lands.
template <ElementFormat F>
constexpr std::uint32_t kFp8MaxMag = F == ElementFormat::Float8E5M2 ? 0x7Bu : 0x7Eu;

// Per-tensor FP8 of one value with the format fixed at compile time, as the CPU engine computes
// it (tensor_quant.cpp's cast_per_tensor and codes_per_tensor): a finite x = v·scale (exact in
// float64) rounds on its bits (element_codec: integer operations, no float64 division), a
// non-finite one (NaN, ±inf) goes through quant_math's general cast. Same results as
// cast_code / cast_element, which remain the definition (issue 26: those ran in float64 and made
// the codes kernel compute-bound, 0.25 ms for 8192 x 4096 values on an H100).
// The FP8 code of v · scale by the hardware's conversion (cvt.rn.satfinite, compute capability
// 8.9+) of the product rounded to odd (element_codec::product_round_to_odd), which gives the
// exact product's rounding; a product beyond float32's range saturates, as round_to_code does.
// Older GPUs take round_product_to_code (the same codes in 32-bit integer arithmetic).
template <ElementFormat F>
__device__ inline std::uint32_t hardware_code(float v, float scale) {
#if MANTISSA_FP8_CONVERSIONS
    const float odd = element_codec::product_round_to_odd(v, scale);
    if (!isfinite(odd)) {
        return (__float_as_uint(odd) >> 31) << 7 | kFp8MaxMag<F>;
    }
    return fp8_code<F>(odd);
#else
    return element_codec::round_product_to_code<F>(v, scale);
#endif
}

// The codes come from round_product_to_code, round_to_code's 32-bit twin (tst_block_quant sweeps
// the two against each other): a GPU emulates the 64-bit integer operations of the float64 route.
// No float64 per element (issue 26: the codes kernel was ALU-bound): the exact product v · scale
// is finite exactly when v and the scale are, and the clipped test is per_tensor_clipped's on the
// product and its rounding error (the same hi and lo hardware_code forms), with F's limit made at
// compile time (fp8_convert.h asserts it is a float32 midpoint, as the test needs).
template <ElementFormat F>
__device__ inline qm::CodeResult per_tensor_code(float v, float scale, float scale_inv,
                                                 double max_elem) {
    if (!isfinite(v) || !isfinite(scale)) return qm::cast_code(v, scale, scale_inv, F, max_elem);
    constexpr ClipLimit clip = clip_limit(qm::element_max(F));
    qm::CodeResult r;
    r.code = hardware_code<F>(v, scale);
    const float hi = v * scale;
    r.clipped = per_tensor_clipped(hi, std::fma(v, scale, -hi), clip);
    r.zero = v != 0 && (r.code & 0x7Fu) == 0; // only a zero magnitude decodes to zero
    return r;
}

// The decoded value: the code's float32 value times scale_inv, one float32 rounding of a product
// of a few bits by 24 (the same rounding as cast_element's float64 product narrowed once); a
// value flushed to zero is one whose code is zero, as there.
template <ElementFormat F>
__device__ inline qm::CastResult per_tensor_value(float v, float scale, float scale_inv,
                                                  double max_elem) {
    if (!isfinite(v) || !isfinite(scale)) // NaN and ±inf: quant_math's general cast
        return qm::cast_element(v, scale, scale_inv, F, max_elem);
    const qm::CodeResult c = per_tensor_code<F>(v, scale, scale_inv, max_elem);
    qm::CastResult r;
    r.value = element_codec::decode_code<F>(c.code) * scale_inv;
    r.clipped = c.clipped;
    r.zero = c.zero;
    return r;
}

__global__ void amax_kernel(const float* data, i64 n, Scratch* s) {
    unsigned m = 0;
    for (i64 i = blockIdx.x * i64(blockDim.x) + threadIdx.x; i < n;
         i += i64(gridDim.x) * blockDim.x) {
        const unsigned b = abs_bits(data[i]);
        m = b > m ? b : m;
    }
    add_amax(m, s);
}

// One warp per block; blockDim.x is a multiple of 32 and every lane of a warp runs the same
// number of loop trips over blocks, so the shuffles see the full warp. A block of one row or one
// column is indexed without a division. Without stochastic rounding the elements round as the CPU
// engine's fake_quantize_tile rounds them, with no float64 division (issue 26: the general path
// made mxfp8_e4m3 and nvfp4 steps of seed-mlp 16-23x float16's on an H100):
//   kMx     MX in element format F: v times the float32 inverse of the power-of-two scale,
//           rounded on its float32 bits (element_codec::round_to_element);
//   kNvfp4  NVFP4: |v| against the 7 midpoints between E2M1 magnitudes times the scale, as
//           float32 thresholds (quant_math::float_threshold), the decoded magnitudes selected;
//   kExact  anything else (stochastic rounding): quant_math's quantize_element per element
//           (line_block_kernel: E2M1 under stochastic rounding, the CPU engine's fast form).
enum class BlockPath { kExact, kMx, kNvfp4 };

// E2M1's magnitude j (0 … 7), as decode_element gives it (a function: device code may not
// index a host array).
__host__ __device__ constexpr double e2m1_magnitude(int j) {
    return j < 4 ? 0.5 * j : (j == 4 ? 2.0 : (j == 5 ? 3.0 : (j == 6 ? 4.0 : 6.0)));
}
constexpr bool e2m1_matches_codec() {
    for (int j = 0; j < 8; ++j)
        if (decode_element(static_cast<std::uint32_t>(j), ElementFormat::Float4E2M1) !=
            e2m1_magnitude(j))
            return false;
    return true;
}
static_assert(e2m1_matches_codec(), "e2m1_magnitude must match decode_element's E2M1 values");

__device__ inline float with_sign_of(float magnitude, float v) {
    return __uint_as_float(__float_as_uint(magnitude) | (__float_as_uint(v) & 0x80000000u));
}

// NVFP4's nearest rounding for one block, shared by block_kernel, line_block_kernel and
// nvfp4_tile_kernel: |v| against the 7 midpoints between E2M1 magnitudes times eff (float32
// thresholds, exact products as on the CPU), the 8 magnitudes times `out` (eff, or the block scale
// alone when the GEMM applies the tensor scale), chosen by selects, with v's sign.
struct E2m1Table {
    float T[7], D[8], clip;
    __device__ E2m1Table(double eff, double out, double max_elem) {
#pragma unroll
        for (int j = 0; j < 7; ++j)
            T[j] = qm::float_threshold((e2m1_magnitude(j) + e2m1_magnitude(j + 1)) / 2 * eff,
                                       (j & 1) != 0);
#pragma unroll
        for (int j = 0; j < 8; ++j) D[j] = static_cast<float>(e2m1_magnitude(j) * out);
        clip = qm::float_threshold(max_elem * eff, false);
    }
    // v's decoded value; `clipped` and `flushed` say whether it saturated or became zero.
    __device__ float round(float v, bool& clipped, bool& flushed) const {
        const float a = __uint_as_float(abs_bits(v));
        float o = D[0];
#pragma unroll
        for (int k = 0; k < 7; ++k) o = a > T[k] ? D[k + 1] : o;
        clipped = a > clip;
        flushed = a != 0 && !(a > T[0]);
        return with_sign_of(o, v);
    }
    // Magnitude code `mag`'s decoded value with v's sign (stochastic rounding chooses mag), by a
    // tree of selects on its three bits: indexing D would move it to local memory.
    __device__ float decoded(std::uint32_t mag, float v) const {
        const bool b0 = (mag & 1u) != 0, b1 = (mag & 2u) != 0, b2 = (mag & 4u) != 0;
        const float low = b1 ? (b0 ? D[3] : D[2]) : (b0 ? D[1] : D[0]);
        const float high = b1 ? (b0 ? D[7] : D[6]) : (b0 ? D[5] : D[4]);
        return with_sign_of(b2 ? high : low, v);
    }
};

// MX rounding of x = v / scale to F (the scale is a power of two, so x is exact): for FP8 on
// compute capability 8.9+ the hardware's two conversions (fp8_convert.h: round_to_element's
// values, checked against it on the host), else round_to_element on the float32 bits.
template <ElementFormat F>
__device__ inline float mx_round(float x) {
#if MANTISSA_FP8_CONVERSIONS
    constexpr bool kHardware = kIsFp8<F>;
#else
    constexpr bool kHardware = false;
#endif
    if constexpr (kHardware)
        return fp8_round<F>(x);
    else
        return element_codec::round_to_element<F>(x);
}

// The MX fast path over one block's elements (block_kernel's and line_block_kernel's): each value
// v becomes round(v / eff) · eff. The clipped test |v| > max · eff is |v / eff| > max in float32:
// v / eff is exact, or beyond float32's range (±inf: clipped in both) or below its normals (far
// under F's smallest subnormal: clipped in neither). Counts in 32 bits: a block has few elements.
template <ElementFormat F>
struct MxBlockRounding {
    float inv, eff, max;
    // The scale 2^k (k in [-127, 127]) and its inverse, both exact as float32s; F's largest
    // value has a few significant bits, so it is exact too.
    __device__ MxBlockRounding(float inverse, float scale, double max_elem)
        : inv(inverse), eff(scale), max(static_cast<float>(max_elem)) {}
    // v's decoded value; the counts are bumped for a clipped and a flushed value.
    __device__ float round(float v, unsigned& clipped, unsigned& zeros) const {
        const float x = v * inv;
        const float r = mx_round<F>(x);
        clipped += fabsf(x) > max ? 1u : 0u;
        zeros += (v != 0 && r == 0) ? 1u : 0u; // no NaN here (eff would be NaN)
        // One rounding, as the CPU engine's float64 product narrowed to float32.
        return r * eff;
    }
};

template <ElementFormat F, BlockPath kPath>
__global__ void block_kernel(float* data, i64 rows, i64 cols, DeviceQuant q, SequenceEnd end,
                             Scratch* s) {
    const unsigned lane = threadIdx.x & 31;
    const i64 warp = (blockIdx.x * i64(blockDim.x) + threadIdx.x) >> 5;
    const i64 warps = (i64(gridDim.x) * blockDim.x) >> 5;
    const i64 row_blocks = (rows + q.block_rows - 1) / q.block_rows;
    const i64 col_blocks = (cols + q.block_cols - 1) / q.block_cols;
    const i64 blocks = row_blocks * col_blocks;
    const float global = q.tensor_scale ? qm::nvfp4_global_scale(amax_of_bits(s->amax_bits)) : 1.0f;
    // What the decoded values are divided by, exactly: the tensor scale the GEMM applies instead.
    const double gemm_div = q.scale_in_gemm ? qm::nvfp4_gemm_scale(global) : 1.0;
    unsigned long long clipped = 0, zeros = 0;
    unsigned long long top_bits = 0; // the largest scale's bits over this warp's blocks
    unsigned tensor_amax = 0;        // the largest block amax's bits: the tensor's amax
    for (i64 b = warp; b < blocks; b += warps) {
        const i64 row0 = (b / col_blocks) * q.block_rows, col0 = (b % col_blocks) * q.block_cols;
        const i64 tr = rows - row0 < q.block_rows ? rows - row0 : q.block_rows;
        const i64 tc = cols - col0 < q.block_cols ? cols - col0 : q.block_cols;
        const i64 count = tr * tc;
        // Element e of the block: along the row, down the column, or row-major in the tile.
        auto at_of = [&](i64 e) {
            if (tr == 1) return row0 * cols + col0 + e;
            if (tc == 1) return (row0 + e) * cols + col0;
            return (row0 + e / tc) * cols + col0 + e % tc;
        };
        unsigned m = 0;
        for (i64 e = lane; e < count; e += 32) {
            const unsigned bits = abs_bits(data[at_of(e)]);
            m = bits > m ? bits : m;
        }
        m = warp_max(m);
        tensor_amax = m > tensor_amax ? m : tensor_amax;
        const double amax = amax_of_bits(m);
        double scale, eff; // the block's scale, and the whole factor a code is multiplied by
        if (q.tensor_scale) {
            scale = decode_element(qm::nvfp4_scale_code(amax, global), ElementFormat::Float8E4M3);
            eff = scale * static_cast<double>(global); // 4 x 24 bits: exact
        } else {
            // The MX fast path names its format at compile time, so the scale rule folds.
            const ElementFormat element = kPath == BlockPath::kMx ? F : q.element;
            scale = decode_element(qm::mx_scale_code(amax, element, q.ceil), ElementFormat::E8M0);
            eff = scale;
        }
        if (kPath == BlockPath::kMx && !qm::is_nan(eff)) { // uniform: eff is the block's
            const MxBlockRounding<F> mx(static_cast<float>(1.0 / eff), static_cast<float>(eff),
                                        q.max_elem);
            unsigned block_clipped = 0, block_zeros = 0;
            for (i64 e = lane; e < count; e += 32) {
                const i64 at = at_of(e);
                data[at] = mx.round(data[at], block_clipped, block_zeros);
            }
            clipped += block_clipped;
            zeros += block_zeros;
        } else if (kPath == BlockPath::kNvfp4 && !qm::is_nan(eff) && eff != 0) {
            // out: the block scale alone when the GEMM applies the tensor scale
            const E2m1Table table(eff, eff / gemm_div, q.max_elem);
            for (i64 e = lane; e < count; e += 32) {
                const i64 at = at_of(e);
                bool c, z;
                data[at] = table.round(data[at], c, z);
                clipped += c ? 1 : 0;
                zeros += z ? 1 : 0;
            }
        } else {
            for (i64 e = lane; e < count; e += 32) {
                const i64 at = at_of(e);
                const double v = static_cast<double>(data[at]);
                const std::uint32_t random =
                    q.stochastic ? rounding_random(q.seed, static_cast<std::uint64_t>(at)) : 0u;
                const qm::ElementResult r = qm::quantize_element(
                    v, eff, q.element, q.max_elem, q.stochastic, q.tensor_scale, random);
                data[at] = static_cast<float>(r.decoded / gemm_div); // code · eff / global: exact
                clipped += r.clipped ? 1 : 0;
                zeros += r.zero ? 1 : 0;
            }
        }
        // Non-negative doubles order as their bits, and a NaN scale (bits above infinity's)
        // stays the largest, as the CPU engine's "NaN sticks" rule has it.
        const auto bits =
            static_cast<unsigned long long>(__double_as_longlong(q.tensor_scale ? eff : scale));
        top_bits = bits > top_bits ? bits : top_bits;
    }
    // Once per thread block, after its warps' last blocks: an atomic per scale block (a million
    // for an 8192 x 4096 tensor in 1x32 blocks) would queue on one address.
    BlockTotals totals;
    totals.clipped = clipped;
    totals.zeros = zeros;
    totals.top_scale = lane == 0 ? top_bits : 0;
    totals.amax_bits = tensor_amax; // NVFP4's amax pass found the same maximum
    add_totals_and_finish(totals, s, q, end);
}

// A thread's two adjacent elements as one load or store (4 bytes for 16-bit types, 8 for
// float32): code_tile_kernel's source pairs and line_block_kernel's column pairs.
template <class T>
struct alignas(2 * sizeof(T)) SourcePair {
    T lo, hi;
};

// One block of a one-dimensional block shape (1 x len along a row, or len x 1 down a column,
// len <= 32) per thread, read straight from the source tensor and written into the copy, which
// may be bfloat16 when every decoded value is a bfloat16 value (MX, and NVFP4 without its tensor
// scale: decodes_exactly_in_bfloat16).
// Issue 26: block_kernel's one warp per block spent its time on per-block work (a 64-bit division,
// five shuffles, the scale in float64) shared by 32 elements, and its column blocks read one
// element per row of the tile; here the per-block work is one thread's, a column block's threads
// read adjacent columns, and a row block with aligned full rows moves in 16-byte loads. The
// values, scales and counts are block_kernel's, element for element (the same paths below), and
// the tensor's amax is this kernel's maximum (MX needs no amax pass before it; NVFP4's tensor
// scale does, so its amax pass runs first and this maximum only repeats it).
// Stochastic rounding (NVFP4's gradients, and MX's when asked for) takes kExact, each element
// drawing its random bits from its flat index, as block_kernel's general path does; the line
// kernels take it for E2M1 elements only (fake_quantize_lines_apply), so F names the format and
// the codec folds to E2M1's constants.
// The threads of a thread block form a 2-D shape (launch_lines): x across the blocks of a row (or
// the columns), y down the rows (or the row blocks). A narrow tensor fills every lane this way;
// with one thread per block of a row and the rest idle, conv2d_1's gradient of the cnn (86,528 x 32
// in 1 x 16 blocks: two blocks a row) used 2 of 128 lanes and took 4.5 ms a step under nvfp4 on
// the H200 (2026-11-30).
constexpr int kLineBlockMax = 32;
constexpr unsigned kLineThreads = 128;

// Whether line_block_kernel takes two adjacent columns a thread: down columns, but not under
// stochastic rounding (its per-element work unrolled twice would double a long kernel).
template <BlockPath kPath>
__host__ __device__ constexpr bool line_pairs(bool column) {
    return column && kPath != BlockPath::kExact;
}

// Whether a line kernel on path kPath quantises NVFP4: kExact (stochastic rounding) takes NVFP4
// and MX alike, and the tensor scale says which.
template <BlockPath kPath>
__device__ inline bool line_is_nvfp4(const DeviceQuant& q) {
    return kPath == BlockPath::kNvfp4 || (kPath == BlockPath::kExact && q.tensor_scale);
}

// The units line_block_kernel's threads take: x across (a row's blocks, or the columns or column
// pairs) and y down (the rows, or the row blocks). The kernel and its launch both read them here.
struct LineUnits {
    i64 x, y;
};
__host__ __device__ inline LineUnits line_units(i64 rows, i64 cols, int len, bool column,
                                                bool pairs) {
    if (!column) return {(cols + len - 1) / len, rows};
    return {pairs ? (cols + 1) / 2 : cols, (rows + len - 1) / len};
}

// The threads' shape for units_x blocks across: x the smallest power of two covering them, up to
// all of kLineThreads, and y the rest.
inline dim3 line_thread_shape(i64 units_x) {
    unsigned tx = 1;
    while (tx < kLineThreads && tx < units_x) tx <<= 1;
    return dim3(tx, kLineThreads / tx);
}

// One block's values v[0 … n) quantised in place (element j at flat index first + j · stride,
// where stochastic rounding draws its bits), with the block's amax, clipped and flushed counts and
// scale folded into `totals`. `global` is NVFP4's tensor scale and `gemm_div` what the decoded
// values are divided by (block_kernel's).
template <ElementFormat F, BlockPath kPath>
__device__ inline void quantize_line(float (&v)[kLineBlockMax], int n, i64 first, i64 stride,
                                     const DeviceQuant& q, float global, double gemm_div,
                                     BlockTotals& totals) {
    const bool nvfp4 = line_is_nvfp4<kPath>(q);
    unsigned m = 0;
#pragma unroll
    for (int j = 0; j < kLineBlockMax; ++j)
        if (j < n) m = abs_bits(v[j]) > m ? abs_bits(v[j]) : m;
    totals.amax_bits = m > totals.amax_bits ? m : totals.amax_bits;
    // MX's scale in 32-bit arithmetic (mx_scale_bits.h); a NaN scale (a NaN or infinite amax)
    // takes the per-element path below, with everything else.
    const MxScaleBits mx_scale =
        kPath == BlockPath::kMx ? mx_scale_bits<F>(m, q.ceil) : MxScaleBits{};
    unsigned long long bits; // the block's scale as float64 bits, for the largest scale
    if (kPath == BlockPath::kMx && mx_scale.code != 0xFFu) { // block_kernel's kMx path
        const MxBlockRounding<F> mx(mx_scale.inverse, mx_scale.scale, q.max_elem);
        unsigned block_clipped = 0, block_zeros = 0;
#pragma unroll
        for (int j = 0; j < kLineBlockMax; ++j)
            if (j < n) v[j] = mx.round(v[j], block_clipped, block_zeros);
        totals.clipped += block_clipped;
        totals.zeros += block_zeros;
        bits = mx_scale.scale_bits64();
    } else {
        const double amax = amax_of_bits(m);
        // The block's scale, and the whole factor a code is multiplied by.
        double scale, eff;
        if (kPath == BlockPath::kMx) {
            // A NaN scale (mx_scale_code's 0xFF; MxScaleBits' default), decode_element's NaN, as
            // a constant: every element below is then degenerate_element's NaN. (Computed at run
            // time through the general path, it once unrolled that path 32 times into every MX
            // kernel for nothing, and ptxas took minutes longer.)
            scale = eff =
                __longlong_as_double(static_cast<long long>(MxScaleBits{}.scale_bits64()));
        } else if (nvfp4) {
            scale = decode_element(qm::nvfp4_scale_code(amax, global), ElementFormat::Float8E4M3);
            eff = scale * static_cast<double>(global); // 4 x 24 bits: exact
        } else {                                       // MX under stochastic rounding (kExact)
            scale = decode_element(qm::mx_scale_code(amax, F, q.ceil), ElementFormat::E8M0);
            eff = scale;
        }
        if (kPath == BlockPath::kNvfp4 && !qm::is_nan(eff) && eff != 0) {
            const E2m1Table table(eff, eff / gemm_div, q.max_elem); // block_kernel's path
            unsigned block_clipped = 0, block_zeros = 0; // 32 bits: a block has few elements
#pragma unroll
            for (int j = 0; j < kLineBlockMax; ++j) {
                if (j >= n) continue;
                bool c, z;
                v[j] = table.round(v[j], c, z);
                block_clipped += c ? 1 : 0;
                block_zeros += z ? 1 : 0;
            }
            totals.clipped += block_clipped;
            totals.zeros += block_zeros;
        } else if (kPath == BlockPath::kExact && !qm::is_nan(eff) && eff != 0) {
            // Stochastic rounding of E2M1 (the only format the line kernels take under it), as
            // the CPU engine's fake_quantize_tile rounds it: v / eff in float64 (exact under MX's
            // power-of-two scale), the magnitude code from element_codec::stochastic_magnitude
            // (in its 32-bit form, stochastic_magnitude_halves: tst_block_quant sweeps both
            // against the codec and each other), its value times `out` with v's sign. Issue 26:
            // quant_math's general quantize_element here, with the format read at run time, put
            // 1,636 machine instructions between two elements' random draws and made the kernel
            // 49,458 instructions long (now 94 and 5,231).
            const E2m1Table table(eff, eff / gemm_div, q.max_elem);
            unsigned block_clipped = 0, block_zeros = 0;
#pragma unroll
            for (int j = 0; j < kLineBlockMax; ++j) {
                if (j >= n) continue;
                // Element j's flat index draws its random bits, as block_kernel's `at`.
                const std::uint32_t random =
                    rounding_random(q.seed, static_cast<std::uint64_t>(first + j * stride));
                const std::uint32_t mag = element_codec::stochastic_magnitude_halves<F>(
                    static_cast<double>(v[j]) / eff, random);
                block_clipped += __uint_as_float(abs_bits(v[j])) > table.clip ? 1 : 0;
                block_zeros += v[j] != 0 && mag == 0 ? 1 : 0; // no NaN here (eff would be NaN)
                v[j] = table.decoded(mag, v[j]);
            }
            totals.clipped += block_clipped;
            totals.zeros += block_zeros;
        } else { // a NaN scale, or NVFP4's zero scale (an all-zero block): quant_math's cases
#pragma unroll
            for (int j = 0; j < kLineBlockMax; ++j) {
                if (j >= n) continue;
                const qm::ElementResult r =
                    qm::degenerate_element(static_cast<double>(v[j]), eff, F);
                v[j] = static_cast<float>(r.decoded); // NaN or a signed zero: gemm_div changes none
                totals.zeros += r.zero ? 1 : 0;
            }
        }
        bits = static_cast<unsigned long long>(__double_as_longlong(nvfp4 ? eff : scale));
    }
    totals.top_scale = bits > totals.top_scale ? bits : totals.top_scale;
}

// Along rows (kColumn false) a thread takes one block of a row: 16-byte loads and stores where
// `vec` (full blocks of a multiple of 8 elements at aligned addresses). Down columns a thread
// takes the blocks of two adjacent columns where kPairs (each row's two elements as one load and
// one store where `vec`: an even row length and a base aligned to two elements), so a warp moves
// 64 adjacent columns of a row at a time, where one column a thread moved half a 128-byte line.
// Stochastic rounding keeps one column a thread: its per-element work unrolled twice would double
// a kernel that is already long.
template <class TS, class TD, ElementFormat F, BlockPath kPath, bool kColumn>
__global__ void line_block_kernel(const TS* src, TD* dst, i64 rows, i64 cols, int len, bool vec,
                                  DeviceQuant q, SequenceEnd end, Scratch* s) {
    constexpr bool kPairs = line_pairs<kPath>(kColumn);
    const bool nvfp4 = line_is_nvfp4<kPath>(q);
    const float global = nvfp4 ? qm::nvfp4_global_scale(amax_of_bits(s->amax_bits)) : 1.0f;
    const double gemm_div = q.scale_in_gemm ? qm::nvfp4_gemm_scale(global) : 1.0; // block_kernel's
    // The units: (row block y, column or column pair x) down columns, (row y, column block x)
    // along rows; y from the grid's and the thread block's second dimension, so nothing divides.
    const LineUnits units = line_units(rows, cols, len, kColumn, kPairs);
    BlockTotals totals;
    for (i64 y = blockIdx.y * i64(blockDim.y) + threadIdx.y; y < units.y;
         y += i64(gridDim.y) * blockDim.y) {
        for (i64 x = blockIdx.x * i64(blockDim.x) + threadIdx.x; x < units.x;
             x += i64(gridDim.x) * blockDim.x) {
            const i64 col = kPairs ? 2 * x : x; // a column block's (first) column
            const i64 first = kColumn ? y * len * cols + col : y * cols + x * len;
            const i64 stride = kColumn ? cols : 1;
            const i64 left = kColumn ? rows - y * len : cols - x * len;
            const int n = left < len ? static_cast<int>(left) : len;
            if constexpr (kPairs) {
                const bool second = col + 1 < cols; // false only for an odd row length's last
                float v0[kLineBlockMax], v1[kLineBlockMax];
#pragma unroll
                for (int j = 0; j < kLineBlockMax; ++j) {
                    if (j >= n) continue;
                    const TS* p = src + first + j * stride;
                    if (vec) {
                        const SourcePair<TS> pair = *reinterpret_cast<const SourcePair<TS>*>(p);
                        v0[j] = to_float(pair.lo);
                        v1[j] = to_float(pair.hi);
                    } else {
                        v0[j] = to_float(p[0]);
                        v1[j] = second ? to_float(p[1]) : 0.0f;
                    }
                }
                quantize_line<F, kPath>(v0, n, first, stride, q, global, gemm_div, totals);
                if (second)
                    quantize_line<F, kPath>(v1, n, first + 1, stride, q, global, gemm_div, totals);
#pragma unroll
                for (int j = 0; j < kLineBlockMax; ++j) {
                    if (j >= n) continue;
                    TD* p = dst + first + j * stride;
                    if (vec) {
                        SourcePair<TD> pair;
                        pair.lo = from_float<TD>(v0[j]);
                        pair.hi = from_float<TD>(v1[j]);
                        *reinterpret_cast<SourcePair<TD>*>(p) = pair;
                    } else {
                        p[0] = from_float<TD>(v0[j]);
                        if (second) p[1] = from_float<TD>(v1[j]);
                    }
                }
                continue;
            }
            const bool wide = !kColumn && vec && n == len;
            float v[kLineBlockMax];
            if (wide) {
#pragma unroll
                for (int k = 0; k < kLineBlockMax / kVec; ++k)
                    if (k * kVec < n) load8(src + first, k, v + k * kVec);
            } else {
#pragma unroll
                for (int j = 0; j < kLineBlockMax; ++j)
                    if (j < n) v[j] = to_float(src[first + j * stride]);
            }
            quantize_line<F, kPath>(v, n, first, stride, q, global, gemm_div, totals);
            if (wide) {
#pragma unroll
                for (int k = 0; k < kLineBlockMax / kVec; ++k)
                    if (k * kVec < n) store8(dst + first, k, v + k * kVec);
            } else {
#pragma unroll
                for (int j = 0; j < kLineBlockMax; ++j)
                    if (j < n) dst[first + j * stride] = from_float<TD>(v[j]);
            }
        }
    }
    add_totals_and_finish(totals, s, q, end);
}

// NVFP4's 16x16 weight tiles without stochastic rounding, one warp per tile straight from the
// source into the copy (float32, or bfloat16 when the GEMM applies the tensor scale): lane l takes
// row l / 2 of the tile, columns (l % 2) * 8 onwards, in 16-byte accesses where the row length
// allows (2026-11-30, sixth session: they were eight scalar loads and stores a lane). The values,
// scales and counts are block_kernel's kNvfp4 path's, element for element. Issue 26: these tiles
// went through a float32 buffer, block_kernel in place (a 64-bit division per element to find it
// in the tile) and a narrowing cast. Its amax pass runs first (the tensor scale needs it); this
// maximum repeats it.
constexpr int kNvTile = 16;
static_assert(kNvTile == 2 * kVec, "two lanes a tile row, one 8-element vector each");

template <class TS, class TD>
__global__ void nvfp4_tile_kernel(const TS* src, TD* dst, i64 rows, i64 cols, bool vec,
                                  DeviceQuant q, SequenceEnd end, Scratch* s) {
    const unsigned lane = threadIdx.x & 31;
    const i64 warp = (blockIdx.x * i64(blockDim.x) + threadIdx.x) >> 5;
    const i64 warps = (i64(gridDim.x) * blockDim.x) >> 5;
    const i64 tile_cols = (cols + kNvTile - 1) / kNvTile;
    const i64 tiles = ((rows + kNvTile - 1) / kNvTile) * tile_cols;
    const float global = qm::nvfp4_global_scale(amax_of_bits(s->amax_bits));
    const double gemm_div = q.scale_in_gemm ? qm::nvfp4_gemm_scale(global) : 1.0;
    const int r = static_cast<int>(lane >> 1), c0 = static_cast<int>(lane & 1) * 8;
    BlockTotals totals;
    for (i64 t = warp; t < tiles; t += warps) { // uniform across the warp: the shuffles are whole
        const i64 row = (t / tile_cols) * kNvTile + r;
        const i64 col0 = (t % tile_cols) * kNvTile + c0;
        const i64 at0 = row * cols + col0;
        // A lane's 8 elements in one 16-byte access (two for float32) where all lie in the tensor
        // and `vec` (a row length of a multiple of 8, aligned bases).
        const bool whole = vec && row < rows && col0 + 8 <= cols;
        bool in[8];
        float v[8];
        if (whole) load8(src + at0, 0, v);
        unsigned m = 0;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            in[j] = row < rows && col0 + j < cols;
            if (!whole) v[j] = in[j] ? to_float(src[at0 + j]) : 0.0f;
            m = abs_bits(v[j]) > m ? abs_bits(v[j]) : m;
        }
        m = warp_max(m);
        totals.amax_bits = m > totals.amax_bits ? m : totals.amax_bits;
        const double amax = amax_of_bits(m);
        const double scale =
            decode_element(qm::nvfp4_scale_code(amax, global), ElementFormat::Float8E4M3);
        const double eff = scale * static_cast<double>(global); // 4 x 24 bits: exact
        if (!qm::is_nan(eff) && eff != 0) {                     // block_kernel's kNvfp4 path
            const E2m1Table table(eff, eff / gemm_div, q.max_elem);
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                bool c, z;
                v[j] = table.round(v[j], c, z);
                totals.clipped += in[j] && c ? 1 : 0;
                totals.zeros += in[j] && z ? 1 : 0;
            }
        } else { // a NaN scale, or an all-zero tile: quant_math's cases for them
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                const qm::ElementResult e = qm::degenerate_element(static_cast<double>(v[j]), eff,
                                                                   ElementFormat::Float4E2M1);
                v[j] = static_cast<float>(e.decoded); // NaN or a signed zero: gemm_div changes none
                totals.zeros += in[j] && e.zero ? 1 : 0;
            }
        }
        const auto bits = static_cast<unsigned long long>(__double_as_longlong(eff));
        totals.top_scale = bits > totals.top_scale ? bits : totals.top_scale;
        if (whole) {
            store8(dst + at0, 0, v);
            continue;
        }
#pragma unroll
        for (int j = 0; j < 8; ++j)
            if (in[j]) dst[at0 + j] = from_float<TD>(v[j]);
    }
    add_totals_and_finish(totals, s, q, end);
}

// Issue 26: both MX copies of one tensor in one pass (Backend::fake_quantize_pair; Transformer
// Engine quantises both usages of an MXFP8 tensor at once): the 1×32 copy for the GEMM reducing
// along the rows and the 32×1 copy for the one reducing down the columns, from one read of the
// source (two line_block_kernel launches read it twice). A thread block takes a tile of 32 rows
// × 64 columns, each thread 8 adjacent elements of one row: a 1×32 block is four adjacent lanes
// (two shuffles of their maxima), a 32×1 block one column of the tile (the maxima of its four
// rows in each warp by shuffles, then of the eight warps through shared memory). Both copies keep
// the source's layout, so each thread stores its 8 values twice, in 16-byte stores where `vec`.
// Values, scales and counts are line_block_kernel's kMx path's for each copy, element for element
// (the op-case table's fake_quantize_pair rows check it against the CPU engine's two calls).
constexpr int kPairTileRows = 32, kPairTileCols = 64, kPairThreads = 256;
static_assert(kPairTileRows * kPairTileCols == kPairThreads * kVec, "a tile is 8 values a thread");

// How many of a thread's 8 elements (row, col0 … col0 + 7) lie in the tensor.
__device__ inline int pair_elements(i64 row, i64 col0, i64 rows, i64 cols) {
    const i64 left = row < rows ? cols - col0 : 0;
    return left >= kVec ? kVec : left > 0 ? static_cast<int>(left) : 0;
}

// A thread's share of a pair tile: 8 adjacent elements of one row, where they lie, and their
// largest magnitude's bits. Thread t takes row t / 8 of the tile, columns 8 · (t % 8) onwards.
struct PairShare {
    i64 tile_row0, tile_col0; // the tile's first row and column
    i64 row, col0, at;        // the share's row, first column and flat index
    int n;                    // how many of the 8 lie in the tensor
    float x[kVec];            // the values (zeros past the tensor's edge: no maximum or count)
    unsigned m;               // the largest |x|'s float32 bits
};

// Tile `tile` (of tile_cols a row of tiles)'s share of this thread: a 16-byte load where `vec` and
// all 8 elements lie in the tensor.
template <class TS>
__device__ inline PairShare load_pair_share(const TS* src, i64 tile, i64 tile_cols, i64 rows,
                                            i64 cols, bool vec) {
    PairShare p;
    const int r = static_cast<int>(threadIdx.x / 8), c = static_cast<int>(threadIdx.x % 8) * kVec;
    p.tile_row0 = (tile / tile_cols) * kPairTileRows;
    p.tile_col0 = (tile % tile_cols) * kPairTileCols;
    p.row = p.tile_row0 + r;
    p.col0 = p.tile_col0 + c;
    p.at = p.row * cols + p.col0;
    p.n = pair_elements(p.row, p.col0, rows, cols);
    if (vec && p.n == kVec) {
        load8(src + p.at, 0, p.x);
    } else {
#pragma unroll
        for (int j = 0; j < kVec; ++j) p.x[j] = j < p.n ? to_float(src[p.at + j]) : 0.0f;
    }
    p.m = 0;
#pragma unroll
    for (int j = 0; j < kVec; ++j) p.m = abs_bits(p.x[j]) > p.m ? abs_bits(p.x[j]) : p.m;
    return p;
}

// The column maxima of a warp's four rows of a pair tile (lanes 8 apart hold one column's
// elements): lanes 0 … 7 write their 8 columns' maxima to out[0 … 8).
__device__ inline void warp_column_maxima(const float (&x)[kVec], unsigned* out) {
    unsigned cm[kVec];
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
        cm[j] = abs_bits(x[j]);
        for (int offset = 8; offset < 32; offset <<= 1) {
            const unsigned o = __shfl_xor_sync(kFullMask, cm[j], offset);
            cm[j] = o > cm[j] ? o : cm[j];
        }
    }
    if ((threadIdx.x & 31) < 8)
#pragma unroll
        for (int j = 0; j < kVec; ++j) out[j] = cm[j];
}

// A thread's two copies of its share, each in the source's layout at `at`.
template <class TD>
__device__ inline void store_pair_shares(TD* row_dst, TD* col_dst, i64 at, int n, bool vec,
                                         const float (&row_v)[kVec], const float (&col_v)[kVec]) {
    if (vec && n == kVec) {
        store8(row_dst + at, 0, row_v);
        store8(col_dst + at, 0, col_v);
        return;
    }
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
        if (j >= n) continue;
        row_dst[at + j] = from_float<TD>(row_v[j]);
        col_dst[at + j] = from_float<TD>(col_v[j]);
    }
}

// One MX block's share held by this thread: v[0 … 8) rounded in place under the block's amax bits
// m, the counts into `totals`; the block's scale counted where `counted` (the block lies in the
// tensor; a thread past the edge holds zeros, which change no count).
template <ElementFormat F>
__device__ inline float mx_round_one(float v, unsigned m, bool ceil, float max_elem,
                                     BlockTotals& totals, bool counted) {
    const MxScaleBits scale = mx_scale_bits<F>(m, ceil);
    if (counted) {
        const unsigned long long bits = scale.scale_bits64();
        totals.top_scale = bits > totals.top_scale ? bits : totals.top_scale;
    }
    if (scale.code == 0xFFu) // a NaN or infinity in the block: every value NaN (quantize_line's)
        return static_cast<float>(
            qm::degenerate_element(static_cast<double>(v), qm::nan_value(), F).decoded);
    const MxBlockRounding<F> mx(scale.inverse, scale.scale, max_elem);
    unsigned clipped = 0, zeros = 0;
    v = mx.round(v, clipped, zeros);
    totals.clipped += clipped;
    totals.zeros += zeros;
    return v;
}

template <class TS, class TD, ElementFormat F>
__global__ void mx_pair_kernel(const TS* src, TD* row_dst, TD* col_dst, i64 rows, i64 cols,
                               bool vec, DeviceQuant row_q, DeviceQuant col_q, SequenceEnd row_end,
                               SequenceEnd col_end, Scratch* s) {
    __shared__ unsigned warp_col_max[kPairThreads / 32][kPairTileCols];
    __shared__ unsigned col_max[kPairTileCols];
    const unsigned t = threadIdx.x, warp = t >> 5;
    const int c = static_cast<int>(t % 8) * kVec; // this thread's first column in the tile
    const i64 tile_cols = (cols + kPairTileCols - 1) / kPairTileCols;
    const i64 tiles = ((rows + kPairTileRows - 1) / kPairTileRows) * tile_cols;
    const bool ceil = row_q.ceil; // one scale rule and element format for both
    const auto max_elem = static_cast<float>(row_q.max_elem);
    BlockTotals row_totals, col_totals;
    for (i64 tile = blockIdx.x; tile < tiles; tile += gridDim.x) { // uniform across the block
        PairShare share = load_pair_share(src, tile, tile_cols, rows, cols, vec);
        const i64 row = share.row, tile_col0 = share.tile_col0, col0 = share.col0;
        float(&x)[kVec] = share.x;
        // The 1×32 block: lanes 4k … 4k + 3, one row's 32 columns.
        unsigned m = share.m;
        for (int offset = 1; offset < 4; offset <<= 1) {
            const unsigned o = __shfl_xor_sync(kFullMask, m, offset);
            m = o > m ? o : m;
        }
        row_totals.amax_bits = m > row_totals.amax_bits ? m : row_totals.amax_bits;
        const bool row_block_in = row < rows && tile_col0 + (c / 32) * 32 < cols;
        float y[kVec];
#pragma unroll
        for (int j = 0; j < kVec; ++j)
            y[j] = mx_round_one<F>(x[j], m, ceil, max_elem, row_totals, row_block_in);
        // The 32×1 blocks: each column's maximum over the warp's four rows (lanes 8 apart),
        // then over the eight warps.
        warp_column_maxima(x, warp_col_max[warp] + c);
        __syncthreads();
        if (t < kPairTileCols) {
            unsigned mc = 0;
#pragma unroll
            for (int w = 0; w < kPairThreads / 32; ++w)
                mc = warp_col_max[w][t] > mc ? warp_col_max[w][t] : mc;
            col_max[t] = mc;
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
            const unsigned mc = col_max[c + j];
            col_totals.amax_bits = mc > col_totals.amax_bits ? mc : col_totals.amax_bits;
            x[j] = mx_round_one<F>(x[j], mc, ceil, max_elem, col_totals, col0 + j < cols);
        }
        store_pair_shares(row_dst, col_dst, share.at, share.n, vec, y, x);
    }
    add_pair_totals_and_finish(row_totals, col_totals, s, row_q, col_q, row_end, col_end);
}

// Issue 26: NVFP4's two copies of one tensor in one pass: an activation's 1×16 copy for the
// forward GEMM and 16×1 copy for dW (nearest), a gradient's two (stochastic), after the amax pass
// the tensor scale needs; the two line_block_kernel launches read the tensor twice and ran two
// amax passes. mx_pair_kernel's tiles and thread layout with 16-element blocks: a 1×16 block is
// two adjacent lanes, a 16×1 block one column of four warps. A block's rounding (E2m1Table's
// float32 thresholds and decoded magnitudes, made in float64) is worth making once per block, not
// per element: each of the tile's 128 row blocks and 128 column blocks has one thread make it
// into shared memory, where its 16 elements read it. Values, scales and counts are
// line_block_kernel's (kNvfp4 path, or kExact under stochastic rounding) for each copy, element
// for element; element (row, col) draws its random bits from row · cols + col, as there.
constexpr int kNvPairLen = 16;
constexpr int kNvRowBlocks = kPairTileCols / kNvPairLen; // a tile row's 1×16 blocks
constexpr int kNvColGroups = kPairTileRows / kNvPairLen; // 16×1 blocks down a tile column
constexpr int kNvWarpsPerBlock = kNvPairLen / 4;         // a warp holds four rows of the tile
static_assert(kPairTileRows * kNvRowBlocks == kPairThreads / 2 &&
                  kNvColGroups * kPairTileCols == kPairThreads / 2,
              "one thread makes each block's rounding");

// One NVFP4 block's rounding, plain data for shared memory (E2m1Table's fields, which a
// __shared__ variable may not construct). 80 bytes, 20 banks: with the column tables' index
// padded by one every 8 columns (nv_col_slot), the 8 tables a quarter warp reads in one 16-byte
// load fall in different banks.
struct alignas(16) Nvfp4Rounding {
    float T[7], clip; // the thresholds between E2M1 magnitudes, and the clip limit
    float D[8];       // the decoded magnitudes
    double eff;       // block scale × tensor scale; NaN or 0: degenerate_element's cases
    double unused;
};
static_assert(sizeof(Nvfp4Rounding) == 80, "20 banks");

__device__ inline int nv_col_slot(int col) {
    return col + col / 8;
}

// The rounding of a block with amax bits m under the tensor scale `global`, as quantize_line
// makes it (the same expressions, so the same scale bits, NaN included).
__device__ inline void make_nvfp4_rounding(Nvfp4Rounding& r, unsigned m, float global,
                                           double gemm_div, double max_elem) {
    const double scale =
        decode_element(qm::nvfp4_scale_code(amax_of_bits(m), global), ElementFormat::Float8E4M3);
    const double eff = scale * static_cast<double>(global); // 4 x 24 bits: exact
    r.eff = eff;
    if (qm::is_nan(eff) || eff == 0) return;
    const E2m1Table table(eff, eff / gemm_div, max_elem);
#pragma unroll
    for (int j = 0; j < 7; ++j) r.T[j] = table.T[j];
    r.clip = table.clip;
#pragma unroll
    for (int j = 0; j < 8; ++j) r.D[j] = table.D[j];
}

// One element v (flat index `index`) under its block's rounding, the counts into `totals`.
// Nearest: E2m1Table::round, with the magnitude as the count of thresholds |v| exceeds (the
// thresholds rise with the midpoints, so that count is the last one the select chain takes).
// Stochastic: quantize_line's kExact form.
template <bool kStochastic>
__device__ inline float nvfp4_round_one(const Nvfp4Rounding& r, float v, std::uint64_t seed,
                                        i64 index, BlockTotals& totals) {
    const double eff = r.eff;
    if (qm::is_nan(eff) || eff == 0) { // a NaN tensor or block, or an all-zero block
        const qm::ElementResult e =
            qm::degenerate_element(static_cast<double>(v), eff, ElementFormat::Float4E2M1);
        totals.zeros += e.zero ? 1 : 0;
        return static_cast<float>(e.decoded);
    }
    const float a = __uint_as_float(abs_bits(v));
    totals.clipped += a > r.clip ? 1 : 0;
    std::uint32_t mag = 0;
    if constexpr (kStochastic) {
        mag = element_codec::stochastic_magnitude_halves<ElementFormat::Float4E2M1>(
            static_cast<double>(v) / eff, rounding_random(seed, static_cast<std::uint64_t>(index)));
    } else {
#pragma unroll
        for (int k = 0; k < 7; ++k) mag += a > r.T[k] ? 1u : 0u;
    }
    totals.zeros += v != 0 && mag == 0 ? 1 : 0; // no NaN here (eff would be NaN)
    return with_sign_of(r.D[mag], v);
}

// Three thread blocks an SM: 108 to 128 registers a thread (ptxas's choice) allowed two, 512
// threads with one 16-byte load each in flight; at most 80 (nvcc 13, sm_90) spill 28 to 56 bytes
// a thread to the L1-cached stack in the eight instances. Which pays is for a GPU to measure.
template <class TS, class TD, bool kStochastic>
__global__ void __launch_bounds__(kPairThreads, 3)
    nvfp4_pair_kernel(const TS* src, TD* row_dst, TD* col_dst, i64 rows, i64 cols, bool vec,
                      DeviceQuant row_q, DeviceQuant col_q, SequenceEnd row_end,
                      SequenceEnd col_end, Scratch* s) {
    __shared__ unsigned warp_col_max[kPairThreads / 32][kPairTileCols];
    __shared__ unsigned row_max[kPairTileRows][kNvRowBlocks];
    __shared__ Nvfp4Rounding row_round[kPairTileRows * kNvRowBlocks];
    __shared__ Nvfp4Rounding col_round[kNvColGroups][kPairTileCols + kPairTileCols / 8];
    const unsigned t = threadIdx.x, warp = t >> 5;
    const int r = static_cast<int>(t / 8), c = static_cast<int>(t % 8) * kVec;
    const i64 tile_cols = (cols + kPairTileCols - 1) / kPairTileCols;
    const i64 tiles = ((rows + kPairTileRows - 1) / kPairTileRows) * tile_cols;
    // The tensor scale from the amax pass before this kernel (the same for both copies), and what
    // each copy's decoded values are divided by (block_kernel's).
    const float global = qm::nvfp4_global_scale(amax_of_bits(s->amax_bits));
    const double row_div = row_q.scale_in_gemm ? qm::nvfp4_gemm_scale(global) : 1.0;
    const double col_div = col_q.scale_in_gemm ? qm::nvfp4_gemm_scale(global) : 1.0;
    BlockTotals row_totals, col_totals;
    for (i64 tile = blockIdx.x; tile < tiles; tile += gridDim.x) { // uniform across the block
        PairShare share = load_pair_share(src, tile, tile_cols, rows, cols, vec);
        const i64 tile_row0 = share.tile_row0, tile_col0 = share.tile_col0, at = share.at;
        float(&x)[kVec] = share.x;
        // The maxima: a 1×16 block's over two lanes, each column's over the warp's four rows.
        const unsigned m = share.m;
        const unsigned other = __shfl_xor_sync(kFullMask, m, 1);
        if ((t & 1) == 0) row_max[r][c / kNvPairLen] = other > m ? other : m;
        warp_column_maxima(x, warp_col_max[warp] + c);
        __syncthreads();
        // Each thread makes one block's rounding: the first half the row blocks, the second
        // the column blocks (their maxima over four warps). A block past the tensor's edge holds
        // zeros: its scale is not counted.
        if (t < kPairThreads / 2) {
            const int br = static_cast<int>(t) / kNvRowBlocks,
                      bb = static_cast<int>(t) % kNvRowBlocks;
            const unsigned bm = row_max[br][bb];
            row_totals.amax_bits = bm > row_totals.amax_bits ? bm : row_totals.amax_bits;
            make_nvfp4_rounding(row_round[t], bm, global, row_div, row_q.max_elem);
            if (tile_row0 + br < rows && tile_col0 + bb * kNvPairLen < cols) {
                const auto bits =
                    static_cast<unsigned long long>(__double_as_longlong(row_round[t].eff));
                row_totals.top_scale = bits > row_totals.top_scale ? bits : row_totals.top_scale;
            }
        } else {
            const int u = static_cast<int>(t) - kPairThreads / 2;
            const int g = u / kPairTileCols, col = u % kPairTileCols;
            unsigned bm = 0;
#pragma unroll
            for (int w = 0; w < kNvWarpsPerBlock; ++w) {
                const unsigned wm = warp_col_max[g * kNvWarpsPerBlock + w][col];
                bm = wm > bm ? wm : bm;
            }
            col_totals.amax_bits = bm > col_totals.amax_bits ? bm : col_totals.amax_bits;
            Nvfp4Rounding& round = col_round[g][nv_col_slot(col)];
            make_nvfp4_rounding(round, bm, global, col_div, col_q.max_elem);
            if (tile_col0 + col < cols && tile_row0 + g * kNvPairLen < rows) {
                const auto bits = static_cast<unsigned long long>(__double_as_longlong(round.eff));
                col_totals.top_scale = bits > col_totals.top_scale ? bits : col_totals.top_scale;
            }
        }
        __syncthreads();
        const Nvfp4Rounding& along = row_round[r * kNvRowBlocks + c / kNvPairLen];
        const int g = r / kNvPairLen;
        float y[kVec];
#pragma unroll
        for (int j = 0; j < kVec; ++j)
            y[j] = nvfp4_round_one<kStochastic>(along, x[j], row_q.seed, at + j, row_totals);
#pragma unroll
        for (int j = 0; j < kVec; ++j)
            x[j] = nvfp4_round_one<kStochastic>(col_round[g][nv_col_slot(c + j)], x[j], col_q.seed,
                                                at + j, col_totals);
        store_pair_shares(row_dst, col_dst, at, share.n, vec, y, x);
    }
    add_pair_totals_and_finish(row_totals, col_totals, s, row_q, col_q, row_end, col_end);
}

// kFixed: the format is F (FP8, the fast rounding); otherwise q.element through cast_element.
// Under delayed scaling the amax is this pass's (amax_before_cast). A thread's counts stay below
// 2^32 (n / threads elements each), so they add in 32 bits.
template <ElementFormat F, bool kFixed>
__global__ void cast_kernel(float* data, i64 n, DeviceQuant q, const float* state, SequenceEnd end,
                            Scratch* s) {
    const float scale = tensor_scale_of(q, state, amax_of_bits(s->amax_bits));
    const float scale_inv = 1.0f / scale;
    const bool fold_amax = !amax_before_cast(q);
    unsigned clipped = 0, zeros = 0, amax = 0;
    for (i64 i = blockIdx.x * i64(blockDim.x) + threadIdx.x; i < n;
         i += i64(gridDim.x) * blockDim.x) {
        const float v = data[i];
        if (fold_amax) {
            const unsigned b = abs_bits(v);
            amax = b > amax ? b : amax;
        }
        const qm::CastResult r = kFixed
                                     ? per_tensor_value<F>(v, scale, scale_inv, q.max_elem)
                                     : qm::cast_element(v, scale, scale_inv, q.element, q.max_elem);
        data[i] = r.value;
        clipped += r.clipped ? 1 : 0;
        zeros += r.zero ? 1 : 0;
    }
    add_totals_and_finish(counts_amax(clipped, zeros, amax), s, q, end);
}

// quantize_fp8's passes, at memory speed (issue 26): the amax read straight from the source dtype
// (the values fake_quantize would first widen to float32) in 16-byte vector loads, then one tiled
// pass that writes each code row-major and transposed (Transformer Engine's cast-transpose shape).
// The source type and the element format are template parameters, so the codec folds to the
// format's constants and no element pays a dtype switch or a 64-bit division.

// The amax of n elements of T: 16-byte vectors while the pointer allows, then the tail.
template <class T>
__global__ void amax_src_kernel(const T* src, i64 n, Scratch* s) {
    constexpr int kPerVec = 16 / sizeof(T);
    const i64 stride = i64(gridDim.x) * blockDim.x;
    const i64 first = blockIdx.x * i64(blockDim.x) + threadIdx.x;
    const bool aligned = (reinterpret_cast<std::uintptr_t>(src) & 15u) == 0;
    const i64 vectors = aligned ? n / kPerVec : 0;
    unsigned m = 0;
    const auto* vec = reinterpret_cast<const uint4*>(src);
    for (i64 v = first; v < vectors; v += stride) {
        union {
            uint4 raw;
            T e[kPerVec];
        } chunk;
        chunk.raw = vec[v];
#pragma unroll
        for (int j = 0; j < kPerVec; ++j) {
            const unsigned b = abs_bits(to_float(chunk.e[j]));
            m = b > m ? b : m;
        }
    }
    for (i64 i = vectors * kPerVec + first; i < n; i += stride) {
        const unsigned b = abs_bits(to_float(src[i]));
        m = b > m ? b : m;
    }
    add_amax(m, s);
}

// The codes of two finite values v0 and v1 at a finite scale, as per_tensor_code gives them (v0's
// in the low byte), with its clipped and flushed counts, on compute capability 8.9+: each product
// rounded to odd by truncation (odd_product_rz, which tst_cuda_shortcuts sweeps), both converted
// by one instruction. A product that clips exceeds F's largest value, so its code is the largest
// magnitude: only then does the exact test (per_tensor_clipped on the product rounded to nearest
// and its error) run. Issue 26: per_tensor_code's branches and separate conversions made the
// codes kernel's path about 45 instructions an element (now about 18), 0.22 ms for 8192 x 4096
// values on an H200.
template <ElementFormat F>
__device__ inline std::uint32_t code_pair(float v0, float v1, float scale, unsigned& clipped,
                                          unsigned& zeros) {
    const std::uint32_t codes =
        fp8_code_pair<F>(odd_product_rz(v0, scale), odd_product_rz(v1, scale));
    constexpr std::uint32_t kMaxMag = kFp8MaxMag<F>;
    const std::uint32_t m0 = codes & 0x7Fu, m1 = (codes >> 8) & 0x7Fu;
    zeros += (v0 != 0 && m0 == 0 ? 1u : 0u) + (v1 != 0 && m1 == 0 ? 1u : 0u);
    if (m0 == kMaxMag || m1 == kMaxMag) { // rare: a saturated code, or the largest value itself
        constexpr ClipLimit clip = clip_limit(qm::element_max(F));
        const float h0 = v0 * scale, h1 = v1 * scale;
        clipped +=
            m0 == kMaxMag && per_tensor_clipped(h0, __fmaf_rn(v0, scale, -h0), clip) ? 1u : 0u;
        clipped +=
            m1 == kMaxMag && per_tensor_clipped(h1, __fmaf_rn(v1, scale, -h1), clip) ? 1u : 0u;
    }
    return codes;
}

// The codes pass works on tiles of kTile x kTile elements, 256 threads (8 warps) a block; a lane
// takes two adjacent elements (one load where rows have an even length), so a warp reads one
// 64-element row segment and writes its 64 codes as 32 two-byte stores, and later writes 64
// transposed codes of one column the same way. The
// tile's shared-memory pitch, 66 bytes, puts the transposed reads (rows 2·lane, 132 bytes apart =
// 33 words) in 32 different banks.
constexpr int kTile = 64;
constexpr int kTilePitch = kTile + 2;
constexpr int kTileThreads = 256;
constexpr int kTileWarps = kTileThreads / 32;
constexpr int kTileRowsPerWarp = kTile / kTileWarps;

// Where a codes tile's values come from: a tensor (quantize_fp8), or a ReLU layer's gradient
// dZ = dY where y > 0, else 0, formed as the tile loads dY and y (the fused backward step,
// launch_relu_grad_fp8: dZ is never stored; its column sums, the bias gradient's, are added on the
// way). ReLU's dZ is dY's own value or 0, so its rounding to T changes only a NaN's bits.
enum class TileSource { Tensor, ReluGrad };

// Elements (row, col) and (row, col + 1) as float, 0 outside the tensor; one load where
// pair_loads (every row starts at an even element of a SourcePair-aligned tensor).
template <class T>
__device__ inline void load_two(const T* p, i64 row, i64 col, i64 rows, i64 cols, bool pair_loads,
                                float (&v)[2]) {
    if (pair_loads && row < rows && col + 1 < cols) { // one load, one index
        const SourcePair<T> pair = *reinterpret_cast<const SourcePair<T>*>(p + row * cols + col);
        v[0] = to_float(pair.lo);
        v[1] = to_float(pair.hi);
        return;
    }
#pragma unroll
    for (int j = 0; j < 2; ++j)
        v[j] = row < rows && col + j < cols ? to_float(p[row * cols + col + j]) : 0.0f;
}

// A block codes `tiles_per_block` consecutive row tiles (blockIdx.x's) of each of its column
// tiles (blockIdx.y, then every gridDim.y-th). Tensor: one row tile a block. ReluGrad: src is dY,
// relu_y the layer's output y, and a block's row tiles are one chunk of the bias gradient's
// partial sums: bias_partial[blockIdx.x][col] = the chunk's sum of column col, added in a fixed
// order (each lane down its rows, then the warps in order), so the sums are deterministic.
// pair_stores: a lane's two codes of a row (or of a transposed row) store as one 2-byte word.
template <class T, ElementFormat F, TileSource kSource>
__global__ void code_tile_kernel(const T* src, const T* relu_y, i64 rows, i64 cols,
                                 i64 tiles_per_block, DeviceQuant q, const float* state,
                                 std::uint8_t* codes, std::uint8_t* codes_t, bool pair_loads,
                                 bool pair_stores, float* scale_inv_out, float* bias_partial,
                                 SequenceEnd end, Scratch* s) {
    // Aligned so that a lane's two codes of a row store as one 2-byte word (pitch and column even).
    alignas(4) __shared__ std::uint8_t tile[kTile][kTilePitch];
    const float scale = tensor_scale_of(q, state, amax_of_bits(s->amax_bits));
    const float scale_inv = 1.0f / scale;
#if MANTISSA_FP8_CONVERSIONS
    const bool pair_route = isfinite(scale); // uniform: code_pair's conditions, less the values'
#else
    const bool pair_route = false;
#endif
    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0) *scale_inv_out = scale_inv;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int pos = 2 * lane; // this lane's first column (row-major pass) or row (transposed)
    const i64 row_tiles = (rows + kTile - 1) / kTile;
    const i64 first_row_tile = i64(blockIdx.x) * tiles_per_block;
    const i64 end_row_tile =
        first_row_tile + tiles_per_block < row_tiles ? first_row_tile + tiles_per_block : row_tiles;
    const i64 col_tiles = (cols + kTile - 1) / kTile;
    // A thread codes 16 elements of each of its tiles (gridDim.y = min(tiles, 65535), at most
    // a few row tiles a block): 32-bit counts suffice for any tensor that fits in memory.
    unsigned clipped = 0, zeros = 0, amax = 0;
    const bool fold_amax = !amax_before_cast(q); // delayed scaling: this pass finds the amax
    // Every thread of the block runs the same trips of these loops, so the barriers are uniform.
    for (i64 ct = blockIdx.y; ct < col_tiles; ct += gridDim.y) {
        const i64 col0 = ct * kTile;
        float col_sum[2] = {0.0f, 0.0f}; // ReluGrad: this lane's two columns over its rows
        for (i64 rt = first_row_tile; rt < end_row_tile; ++rt) {
            const i64 row0 = rt * kTile;
            // Every load of the tile first (kTileRowsPerWarp rows of two elements a lane), so that
            // a thread has them all in flight at once, then the codes: one row at a time the loads
            // would wait on memory in turn (issue 26: 0.22 ms for 8192 x 4096 bfloat16 on an H100).
            float in[kTileRowsPerWarp][2];
            if constexpr (kSource == TileSource::Tensor) {
#pragma unroll
                for (int k = 0; k < kTileRowsPerWarp; ++k)
                    load_two(src, row0 + warp + k * kTileWarps, col0 + pos, rows, cols, pair_loads,
                             in[k]);
            } else {
                float y[kTileRowsPerWarp][2];
#pragma unroll
                for (int k = 0; k < kTileRowsPerWarp; ++k) {
                    load_two(src, row0 + warp + k * kTileWarps, col0 + pos, rows, cols, pair_loads,
                             in[k]);
                    load_two(relu_y, row0 + warp + k * kTileWarps, col0 + pos, rows, cols,
                             pair_loads, y[k]);
                }
#pragma unroll
                for (int k = 0; k < kTileRowsPerWarp; ++k)
#pragma unroll
                    for (int j = 0; j < 2; ++j) { // outside the tensor dY and y load as 0: dZ 0
                        // Rounded to T as partial_act_vec_kernel stores dZ: no change to a
                        // number, but a NaN becomes the conversion's NaN, as in the stored dZ.
                        in[k][j] = to_float(
                            from_float<T>(activation_math::relu_backward(y[k][j], in[k][j])));
                        col_sum[j] += in[k][j];
                    }
            }
            if (fold_amax) { // uniform; elements outside the tensor are 0
#pragma unroll
                for (int k = 0; k < kTileRowsPerWarp; ++k)
#pragma unroll
                    for (int j = 0; j < 2; ++j) {
                        const unsigned b = abs_bits(in[k][j]);
                        amax = b > amax ? b : amax;
                    }
            }
#pragma unroll
            for (int k = 0; k < kTileRowsPerWarp; ++k) {
                const int r = warp + k * kTileWarps;
                const i64 row = row0 + r;
                if (row >= rows) break;
                std::uint8_t pair[2] = {0, 0};
                if (pair_route && col0 + pos + 1 < cols && abs_bits(in[k][0]) < 0x7F800000u &&
                    abs_bits(in[k][1]) < 0x7F800000u) {
                    const std::uint32_t codes2 =
                        code_pair<F>(in[k][0], in[k][1], scale, clipped, zeros);
                    pair[0] = static_cast<std::uint8_t>(codes2);
                    pair[1] = static_cast<std::uint8_t>(codes2 >> 8);
                } else { // a row's last odd element, a NaN or infinity, or a GPU before 8.9
#pragma unroll
                    for (int j = 0; j < 2; ++j) {
                        if (col0 + pos + j >= cols) continue;
                        const qm::CodeResult c =
                            per_tensor_code<F>(in[k][j], scale, scale_inv, q.max_elem);
                        pair[j] = static_cast<std::uint8_t>(c.code);
                        clipped += c.clipped ? 1 : 0;
                        zeros += c.zero ? 1 : 0;
                    }
                }
                *reinterpret_cast<std::uint16_t*>(&tile[r][pos]) =
                    static_cast<std::uint16_t>(pair[0] | (pair[1] << 8));
                if (!codes) continue;
                std::uint8_t* out = codes + row * cols + col0 + pos;
                if (pair_stores && col0 + pos + 1 < cols) {
                    *reinterpret_cast<std::uint16_t*>(out) =
                        static_cast<std::uint16_t>(pair[0] | (pair[1] << 8));
                } else {
                    if (col0 + pos < cols) out[0] = pair[0];
                    if (col0 + pos + 1 < cols) out[1] = pair[1];
                }
            }
            if (!codes_t) continue; // uniform: every thread skips the barriers alike
            __syncthreads();
            for (int c = warp; c < kTile && col0 + c < cols; c += kTileWarps) {
                const i64 row = row0 + pos;
                std::uint8_t* out = codes_t + (col0 + c) * rows + row;
                if (pair_stores && row + 1 < rows) {
                    *reinterpret_cast<std::uint16_t*>(out) =
                        static_cast<std::uint16_t>(tile[pos][c] | (tile[pos + 1][c] << 8));
                } else {
                    if (row < rows) out[0] = tile[pos][c];
                    if (row + 1 < rows) out[1] = tile[pos + 1][c];
                }
            }
            __syncthreads(); // the next tile overwrites `tile`
        }
        if constexpr (kSource == TileSource::ReluGrad) { // the chunk's column sums, warps in order
            __shared__ float sums[kTileWarps][kTile];
            sums[warp][pos] = col_sum[0];
            sums[warp][pos + 1] = col_sum[1];
            __syncthreads();
            if (threadIdx.x < kTile && col0 + threadIdx.x < cols) {
                float total = 0.0f;
#pragma unroll
                for (int w = 0; w < kTileWarps; ++w) total += sums[w][threadIdx.x];
                bias_partial[blockIdx.x * cols + col0 + threadIdx.x] = total;
            }
            __syncthreads(); // the next column tile overwrites `sums`
        }
    }
    add_totals_and_finish(counts_amax(clipped, zeros, amax), s, q, end);
}

// The codes kernel for source type T and the recipe's element format. pair_loads: an even row
// length and every source aligned to two elements; pair_stores: two-byte stores land on even
// addresses (an even row length and an even base, in both layouts).
template <class T, TileSource kSource>
void launch_code_tiles(const T* src, const T* relu_y, i64 rows, i64 cols, i64 tiles_per_block,
                       const DeviceQuant& q, const SequenceEnd& end, std::uint8_t* codes,
                       std::uint8_t* codes_t, float* scale_inv, float* bias_partial, Scratch* s,
                       cudaStream_t stream) {
    auto even = [](const std::uint8_t* p) {
        return p == nullptr || (reinterpret_cast<std::uintptr_t>(p) & 1u) == 0;
    };
    const bool pair_stores =
        (!codes || cols % 2 == 0) && (!codes_t || rows % 2 == 0) && even(codes) && even(codes_t);
    auto pair_aligned = [](const T* p) {
        return p == nullptr || reinterpret_cast<std::uintptr_t>(p) % sizeof(SourcePair<T>) == 0;
    };
    const bool pair_loads = cols % 2 == 0 && pair_aligned(src) && pair_aligned(relu_y);
    // With no elements one block still writes the scale.
    const i64 row_tiles = rows > 0 ? (rows + kTile - 1) / kTile : 1;
    const i64 col_tiles = cols > 0 ? (cols + kTile - 1) / kTile : 1;
    const dim3 grid(static_cast<unsigned>((row_tiles + tiles_per_block - 1) / tiles_per_block),
                    static_cast<unsigned>(col_tiles > 65535 ? 65535 : col_tiles));
    if (q.element == ElementFormat::Float8E5M2)
        code_tile_kernel<T, ElementFormat::Float8E5M2, kSource><<<grid, kTileThreads, 0, stream>>>(
            src, relu_y, rows, cols, tiles_per_block, q, end.state, codes, codes_t, pair_loads,
            pair_stores, scale_inv, bias_partial, end, s);
    else
        code_tile_kernel<T, ElementFormat::Float8E4M3, kSource><<<grid, kTileThreads, 0, stream>>>(
            src, relu_y, rows, cols, tiles_per_block, q, end.state, codes, codes_t, pair_loads,
            pair_stores, scale_inv, bias_partial, end, s);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

// Launches both passes for source type T.
template <class T>
void launch_codes(const void* src, i64 rows, i64 cols, const DeviceQuant& q, const Fp8CodesOut& out,
                  const SequenceEnd& end, Scratch* s, cudaStream_t stream) {
    const auto* typed = static_cast<const T*>(src);
    const i64 n = rows * cols;
    if (n > 0 && amax_before_cast(q)) {
        const i64 vectors = (n + 16 / sizeof(T) - 1) / (16 / sizeof(T));
        const unsigned grid = blocks_for(vectors) > 2048 ? 2048 : blocks_for(vectors);
        amax_src_kernel<T><<<grid, 256, 0, stream>>>(typed, n, s);
        MANTISSA_CUDA_LAUNCH_CHECK();
    }
    launch_code_tiles<T, TileSource::Tensor>(typed, nullptr, rows, cols, 1, q, end, out.codes,
                                             out.codes_t, out.scale_inv, nullptr, s, stream);
}

__global__ void finish_kernel(DeviceQuant q, SequenceEnd end, Scratch* s) {
    finish_totals(q, end, s);
}

// Both copies' finish for a pair of scratches (s and s + 1), in one launch.
__global__ void finish_pair_kernel(DeviceQuant row_q, DeviceQuant col_q, SequenceEnd row_end,
                                   SequenceEnd col_end, Scratch* s) {
    finish_totals(row_q, row_end, s);
    finish_totals(col_q, col_end, s + 1);
}

// block_kernel on the fast path that applies.
void launch_blocks(float* data, i64 rows, i64 cols, const DeviceQuant& q, const SequenceEnd& end,
                   Scratch* s, unsigned grid, cudaStream_t stream) {
#define MANTISSA_BLOCKS(format, path)                                                              \
    block_kernel<ElementFormat::format, BlockPath::path>                                           \
        <<<grid, 256, 0, stream>>>(data, rows, cols, q, end, s)
    if (q.stochastic)
        MANTISSA_BLOCKS(Float8E4M3, kExact);
    else if (q.tensor_scale && q.element == ElementFormat::Float4E2M1)
        MANTISSA_BLOCKS(Float4E2M1, kNvfp4);
    else if (q.tensor_scale)
        MANTISSA_BLOCKS(Float8E4M3, kExact);
    else if (q.element == ElementFormat::Float8E4M3)
        MANTISSA_BLOCKS(Float8E4M3, kMx);
    else if (q.element == ElementFormat::Float8E5M2)
        MANTISSA_BLOCKS(Float8E5M2, kMx);
    else if (q.element == ElementFormat::Float6E3M2)
        MANTISSA_BLOCKS(Float6E3M2, kMx);
    else if (q.element == ElementFormat::Float6E2M3)
        MANTISSA_BLOCKS(Float6E2M3, kMx);
    else if (q.element == ElementFormat::Float4E2M1)
        MANTISSA_BLOCKS(Float4E2M1, kMx);
    else
        MANTISSA_BLOCKS(Float8E4M3, kExact);
#undef MANTISSA_BLOCKS
}

// line_block_kernel for one source and copy type, down columns or along rows.
template <class TS, class TD, ElementFormat F, BlockPath kPath>
void launch_lines(const void* src, void* dst, i64 rows, i64 cols, const DeviceQuant& q,
                  const SequenceEnd& end, Scratch* s, cudaStream_t stream) {
    const bool column = q.block_cols == 1;
    const bool pairs = line_pairs<kPath>(column);
    const int len = static_cast<int>(column ? q.block_rows : q.block_cols);
    const LineUnits units = line_units(rows, cols, len, column, pairs);
    const dim3 threads = line_thread_shape(units.x);
    const i64 gx = (units.x + threads.x - 1) / threads.x;
    const i64 gy = (units.y + threads.y - 1) / threads.y;
    const dim3 grid(static_cast<unsigned>(gx > 4096 ? 4096 : (gx < 1 ? 1 : gx)),
                    static_cast<unsigned>(gy > 65535 ? 65535 : (gy < 1 ? 1 : gy)));
    const auto* in = static_cast<const TS*>(src);
    auto* out = static_cast<TD*>(dst);
    auto aligned_to = [](const void* p, std::size_t bytes) {
        return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
    };
    // Along rows, 16-byte loads and stores: full row blocks of a multiple of 8 elements at
    // aligned addresses (the kernel takes them where a block is whole). Down columns, pair loads
    // and stores: an even row length, both bases aligned to two elements.
    const bool vec =
        column ? pairs && cols % 2 == 0 && aligned_to(src, 2 * sizeof(TS)) &&
                     aligned_to(dst, 2 * sizeof(TD))
               : len % kVec == 0 && cols % kVec == 0 && vec8_aligned(src) && vec8_aligned(dst);
    if (column)
        line_block_kernel<TS, TD, F, kPath, true>
            <<<grid, threads, 0, stream>>>(in, out, rows, cols, len, vec, q, end, s);
    else
        line_block_kernel<TS, TD, F, kPath, false>
            <<<grid, threads, 0, stream>>>(in, out, rows, cols, len, vec, q, end, s);
    MANTISSA_CUDA_LAUNCH_CHECK();
}

// The element format's instantiation for a source and copy type; false where none applies.
template <class TS, class TD>
bool launch_lines_for(const void* src, void* dst, i64 rows, i64 cols, const DeviceQuant& q,
                      const SequenceEnd& end, Scratch* s, cudaStream_t stream) {
    // NVFP4: E2M1 elements only, and a bfloat16 copy only without the tensor scale.
    if (q.tensor_scale && (q.element != ElementFormat::Float4E2M1 ||
                           (!std::is_same_v<TD, float> && !q.scale_in_gemm)))
        return false;
    if (q.block_rows == kNvTile && q.block_cols == kNvTile) { // NVFP4's weight tiles
        const i64 tiles = ((rows + kNvTile - 1) / kNvTile) * ((cols + kNvTile - 1) / kNvTile);
        const unsigned grid = blocks_for(tiles * 32) > 4096 ? 4096 : blocks_for(tiles * 32);
        const bool vec = cols % kVec == 0 && vec8_aligned(src) && vec8_aligned(dst);
        nvfp4_tile_kernel<TS, TD><<<grid, 256, 0, stream>>>(
            static_cast<const TS*>(src), static_cast<TD*>(dst), rows, cols, vec, q, end, s);
        MANTISSA_CUDA_LAUNCH_CHECK();
        return true;
    }
    if (q.stochastic) { // the CPU engine's fast form: E2M1 only (fake_quantize_lines_apply)
        if (q.element != ElementFormat::Float4E2M1) return false;
        launch_lines<TS, TD, ElementFormat::Float4E2M1, BlockPath::kExact>(src, dst, rows, cols, q,
                                                                           end, s, stream);
        return true;
    }
    if (q.tensor_scale) {
        launch_lines<TS, TD, ElementFormat::Float4E2M1, BlockPath::kNvfp4>(src, dst, rows, cols, q,
                                                                           end, s, stream);
        return true;
    }
    switch (q.element) {
#define MANTISSA_LINES(format)                                                                     \
    case ElementFormat::format:                                                                    \
        launch_lines<TS, TD, ElementFormat::format, BlockPath::kMx>(src, dst, rows, cols, q, end,  \
                                                                    s, stream);                    \
        return true;
        MANTISSA_LINES(Float8E4M3)
        MANTISSA_LINES(Float8E5M2)
        MANTISSA_LINES(Float6E3M2)
        MANTISSA_LINES(Float6E2M3)
        MANTISSA_LINES(Float4E2M1)
#undef MANTISSA_LINES
    default:
        return false;
    }
}

// Runs one launch sequence, which its last kernel finishes. Should a launch fail before that
// kernel is queued, the scratch is cleared in stream order as the finish would have left it, so a
// later sequence does not start from a stale amax, stale counts or a stale block count.
template <class Launches>
void with_scratch(Scratch* s, cudaStream_t stream, Launches&& launches) {
    try {
        launches();
    } catch (...) {
        cudaMemsetAsync(s, 0, sizeof(Scratch), stream); // best effort: the error is rethrown
        throw;
    }
}

} // namespace

bool fake_quantize_lines_apply(const DeviceQuant& q, DType src_dtype, DType dst_dtype) {
    const bool line = (q.block_rows == 1 && q.block_cols >= 2 && q.block_cols <= kLineBlockMax) ||
                      (q.block_cols == 1 && q.block_rows >= 2 && q.block_rows <= kLineBlockMax);
    const bool nvfp4_tile =
        q.tensor_scale && !q.stochastic && q.block_rows == kNvTile && q.block_cols == kNvTile;
    const bool types = (src_dtype == DType::Float32 || src_dtype == DType::BFloat16) &&
                       (dst_dtype == DType::Float32 ||
                        (dst_dtype == DType::BFloat16 && (!q.tensor_scale || q.scale_in_gemm)));
    // Stochastic rounding: E2M1 (NVFP4's gradients, MXFP4's when asked), whose codec the kernel
    // folds at compile time; MX FP8 and FP6 under stochastic rounding take block_kernel.
    const bool format =
        q.tensor_scale || q.stochastic
            ? q.element == ElementFormat::Float4E2M1
            : q.element == ElementFormat::Float8E4M3 || q.element == ElementFormat::Float8E5M2 ||
                  q.element == ElementFormat::Float6E3M2 ||
                  q.element == ElementFormat::Float6E2M3 || q.element == ElementFormat::Float4E2M1;
    return q.block && (line || nvfp4_tile) && types && format;
}

void launch_fake_quantize_lines(const void* src, DType src_dtype, void* dst, DType dst_dtype,
                                std::int64_t rows, std::int64_t cols, const DeviceQuant& q,
                                double* stats, bool record, void* scratch, cudaStream_t stream) {
    if (!fake_quantize_lines_apply(q, src_dtype, dst_dtype))
        throw Error(ErrorKind::Internal, "launch_fake_quantize_lines: not a line-block case");
    auto* s = static_cast<Scratch*>(scratch);
    const i64 n = rows * cols;
    const SequenceEnd end{rows, cols, nullptr, stats, record};
    with_scratch(s, stream, [&] {
        if (n > 0) { // the line kernel finishes the sequence
            const bool from_bf16 = src_dtype == DType::BFloat16;
            if (q.tensor_scale) { // NVFP4's tensor scale comes from the whole tensor's amax
                const unsigned grid = blocks_for(n) > 1024 ? 1024 : blocks_for(n);
                if (from_bf16)
                    amax_src_kernel<__nv_bfloat16>
                        <<<grid, 256, 0, stream>>>(static_cast<const __nv_bfloat16*>(src), n, s);
                else
                    amax_src_kernel<float>
                        <<<grid, 256, 0, stream>>>(static_cast<const float*>(src), n, s);
                MANTISSA_CUDA_LAUNCH_CHECK();
            }
            const bool to_bf16 = dst_dtype == DType::BFloat16;
            bool launched;
            if (from_bf16 && to_bf16)
                launched = launch_lines_for<__nv_bfloat16, __nv_bfloat16>(src, dst, rows, cols, q,
                                                                          end, s, stream);
            else if (from_bf16)
                launched =
                    launch_lines_for<__nv_bfloat16, float>(src, dst, rows, cols, q, end, s, stream);
            else if (to_bf16)
                launched =
                    launch_lines_for<float, __nv_bfloat16>(src, dst, rows, cols, q, end, s, stream);
            else
                launched = launch_lines_for<float, float>(src, dst, rows, cols, q, end, s, stream);
            // fake_quantize_lines_apply and launch_lines_for must agree: a case one accepts and the
            // other has no kernel for would leave the copy unwritten.
            if (!launched)
                throw Error(ErrorKind::Internal,
                            "launch_fake_quantize_lines: no line kernel for an accepted case");
        } else {
            finish_kernel<<<1, 1, 0, stream>>>(q, end, s);
            MANTISSA_CUDA_LAUNCH_CHECK();
        }
    });
}

void launch_fake_quantize(float* data, std::int64_t rows, std::int64_t cols, const DeviceQuant& q,
                          float* state, double* stats, bool record, void* scratch,
                          cudaStream_t stream) {
    auto* s = static_cast<Scratch*>(scratch);
    const i64 n = rows * cols;
    const SequenceEnd end{rows, cols, state, stats, record};
    with_scratch(s, stream, [&] {
        if (n > 0) { // the blocks' or the cast's kernel finishes the sequence
            // The amax: few blocks, so that few warps contend for the one atomic; the cast: enough
            // threads that their loads keep the memory busy (one 4-byte load each in flight).
            const unsigned grid = blocks_for(n) > 1024 ? 1024 : blocks_for(n);
            const unsigned cast_grid = blocks_for(n) > 8192 ? 8192 : blocks_for(n);
            if (amax_before_cast(q)) {
                amax_kernel<<<grid, 256, 0, stream>>>(data, n, s);
                MANTISSA_CUDA_LAUNCH_CHECK();
            }
            if (q.block) {
                const i64 blocks = ((rows + q.block_rows - 1) / q.block_rows) *
                                   ((cols + q.block_cols - 1) / q.block_cols);
                const unsigned block_grid =
                    blocks_for(blocks * 32) > 4096 ? 4096 : blocks_for(blocks * 32);
                launch_blocks(data, rows, cols, q, end, s, block_grid, stream);
            } else if (q.element == ElementFormat::Float8E4M3) {
                cast_kernel<ElementFormat::Float8E4M3, true>
                    <<<cast_grid, 256, 0, stream>>>(data, n, q, state, end, s);
            } else if (q.element == ElementFormat::Float8E5M2) {
                cast_kernel<ElementFormat::Float8E5M2, true>
                    <<<cast_grid, 256, 0, stream>>>(data, n, q, state, end, s);
            } else {
                cast_kernel<ElementFormat::Float8E4M3, false>
                    <<<cast_grid, 256, 0, stream>>>(data, n, q, state, end, s);
            }
            MANTISSA_CUDA_LAUNCH_CHECK();
        } else {
            finish_kernel<<<1, 1, 0, stream>>>(q, end, s);
            MANTISSA_CUDA_LAUNCH_CHECK();
        }
    });
}

bool fake_quantize_pair_apply(const DeviceQuant& row_q, const DeviceQuant& col_q, DType src_dtype,
                              DType dst_dtype, std::int64_t cols) {
    // Narrower than one MX block a row, most of a tile's threads would hold nothing (a one-channel
    // convolution's N·H·W x 1 input: one in 64), where the line kernels shape their threads to
    // the tensor; a 10-unit layer's weight and gradient are small either way.
    if (cols < 32) return false;
    const bool types = (src_dtype == DType::Float32 || src_dtype == DType::BFloat16) &&
                       (dst_dtype == DType::Float32 || dst_dtype == DType::BFloat16);
    const auto shapes = [&](std::int64_t len) {
        return row_q.block_rows == 1 && row_q.block_cols == len && col_q.block_rows == len &&
               col_q.block_cols == 1;
    };
    const auto mx_nearest = [](const DeviceQuant& q) {
        return q.block && !q.tensor_scale && !q.stochastic &&
               (q.element == ElementFormat::Float8E4M3 || q.element == ElementFormat::Float8E5M2 ||
                q.element == ElementFormat::Float6E3M2 || q.element == ElementFormat::Float6E2M3 ||
                q.element == ElementFormat::Float4E2M1);
    };
    // NVFP4: a bfloat16 copy only where every decoded value is one (the tensor scale left to the
    // GEMM), as fake_quantize_lines_apply; both copies nearest or both stochastic.
    const auto nvfp4 = [&](const DeviceQuant& q) {
        return q.block && q.tensor_scale && q.element == ElementFormat::Float4E2M1 &&
               (dst_dtype == DType::Float32 || q.scale_in_gemm);
    };
    if (nvfp4(row_q) && nvfp4(col_q))
        return shapes(kNvPairLen) && types && row_q.stochastic == col_q.stochastic;
    return mx_nearest(row_q) && mx_nearest(col_q) && shapes(32) && types &&
           row_q.element == col_q.element && row_q.ceil == col_q.ceil;
}

namespace {

template <class TS, class TD>
void launch_pair_for(const void* src, void* row_dst, void* col_dst, i64 rows, i64 cols,
                     const DeviceQuant& row_q, const DeviceQuant& col_q, const SequenceEnd& row_end,
                     const SequenceEnd& col_end, Scratch* s, cudaStream_t stream) {
    const i64 tiles =
        ((rows + kPairTileRows - 1) / kPairTileRows) * ((cols + kPairTileCols - 1) / kPairTileCols);
    const unsigned grid = static_cast<unsigned>(tiles > 4096 ? 4096 : tiles);
    // 16-byte loads and stores: rows of a multiple of 8 elements from aligned bases.
    const bool vec =
        cols % kVec == 0 && vec8_aligned(src) && vec8_aligned(row_dst) && vec8_aligned(col_dst);
    const auto* in = static_cast<const TS*>(src);
    auto* row_out = static_cast<TD*>(row_dst);
    auto* col_out = static_cast<TD*>(col_dst);
    if (row_q.tensor_scale) { // NVFP4 (fake_quantize_pair_apply): the amax pass first
        const i64 n = rows * cols;
        const unsigned amax_grid = blocks_for(n) > 1024 ? 1024 : blocks_for(n);
        amax_src_kernel<TS><<<amax_grid, 256, 0, stream>>>(in, n, s);
        MANTISSA_CUDA_LAUNCH_CHECK();
        if (row_q.stochastic)
            nvfp4_pair_kernel<TS, TD, true><<<grid, kPairThreads, 0, stream>>>(
                in, row_out, col_out, rows, cols, vec, row_q, col_q, row_end, col_end, s);
        else
            nvfp4_pair_kernel<TS, TD, false><<<grid, kPairThreads, 0, stream>>>(
                in, row_out, col_out, rows, cols, vec, row_q, col_q, row_end, col_end, s);
        MANTISSA_CUDA_LAUNCH_CHECK();
        return;
    }
    switch (row_q.element) {
#define MANTISSA_PAIR(format)                                                                      \
    case ElementFormat::format:                                                                    \
        mx_pair_kernel<TS, TD, ElementFormat::format><<<grid, kPairThreads, 0, stream>>>(          \
            in, row_out, col_out, rows, cols, vec, row_q, col_q, row_end, col_end, s);             \
        break;
        MANTISSA_PAIR(Float8E4M3)
        MANTISSA_PAIR(Float8E5M2)
        MANTISSA_PAIR(Float6E3M2)
        MANTISSA_PAIR(Float6E2M3)
        MANTISSA_PAIR(Float4E2M1)
#undef MANTISSA_PAIR
    default: // fake_quantize_pair_apply takes these five only
        throw Error(ErrorKind::Internal, "launch_fake_quantize_pair: not an MX element format");
    }
    MANTISSA_CUDA_LAUNCH_CHECK();
}

} // namespace

void launch_fake_quantize_pair(const void* src, DType src_dtype, void* row_dst, void* col_dst,
                               DType dst_dtype, std::int64_t rows, std::int64_t cols,
                               const DeviceQuant& row_q, const DeviceQuant& col_q,
                               double* row_stats, double* col_stats, bool record, void* scratch,
                               cudaStream_t stream) {
    static_assert(2 * sizeof(Scratch) <= kQuantScratchBytes, "the pair needs two scratches");
    if (!fake_quantize_pair_apply(row_q, col_q, src_dtype, dst_dtype, cols))
        throw Error(ErrorKind::Internal, "launch_fake_quantize_pair: not an MX or NVFP4 pair");
    auto* s = static_cast<Scratch*>(scratch);
    const SequenceEnd row_end{rows, cols, nullptr, row_stats, record};
    const SequenceEnd col_end{rows, cols, nullptr, col_stats, record};
    try {
        if (rows * cols > 0) { // the pair kernel finishes both sequences
            const bool from_bf16 = src_dtype == DType::BFloat16;
            const bool to_bf16 = dst_dtype == DType::BFloat16;
            if (from_bf16 && to_bf16)
                launch_pair_for<__nv_bfloat16, __nv_bfloat16>(
                    src, row_dst, col_dst, rows, cols, row_q, col_q, row_end, col_end, s, stream);
            else if (from_bf16)
                launch_pair_for<__nv_bfloat16, float>(src, row_dst, col_dst, rows, cols, row_q,
                                                      col_q, row_end, col_end, s, stream);
            else if (to_bf16)
                launch_pair_for<float, __nv_bfloat16>(src, row_dst, col_dst, rows, cols, row_q,
                                                      col_q, row_end, col_end, s, stream);
            else
                launch_pair_for<float, float>(src, row_dst, col_dst, rows, cols, row_q, col_q,
                                              row_end, col_end, s, stream);
        } else {
            finish_pair_kernel<<<1, 1, 0, stream>>>(row_q, col_q, row_end, col_end, s);
            MANTISSA_CUDA_LAUNCH_CHECK();
        }
    } catch (...) { // as with_scratch: both scratches left zero for the next sequence
        cudaMemsetAsync(s, 0, 2 * sizeof(Scratch), stream);
        throw;
    }
}

void launch_quantize_fp8(const void* src, DType src_dtype, std::int64_t rows, std::int64_t cols,
                         const DeviceQuant& q, const Fp8CodesOut& out, void* scratch,
                         cudaStream_t stream) {
    auto* s = static_cast<Scratch*>(scratch);
    const SequenceEnd end{rows, cols, out.state, out.stats, out.record};
    with_scratch(s, stream, [&] { // the codes kernel finishes the sequence (it runs for no element)
        switch (
            src_dtype) { // the floating dtypes check_quantize_fp8 lets through (float8 has none)
        case DType::Float32:
            launch_codes<float>(src, rows, cols, q, out, end, s, stream);
            break;
        case DType::Float16:
            launch_codes<__half>(src, rows, cols, q, out, end, s, stream);
            break;
        case DType::BFloat16:
            launch_codes<__nv_bfloat16>(src, rows, cols, q, out, end, s, stream);
            break;
        case DType::Float64:
            launch_codes<double>(src, rows, cols, q, out, end, s, stream);
            break;
        default:
            throw Error(ErrorKind::InvalidArgument,
                        std::string("quantize_fp8: the CUDA engine quantises float64, float32, "
                                    "float16 or bfloat16 sources, not ") +
                            std::string(dtype_name(src_dtype)));
        }
    });
}

bool launch_relu_grad_fp8(const void* y, const void* dy, DType dtype, std::int64_t rows,
                          std::int64_t cols, const DeviceQuant& q, const Fp8CodesOut& out,
                          void* scratch, void* bias_partial, std::size_t bias_partial_bytes,
                          void* db, DType db_dtype, cudaStream_t stream) {
    const bool types =
        dtype == DType::Float32 || dtype == DType::Float16 || dtype == DType::BFloat16;
    const bool db_type =
        db_dtype == DType::Float32 || db_dtype == DType::Float16 || db_dtype == DType::BFloat16;
    if (q.block || !q.delayed || !types || !db_type || rows <= 0 || cols <= 0 ||
        bias_partial == nullptr)
        return false;
    // Chunks of two row tiles (128 rows; 64 chunks for a batch of 8192), or more where the
    // scratch holds fewer rows of column sums.
    const i64 max_chunks = static_cast<i64>(bias_partial_bytes / sizeof(float)) / cols;
    if (max_chunks < 1) return false;
    const i64 row_tiles = (rows + kTile - 1) / kTile;
    const i64 needed = (row_tiles + max_chunks - 1) / max_chunks;
    const i64 tiles_per_chunk = needed > 2 ? needed : 2;
    const i64 chunks = (row_tiles + tiles_per_chunk - 1) / tiles_per_chunk;
    auto* s = static_cast<Scratch*>(scratch);
    auto* partial = static_cast<float*>(bias_partial);
    const SequenceEnd end{rows, cols, out.state, out.stats, out.record};
    with_scratch(s, stream, [&] {
        with_storage(dtype, [&](auto tag) { // the codes kernel finishes the sequence
            using S = typename decltype(tag)::type;
            launch_code_tiles<S, TileSource::ReluGrad>(
                static_cast<const S*>(dy), static_cast<const S*>(y), rows, cols, tiles_per_chunk, q,
                end, out.codes, out.codes_t, out.scale_inv, partial, s, stream);
        });
        launch_bias_totals(partial, chunks, cols, db, db_dtype, stream);
    });
    return true;
}

} // namespace mantissa::cuda
