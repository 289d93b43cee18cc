// NVFP4's random Hadamard transform (NVIDIA's NVFP4 training recipe; Transformer Engine's RHT on
// the weight-gradient GEMM inputs): runs of 16 values along the reduction dimension are multiplied
// by M = (1/4) H16 · diag(s), H16 the Sylvester Hadamard matrix (H[i][j] = (-1)^popcount(i & j))
// and s a random ±1 vector. M is orthogonal (Mᵀ·M = I), so transforming both operands of
// dW = Xᵀ·dZ along the batch leaves the product unchanged in exact arithmetic while an outlier's
// magnitude is spread over its 16 neighbours before the 4-bit cast.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace mantissa {

inline constexpr std::size_t kHadamardSize = 16;

// The ±1 diagonal drawn from `seed` (reproducible: the same seed gives the same signs).
std::array<float, kHadamardSize> hadamard_signs(std::uint64_t seed);

// In place on a rows x cols row-major matrix: each group of 16 consecutive rows G is replaced by
// M·G, column by column. Sums run in float64 (a fast Walsh-Hadamard transform) and each result
// is rounded once to float32; when the 16 inputs span fewer than 29 binades the float64 sums are
// exact, so the result is the float32 nearest the exact transform. `rows` must be a multiple of
// 16 (a caller pads with zero rows); no allocation.
void random_hadamard_rows(std::span<float> data, std::size_t rows, std::size_t cols,
                          const std::array<float, kHadamardSize>& signs);

} // namespace mantissa
