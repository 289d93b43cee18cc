// fake_quantize: a GEMM input quantised and decoded back in place on the device (issue 18's
// frontier policies), with the arithmetic of core/numeric/quant_math.h, which the CPU engine runs
// too. Block formats follow OCP Microscaling (MX) v1.0 (one E8M0 scale per block, §6.3's floor
// rule or Transformer Engine's ceil) and NVIDIA's NVFP4 (E4M3 block scale under a float32 tensor
// scale); per-tensor FP8 follows Transformer Engine's current and delayed scaling recipes.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "core/numeric/dtype.h"
#include "core/numeric/element_format.h"

namespace mantissa::cuda {

// Bytes of device scratch one engine keeps for the launches below (amax, counters, top scale).
// It must be zero before the first launch (the engine clears it once, after allocating it); each
// launch sequence's last kernel leaves it zero again for the next.
inline constexpr std::size_t kQuantScratchBytes = 64;

// A QuantSpec resolved for the kernels: plain values only.
struct DeviceQuant {
    ElementFormat element = ElementFormat::Float8E4M3;
    double max_elem = 448;
    bool block = false;        // block scaling; else one scale per tensor
    bool tensor_scale = false; // NVFP4: E4M3 block scales under a float32 tensor scale
    // NVFP4 with its tensor scale left to the GEMM (BlockQuantConfig::tensor_scale_in_gemm): the
    // copy holds code · block scale, and the last kernel writes nvfp4_gemm_scale(tensor scale)
    // into *gemm_scale (device, one float32) for the GEMM.
    bool scale_in_gemm = false;
    float* gemm_scale = nullptr;
    bool ceil = false; // MX scale rule: ceil (TE) rather than floor (the spec)
    bool stochastic = false;
    std::uint64_t seed = 0; // this step's stream (quant_math::step_seed)
    std::int64_t block_rows = 1, block_cols = 1;
    bool delayed = false; // per tensor: the scale from `state` (else the tensor's own amax)
    int history_len = 0, margin = 0;
    bool most_recent = false;
};

// data (rows x cols row-major float32) quantised in place. `state`: delayed scaling's
// 2 + history_len floats, updated after the cast when `record`; `stats` (6 float64: amax, scale,
// clipped, zeros, count, blocks) written when `record`. `scratch`: kQuantScratchBytes on the
// device. Nothing here synchronises with the host, so a captured training step may contain it.
void launch_fake_quantize(float* data, std::int64_t rows, std::int64_t cols, const DeviceQuant& q,
                          float* state, double* stats, bool record, void* scratch,
                          cudaStream_t stream);

// The fused path for one-dimensional blocks (1 x n or n x 1, n <= 32), stochastic rounding
// included, and for NVFP4's 16x16 tiles without it: src (rows x cols, float32 or bfloat16)
// quantised straight into dst (float32, or bfloat16 for MX formats and NVFP4 without its tensor
// scale, whose values are all bfloat16 values): no widening copy, and for MX no amax pass before
// the blocks. The same values and stats as launch_fake_quantize. fake_quantize_lines_apply says
// whether a case takes it.
bool fake_quantize_lines_apply(const DeviceQuant& q, DType src_dtype, DType dst_dtype);
void launch_fake_quantize_lines(const void* src, DType src_dtype, void* dst, DType dst_dtype,
                                std::int64_t rows, std::int64_t cols, const DeviceQuant& q,
                                double* stats, bool record, void* scratch, cudaStream_t stream);

// Both copies of one MX or NVFP4 tensor from one read of it (Backend::fake_quantize_pair): src
// (rows x cols, float32 or bfloat16) into `row_dst` in 1 x n blocks along the rows (`row_q`) and
// into `col_dst` in n x 1 blocks down the columns (`col_q`), both of `dst_dtype` (float32 or
// bfloat16) and src's layout, with the values and stats of launch_fake_quantize_lines for each
// (and each q's gemm_scale written where it has one). `scratch` holds two launch sequences'
// totals (kQuantScratchBytes). fake_quantize_pair_apply says whether a pair takes it: MX (n = 32)
// with nearest rounding, one element format and scale rule for both; NVFP4 (n = 16) nearest or
// stochastic, both alike, bfloat16 copies only with the tensor scale left to the GEMM; at least
// 32 columns (narrower tensors keep the line kernels).
bool fake_quantize_pair_apply(const DeviceQuant& row_q, const DeviceQuant& col_q, DType src_dtype,
                              DType dst_dtype, std::int64_t cols);
void launch_fake_quantize_pair(const void* src, DType src_dtype, void* row_dst, void* col_dst,
                               DType dst_dtype, std::int64_t rows, std::int64_t cols,
                               const DeviceQuant& row_q, const DeviceQuant& col_q,
                               double* row_stats, double* col_stats, bool record, void* scratch,
                               cudaStream_t stream);
// Where a per-tensor FP8 quantise writes (Fp8QuantArgs on the device): each code row-major into
// `codes` and/or transposed (cols x rows) into `codes_t` (either may be null), the decode scale
// into `*scale_inv`, delayed scaling's history into `state` (null for current scaling), and the
// stats (written where `record`).
struct Fp8CodesOut {
    std::uint8_t* codes = nullptr;
    std::uint8_t* codes_t = nullptr;
    float* scale_inv = nullptr;
    float* state = nullptr;
    double* stats = nullptr;
    bool record = true;
};

// Per-tensor FP8 into codes for the FP8 GEMM (Backend::quantize_fp8): src (rows x cols of
// `src_dtype`) cast with the scale launch_fake_quantize would use, into `out`, then the same
// stats and delayed-scaling update.
void launch_quantize_fp8(const void* src, DType src_dtype, std::int64_t rows, std::int64_t cols,
                         const DeviceQuant& q, const Fp8CodesOut& out, void* scratch,
                         cudaStream_t stream);

// A ReLU layer's dZ = dY where y > 0 (else 0), its FP8 codes as launch_quantize_fp8 writes them
// from a stored dZ (same codes, decode scale, stats and delayed-scaling update), and its bias
// gradient db = dZ's column sums, in one pass that never stores dZ (Backend::
// activation_backward_bias_grad_fp8; Transformer Engine's fused dbias + cast-transpose). y and dY
// are rows x cols of one float32 / float16 / bfloat16 `dtype`; db is float32, float16 or
// bfloat16; `bias_partial` is `bias_partial_bytes` of device scratch for the column sums of each
// chunk of rows. Delayed scaling only (its scale is known before the pass); false, with nothing
// launched, where it does not apply (another scaling, dtype, an empty tensor, or more columns
// than the scratch holds one row of sums for).
bool launch_relu_grad_fp8(const void* y, const void* dy, DType dtype, std::int64_t rows,
                          std::int64_t cols, const DeviceQuant& q, const Fp8CodesOut& out,
                          void* scratch, void* bias_partial, std::size_t bias_partial_bytes,
                          void* db, DType db_dtype, cudaStream_t stream);

} // namespace mantissa::cuda
