// The 16-point random Hadamard transform down the columns of a matrix, as a butterfly over
// float64 chunks of columns on the stack (the rows of a group are contiguous, so it vectorises).
#include "core/numeric/hadamard.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "core/numeric/element_format.h"

namespace mantissa {

std::array<float, kHadamardSize> hadamard_signs(std::uint64_t seed) {
    // A stream of its own ("HADAMARD" in ASCII), apart from the stochastic-rounding streams.
    constexpr std::uint64_t kStream = 0x4841444D41524421ull;
    std::array<float, kHadamardSize> signs{};
    for (std::size_t i = 0; i < kHadamardSize; ++i)
        signs[i] = (rounding_random(seed ^ kStream, i) & 1u) ? -1.0f : 1.0f;
    return signs;
}

void random_hadamard_rows(std::span<float> data, std::size_t rows, std::size_t cols,
                          const std::array<float, kHadamardSize>& signs) {
    if (rows % kHadamardSize != 0 || data.size() != rows * cols)
        throw Error(ErrorKind::Internal, "random_hadamard_rows: " + std::to_string(rows) + "×" +
                                             std::to_string(cols) +
                                             " needs rows in multiples of 16 and matching data");
    constexpr std::size_t kChunk = 64;
    double v[kHadamardSize][kChunk];
    for (std::size_t g = 0; g < rows; g += kHadamardSize)
        for (std::size_t c0 = 0; c0 < cols; c0 += kChunk) {
            const std::size_t n = std::min(kChunk, cols - c0);
            for (std::size_t i = 0; i < kHadamardSize; ++i) {
                const float* row = data.data() + (g + i) * cols + c0;
                const double s = signs[i];
                for (std::size_t j = 0; j < n; ++j) v[i][j] = s * static_cast<double>(row[j]);
            }
            // Sylvester order: after the stages for h = 1, 2, 4, 8, v[i] = sum_j H[i][j] v[j].
            for (std::size_t h = 1; h < kHadamardSize; h *= 2)
                for (std::size_t i = 0; i < kHadamardSize; i += 2 * h)
                    for (std::size_t k = i; k < i + h; ++k)
                        for (std::size_t j = 0; j < n; ++j) {
                            const double a = v[k][j], b = v[k + h][j];
                            v[k][j] = a + b;
                            v[k + h][j] = a - b;
                        }
            for (std::size_t i = 0; i < kHadamardSize; ++i) {
                float* row = data.data() + (g + i) * cols + c0;
                for (std::size_t j = 0; j < n; ++j) row[j] = static_cast<float>(v[i][j] * 0.25);
            }
        }
}

} // namespace mantissa
