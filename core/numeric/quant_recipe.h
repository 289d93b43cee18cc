// Quantisation recipes for the frontier policies (issue 18): which element format, block shape and
// scale rule each GEMM/convolution input gets (activation, weight, gradient), as in NVIDIA
// Transformer Engine (FP8 delayed / current / block scaling, MXFP8, NVFP4) and OCP MX v1.0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/numeric/block_quant.h"
#include "core/numeric/dtype.h"
#include "core/numeric/element_format.h"

namespace mantissa {

// The three GEMM inputs a recipe quantises (TE: fprop reads activation x weight, dgrad gradient x
// weight, wgrad activation x gradient).
enum class QuantRole : std::uint8_t { Activation, Weight, Gradient };
inline constexpr int kQuantRoleCount = 3;
std::string_view quant_role_name(QuantRole role); // "activation", "weight", "gradient"

// How a tensor's scale is chosen.
enum class QuantScaling : std::uint8_t {
    Delayed, // FP8 per tensor: scale = max_elem / amax over a history of earlier steps (TE)
    Current, // FP8 per tensor: scale = max_elem / amax of the tensor being cast
    Block,   // blocks with one scale each: MX (E8M0), NVFP4 (E4M3 + float32), FP8 block (2^k)
};

// One role's quantisation.
struct QuantSpec {
    QuantScaling scaling = QuantScaling::Current;
    ElementFormat element = ElementFormat::Float8E4M3; // Delayed / Current
    BlockQuantConfig block;                            // Block: format, rule, stochastic, seed
    // Block shape over the tensor's 2-D view (Tensor::rows() x cols()): 1 x 32 is 32 consecutive
    // values of a row; 32 x 1 runs down a column; 16 x 16 is a tile. Edge blocks are padded.
    int block_rows = 1, block_cols = 1;
    // Delayed only.
    int history_len = 1024;
    int margin = 0;                // scale divided by 2^margin
    bool amax_most_recent = false; // false: the max over the history (TE's default "max")
    // NVFP4's random Hadamard transform (a column-wise wgrad input only): before the cast, each
    // run of 16 rows is replaced, column by column, by (1/4) H16 · diag(signs) times it, the
    // signs drawn from `hadamard_seed` (core/numeric/hadamard.h). Rows must be a multiple of 16.
    bool hadamard = false;
    std::uint64_t hadamard_seed = 0;
    bool operator==(const QuantSpec&) const = default;
};

// Whether every value a quantise-and-decode of `spec` produces is a bfloat16 value: MX block
// formats (an element of at most 4 significant bits times an E8M0 power of two), for every block
// whose scale is at least 2^-119 (below it, decoded values under 2^-126 can fall between
// bfloat16's subnormals), and NVFP4 with block.tensor_scale_in_gemm (an E2M1 element times an
// E4M3 block scale: at most 5 significant bits, never below 2^-10). NVFP4's float32 tensor scale
// and per-tensor FP8's float32 scale give values of up to 24 bits.
bool decodes_exactly_in_bfloat16(const QuantSpec& spec);

// Whether a copy under `spec` leaves NVFP4's tensor scale to the GEMM that reads it (block
// scaling, an NVFP4 format and block.tensor_scale_in_gemm): its quantise step then writes that
// scale for the GEMM (FakeQuantArgs::gemm_scale).
bool tensor_scale_in_gemm(const QuantSpec& spec);

// The dtypes a quantised-and-decoded copy under `spec` may be stored in (FakeQuantArgs::dst):
// float32 always; bfloat16 where the decoded values are bfloat16 values
// (decodes_exactly_in_bfloat16) and no Hadamard transform mixes them, as the plan stores a Dense
// layer's MX and NVFP4 copies for bfloat16 GEMMs. The narrowing is exact but for blocks whose scale
// is below 2^-119, whose values under 2^-126 round to bfloat16's subnormals on every engine alike.
bool quant_copy_dtype_ok(const QuantSpec& spec, DType dtype);

struct QuantRecipe {
    std::string name; // "delayed", "current", "block", "mxfp8_e4m3", ..., "nvfp4"
    // The row-wise copies: blocks along the reduction dimension of the forward GEMM (X, W) and of
    // dX = dZ·Wᵀ (dZ).
    QuantSpec activation, weight, gradient;
    bool hadamard = false;  // nvfp4: the random Hadamard transform on the wgrad inputs
    std::uint64_t seed = 0; // the recipe's seed (stochastic rounding, the Hadamard signs)
    // Per-tensor FP8 (delayed, current) only, else empty: how the Dense GEMMs consume the
    // quantised inputs. "auto": FP8 GEMMs on float8 codes where the engine has FP8 hardware
    // (Backend::native_fp8_gemm), quantise-dequantise elsewhere; "fp8": FP8 GEMMs on any engine
    // with them (the CPU engine emulates cuBLASLt's arithmetic: codes multiplied, scales applied
    // after the float32 sum); "fake_quant": quantised-and-decoded float32 inputs to float32 GEMMs.
    std::string gemm;
    const QuantSpec& spec(QuantRole role) const;
    // The column-wise copy of `role` (TE's columnwise usage) for the GEMM that reduces along the
    // tensor's other dimension (dW = Xᵀ·dZ reduces over the batch; dX = dZ·Wᵀ over the units):
    // the block shape transposed (1×32 -> 32×1), quantised from the high-precision tensor, with
    // its own rounding stream and, for activation and gradient under `hadamard`, the transform.
    // None where the row-wise copy serves both GEMMs: per-tensor scaling (one scale, no layout:
    // TE transposes the same FP8 data) and square tiles (NVFP4's 16×16 and FP8 block's 128×128
    // weights, which is why those recipes use them).
    std::optional<QuantSpec> columnwise(QuantRole role) const;
    bool operator==(const QuantRecipe&) const = default;
};

// What an experiment's "recipe" object may set; unset fields take the policy's defaults.
struct RecipeOptions {
    std::optional<std::string> kind;         // mixed_float8 only: delayed (default), current, block
    std::optional<std::string> fp8_format;   // mixed_float8: "hybrid" (default) or "e4m3"
    std::optional<int> history_len;          // delayed: >= 1 (default 1024)
    std::optional<int> margin;               // delayed: >= 0
    std::optional<std::string> amax_compute; // delayed: "max" (default) or "most_recent"
    std::optional<std::string> scale_rule;   // MX: "floor" (default, the spec) or "ceil" (TE)
    std::optional<bool> weight_2d;           // nvfp4: 16x16 weight tiles (default true)
    std::optional<bool> stochastic_gradients; // nvfp4 default true, others false
    std::optional<std::uint64_t> seed;        // stochastic rounding seed (default 0)
    std::optional<bool> hadamard;    // nvfp4: random Hadamard transform on wgrad inputs (false)
    std::optional<std::string> gemm; // mixed_float8 delayed/current: "auto", "fp8", "fake_quant"
    bool operator==(const RecipeOptions&) const = default;
};

// The policies that carry a recipe.
bool is_quantized_policy(std::string_view policy_name);
// The recipe of `policy_name` with `options` applied. Throws Error(Config) naming the field with a
// "recipe." prefix ("recipe.history_len: must be >= 1", "recipe.kind: ... only for mixed_float8").
QuantRecipe make_recipe(std::string_view policy_name, const RecipeOptions& options = {});
// One line for the plan view and the CLI: "E4M3 act/weight, E5M2 grad, delayed (history 1024)".
std::string describe_quant_spec(const QuantSpec& spec);
// Bytes per element in storage, scales included (8.25 for MXFP8, 4.5 NVFP4, 1 per-tensor FP8).
double quant_bits_per_element(const QuantSpec& spec);

} // namespace mantissa
