// Block-scaled quantisation: OCP MX formats (one E8M0 scale per 32 values) and NVFP4 (one E4M3
// scale per 16 values under a float32 tensor scale), in 1D blocks over a span or in 2D tiles of a
// row-major matrix, with a per-block report (scale, codes, decoded values, clipped, flushed).
//
// Scale rules (OCP MX v1.0 §6.3 for `floor`; Transformer Engine's MXFP8 recipe for `ceil`):
// - floor: X = 2^(floor(log2 amax) - emax_elem) (emax_elem 8 E4M3, 15 E5M2, 4 E3M2, 2 E2M3/E2M1);
//   elements are V/X rounded to nearest even and clamped to ±max, so the top of the block can clip
//   (amax = 500 in E4M3: X = 1 and 500 saturates to 448).
// - ceil: the smallest power of two X with amax / X <= max_elem: nothing clips.
// - amax (NVFP4 only): s_global = amax_tensor / (448 * 6) as float32; s_block = (amax_block / 6) /
//   s_global rounded to nearest E4M3; elements are V / (s_block * s_global) rounded to E2M1.
// Every nearest-even rounding is of the exact real quotient (the float64 quotient is corrected by
// exact products where the scale is not a power of two), so results are independent of FPU
// settings. Stochastic rounding is exact in expectation for MX (V / X is exact); under NVFP4's
// non-power-of-two scale it rounds the float64 quotient.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/numeric/element_format.h"

namespace mantissa {

enum class BlockFormat : std::uint8_t { MxFp8E4M3, MxFp8E5M2, MxFp6E3M2, MxFp6E2M3, MxFp4, NvFp4 };
enum class ScaleRule : std::uint8_t { Floor, Ceil, Amax };

struct BlockFormatSpec {
    BlockFormat format;
    std::string_view name; // "mxfp8_e4m3", ..., "nvfp4"
    ElementFormat element;
    ElementFormat scale; // E8M0 for MX, E4M3 for NVFP4
    int block_size;      // 32 for MX, 16 for NVFP4
    ScaleRule default_rule;
    bool tensor_scale;       // NVFP4's float32 per-tensor scale
    double bits_per_element; // element bits + scale bits / block (+ nothing for the tensor scale)
};

const BlockFormatSpec& block_format_spec(BlockFormat format);
std::string_view block_format_name(BlockFormat format);
const std::vector<BlockFormat>& block_formats();
// Throw Error(InvalidArgument) naming `field` and listing the valid names.
BlockFormat block_format_from_name(std::string_view name, std::string_view field = "format");
std::string_view scale_rule_name(ScaleRule rule); // "floor", "ceil", "amax"
ScaleRule scale_rule_from_name(std::string_view name, std::string_view field = "scale_rule");
bool supports_scale_rule(BlockFormat format, ScaleRule rule); // MX: floor, ceil; NVFP4: amax

struct BlockQuantConfig {
    BlockFormat format = BlockFormat::MxFp8E4M3;
    std::optional<ScaleRule> rule; // unset: the format's default (floor for MX, amax for NVFP4)
    int block_size = 0;            // 0: the format's; else a power of two, 1..4096
    bool stochastic = false;       // stochastic rounding of the elements (never of the scales)
    std::uint64_t seed = 0;        // element i uses rounding_random(seed, i): reproducible
    // NVFP4 only: the decoded values leave out the float32 tensor scale (code x block scale, a
    // bfloat16 value), which the GEMM then applies to its sum (GemmArgs::a_scale / b_scale), as
    // Blackwell's NVFP4 GEMM applies it in alpha. The value written is the usual decoded value
    // divided by nvfp4_gemm_scale(global_scale), exactly. No effect on MX formats.
    bool tensor_scale_in_gemm = false;
    bool operator==(const BlockQuantConfig&) const = default;
};

// The config with defaults filled in; throws Error(InvalidArgument) naming the bad field
// ("block_size: 24 is not a power of two", "scale_rule: nvfp4 does not support 'floor' ...").
struct ResolvedBlockQuant {
    BlockFormatSpec spec;
    ScaleRule rule;
    int block_size;
    bool stochastic;
    std::uint64_t seed;
    bool tensor_scale_in_gemm; // NVFP4 only (BlockQuantConfig's)
};
ResolvedBlockQuant resolve_block_quant(const BlockQuantConfig& config);

// A block's scale: its code in the scale format and its exact value (NaN for E8M0's 0xFF).
struct BlockScale {
    std::uint8_t code = 0;
    double value = 0;
};
// MX: the E8M0 scale of a block whose largest magnitude is `amax` (NaN when amax is inf or NaN,
// since E8M0 has no infinity; 2^-127 for an all-zero block, as it has no zero).
BlockScale mx_block_scale(double amax, ElementFormat element, ScaleRule rule);
// NVFP4: the float32 nearest to amax_tensor / 2688 (the smallest positive float32 if that is 0
// for a non-zero amax; 0 for an all-zero tensor; NaN for a non-finite amax).
float nvfp4_global_scale(double amax_tensor);
// NVFP4 with the tensor scale in the GEMM: the factor the GEMM multiplies its sum by, the global
// scale where it is positive, else 1 (an all-zero tensor, whose copy is all zeros, or a NaN one).
float nvfp4_gemm_scale(float global_scale);
// NVFP4: the E4M3 nearest to (amax_block / 6) / global_scale (saturating at 448).
BlockScale nvfp4_block_scale(double amax_block, float global_scale);

// One block (1D: a run of `count` values from `begin`; 2D: a rows x cols tile at (row, col)).
struct BlockReport {
    std::size_t begin = 0, count = 0;
    std::size_t row = 0, col = 0, rows = 1, cols = 0;
    BlockScale scale;
    int clipped = 0; // |V| beyond max_elem * scale: saturated to ±max_elem * scale
    int zeros = 0;   // non-zero V whose decoded value is zero (flushed)
};

struct BlockQuantResult {
    ResolvedBlockQuant config;
    float global_scale = 1; // NVFP4's tensor scale; 1 for MX
    // In the input's order and layout (2D: row-major like the input).
    std::vector<std::uint8_t> codes;
    std::vector<double> decoded; // code value * block scale (* global scale)
    std::vector<BlockReport> blocks;
    std::size_t clipped = 0, zeros = 0; // over all blocks
};

// 1D: consecutive blocks of block_size values (the last may be short).
BlockQuantResult quantize_blocks(std::span<const double> values, const BlockQuantConfig& config);
// 2D: `tile` x `tile` tiles of a rows x cols row-major matrix (edge tiles may be partial), one
// scale per tile: NVFP4 weights use 16 x 16 so the row- and column-wise copies agree. `tile` must
// be a power of two (1..64); the config's block_size is ignored.
BlockQuantResult quantize_blocks_2d(std::span<const double> values, std::size_t rows,
                                    std::size_t cols, const BlockQuantConfig& config,
                                    int tile = 16);

// The training path: data[i] replaced in place by its decoded value (1D blocks), no allocation.
struct BlockQuantStats {
    std::size_t blocks = 0, clipped = 0, zeros = 0;
    float global_scale = 1;
};
BlockQuantStats fake_quantize(std::span<float> data, const BlockQuantConfig& config);
// The training path over a rows x cols row-major matrix: one scale per block_rows x block_cols
// block (1 x 32 runs along a row, 32 x 1 down a column, 16 x 16 is a tile); edge blocks are
// partial (the padding a real kernel would store). Element (r, c) draws rounding_random(seed,
// r * cols + c) under stochastic rounding. The config's block_size is ignored. `max_scale` gets
// the largest block scale in use (the one the tensor's amax sees). `tensor_amax`, when the caller
// has it (>= 0, not NaN), spares NVFP4's global scale a pass over the data.
BlockQuantStats fake_quantize_blocks(std::span<float> data, std::size_t rows, std::size_t cols,
                                     const BlockQuantConfig& config, int block_rows, int block_cols,
                                     double* max_scale = nullptr, double tensor_amax = -1);

} // namespace mantissa
