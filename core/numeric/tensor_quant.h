// Fake quantisation of one GEMM/convolution input under a QuantSpec: each value is encoded in the
// recipe's format and decoded back into float32 in place (what the engine's quantise step does).
// Per-tensor FP8 follows Transformer Engine: code = round(v * scale), value = code * (1 / scale).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/numeric/quant_recipe.h"

namespace mantissa {

// What one quantisation did; `scale` is the factor a code is multiplied by on decoding (TE's
// scale_inv for per-tensor FP8; the largest block scale in use for block formats, NVFP4's global
// scale included).
struct QuantTensorStats {
    double amax = 0;
    double scale = 0;
    std::size_t clipped = 0; // saturated to ± max_elem * scale
    std::size_t zeros = 0;   // non-zero values decoded as zero (flushed)
    std::size_t count = 0;
    std::size_t blocks = 0;
    // NVFP4 with spec.block.tensor_scale_in_gemm: the factor the values were left without, which
    // the GEMM reading them multiplies its sum by (nvfp4_gemm_scale); 1 otherwise.
    float gemm_scale = 1;
};

// Floats of persistent state a spec needs (delayed scaling: 2 + history_len; else 0). Layout:
// [0] the encode scale in use (0 = none yet: 1, as TE starts), [1] amaxes recorded so far,
// [2 ...] the amax history ring. All-zero state is the state after initialisation.
std::size_t quant_state_floats(const QuantSpec& spec);

// Quantises the rows x cols row-major `data` in place (after spec.hadamard's transform down the
// columns, which needs rows in multiples of 16). `state` holds quant_state_floats(spec)
// floats; with `record` (a training step) delayed scaling adds this tensor's amax to its history
// and computes the next step's scale after the cast, so a spike is seen one step late. `step`
// varies the stochastic-rounding stream from step to step (reproducibly).
QuantTensorStats fake_quantize_tensor(std::span<float> data, std::size_t rows, std::size_t cols,
                                      const QuantSpec& spec, std::span<float> state,
                                      std::uint64_t step, bool record);

// Per-tensor FP8 (spec.scaling Current or Delayed) into codes, for the FP8 GEMM: the same scale,
// clipping, flushing, stats and delayed-scaling update as fake_quantize_tensor, but each value's
// float8 code is written (row-major into `codes` and/or transposed, cols x rows, into
// `codes_t`; an empty span skips that layout) instead of its decoded value. Returns the stats;
// `scale_inv` receives the decode scale (code · scale_inv = fake_quantize_tensor's value).
QuantTensorStats fp8_codes_tensor(std::span<const float> data, std::size_t rows, std::size_t cols,
                                  const QuantSpec& spec, std::span<float> state, bool record,
                                  std::span<std::uint8_t> codes, std::span<std::uint8_t> codes_t,
                                  float& scale_inv);

} // namespace mantissa
