// Block-scaled quantisation: one kernel over a strided tile (a 1D block is a 1 x n tile) that
// finds the block's amax, its scale, and encodes, decodes and counts each element in place.
#include "core/numeric/block_quant.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "core/error.h"
#include "core/numeric/element_codec.h"
#include "core/numeric/quant_math.h"
#include "core/numeric/simd_pragmas.h"

namespace mantissa {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
using simd::kParallelMin;

const BlockFormatSpec kSpecs[] = {
    {BlockFormat::MxFp8E4M3, "mxfp8_e4m3", ElementFormat::Float8E4M3, ElementFormat::E8M0, 32,
     ScaleRule::Floor, false, 8.25},
    {BlockFormat::MxFp8E5M2, "mxfp8_e5m2", ElementFormat::Float8E5M2, ElementFormat::E8M0, 32,
     ScaleRule::Floor, false, 8.25},
    {BlockFormat::MxFp6E3M2, "mxfp6_e3m2", ElementFormat::Float6E3M2, ElementFormat::E8M0, 32,
     ScaleRule::Floor, false, 6.25},
    {BlockFormat::MxFp6E2M3, "mxfp6_e2m3", ElementFormat::Float6E2M3, ElementFormat::E8M0, 32,
     ScaleRule::Floor, false, 6.25},
    {BlockFormat::MxFp4, "mxfp4", ElementFormat::Float4E2M1, ElementFormat::E8M0, 32,
     ScaleRule::Floor, false, 4.25},
    {BlockFormat::NvFp4, "nvfp4", ElementFormat::Float4E2M1, ElementFormat::Float8E4M3, 16,
     ScaleRule::Amax, true, 4.5},
};

bool is_power_of_two(long long v) {
    return v > 0 && (v & (v - 1)) == 0;
}

// The exact-quotient rounding and the per-element step are the shared ones (quant_math.h), so
// the CUDA kernels run the same arithmetic as this reference path.
using quant_math::nearest_code_of_quotient;

struct TileCounts {
    BlockScale scale;
    int clipped = 0, zeros = 0;
};

// Quantises the rows x cols tile at `in` (row stride `ld`): codes (optional) and decoded values
// (may alias `in`) at the same positions. `index0` is the flat index of the tile's first element
// and `ld` the flat stride, so stochastic rounding draws the same random value for an element
// whatever the blocking.
template <typename T>
TileCounts quantize_tile(const T* in, std::size_t ld, std::size_t rows, std::size_t cols,
                         const ResolvedBlockQuant& q, float global_scale, std::size_t index0,
                         std::uint8_t* codes, T* out) {
    const ElementFormat elem = q.spec.element;
    const double max_elem = element_spec(elem).max_finite;
    double amax = 0;
    bool nan = false;
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) {
            const double v = std::fabs(static_cast<double>(in[r * ld + c]));
            nan = nan || std::isnan(v);
            amax = std::max(amax, v);
        }
    if (nan) amax = kNaN;

    TileCounts t;
    double eff; // the whole scale an element code is multiplied by
    if (q.spec.tensor_scale) {
        t.scale = nvfp4_block_scale(amax, global_scale);
        eff = t.scale.value * static_cast<double>(global_scale); // 4 x 24 bits: exact
    } else {
        t.scale = mx_block_scale(amax, elem, q.rule);
        eff = t.scale.value;
    }
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) {
            const std::size_t at = r * ld + c;
            const double v = static_cast<double>(in[at]);
            const quant_math::ElementResult e = quant_math::quantize_element(
                v, eff, elem, max_elem, q.stochastic, q.spec.tensor_scale,
                q.stochastic ? rounding_random(q.seed, index0 + at) : 0u);
            const std::uint32_t code = e.code;
            const double decoded = e.decoded;
            t.clipped += e.clipped ? 1 : 0;
            t.zeros += e.zero ? 1 : 0;
            if (codes) codes[at] = static_cast<std::uint8_t>(code);
            out[at] = static_cast<T>(decoded);
        }
    return t;
}

// ---- the training path's kernels (float data quantised in place, no codes kept) ----
// Bit for bit what quantize_tile<float> does (tst_block_quant compares the two over every format
// and rule), but with the element format a template parameter (no per-element switch or call),
// the scale and its special cases decided once per block, every element loop free of branches
// and table calls so that it vectorises (`omp simd`), and the tensor's bands of blocks split over
// the OpenMP threads. Blocks are independent, the counts are integers and the largest scale a
// maximum, and stochastic rounding draws rounding_random(seed, element index): the results do
// not depend on the number of threads (tst_block_quant runs 1 and 2).

// |x| as bits: for non-negative floats the integer order is the numeric order and every NaN lies
// above +inf, so one integer maximum gives both the amax and whether a NaN is present.
inline std::uint32_t abs_bits(float x) {
    return std::bit_cast<std::uint32_t>(x) & 0x7FFFFFFFu;
}
constexpr std::uint32_t kInfBits = 0x7F800000u;
inline double amax_from_bits(std::uint32_t m) {
    return m > kInfBits ? kNaN : static_cast<double>(std::bit_cast<float>(m));
}
inline float with_sign_of(float magnitude, float v) {
    return std::bit_cast<float>(std::bit_cast<std::uint32_t>(magnitude) |
                                (std::bit_cast<std::uint32_t>(v) & 0x80000000u));
}

std::uint32_t tile_amax_bits(const float* data, std::size_t ld, std::size_t rows,
                             std::size_t cols) {
    std::uint32_t m = 0;
    for (std::size_t r = 0; r < rows; ++r) {
        const float* row = data + r * ld;
        MANTISSA_SIMD_MAX(m)
        for (std::size_t c = 0; c < cols; ++c) {
            const std::uint32_t a = abs_bits(row[c]);
            m = a > m ? a : m;
        }
    }
    return m;
}

// The amax of a whole tensor (as tensor_amax), over the threads for a large one.
double float_tensor_amax(const float* data, std::size_t n) {
    std::uint32_t m = 0;
    const auto count = static_cast<std::int64_t>(n);
    MANTISSA_OMP_FOR_MAX(m, count >= kParallelMin)
    for (std::int64_t i = 0; i < count; ++i) {
        const std::uint32_t a = abs_bits(data[i]);
        m = a > m ? a : m;
    }
    return amax_from_bits(m);
}

// nearest_code_of_quotient with the element format's layout and values as constants.
template <ElementFormat F>
std::uint32_t nearest_code_fast(double a, double d) {
    constexpr auto& values = element_codec::kValues<F>;
    constexpr std::uint32_t sign_bit = element_codec::kCodes<F> / 2;
    constexpr std::uint32_t max_mag = element_detail::layout(F).max_mag;
    const std::uint32_t c = element_codec::encode_nearest<F>(a / d);
    const std::uint32_t sign = c & sign_bit;
    std::uint32_t mag = c & (sign_bit - 1);
    const double A = std::fabs(a);
    for (int step = 0; step < 2; ++step) {
        const double v = values[mag];
        if (mag > 0) {
            const double p = (v + values[mag - 1]) / 2 * d;
            if (A < p || (A == p && (mag & 1))) {
                --mag;
                continue;
            }
        }
        if (mag < max_mag) {
            const double p = (v + values[mag + 1]) / 2 * d;
            if (A > p || (A == p && (mag & 1))) {
                ++mag;
                continue;
            }
        }
        break;
    }
    return sign | mag;
}

// The E4M3 magnitude nearest to amax / d (d = 6 x a tensor scale; ties to even, saturating):
// the number of the 126 midpoints between magnitudes, times d, that amax lies past (a tie
// counts when the magnitude below is odd), by bisection. Those products are
// nearest_code_of_quotient's, exact; the table is built once per tensor scale and thread.
std::uint32_t e4m3_scale_magnitude(double amax, double d) {
    struct Midpoints {
        double d = -1;
        double p[128];
    };
    thread_local Midpoints t;
    if (t.d != d) {
        constexpr auto& values = element_codec::kValues<ElementFormat::Float8E4M3>;
        for (int j = 0; j < 126; ++j) t.p[j] = (values[j] + values[j + 1]) / 2 * d;
        t.p[126] = t.p[127] = std::numeric_limits<double>::infinity(); // 126 is the largest
        t.d = d;
    }
    std::uint32_t n = 0;
    for (std::uint32_t step = 64; step > 0; step >>= 1) {
        const std::uint32_t j = n + step - 1;
        const bool past = amax > t.p[j] || (amax == t.p[j] && (j & 1u));
        n += past ? step : 0;
    }
    return n;
}

// nvfp4_block_scale with the E4M3 codec's constants.
BlockScale nvfp4_block_scale_fast(double amax_block, float global_scale) {
    if (!std::isfinite(amax_block) || std::isnan(global_scale)) return {0x7F, kNaN};
    if (amax_block == 0 || global_scale == 0) return {0x00, 0.0};
    const std::uint32_t code =
        e4m3_scale_magnitude(amax_block, 6.0 * static_cast<double>(global_scale));
    return {static_cast<std::uint8_t>(code),
            element_codec::kValues<ElementFormat::Float8E4M3>[code]};
}

using quant_math::float_threshold; // shared with the CUDA kernels (quant_math.h)

// Element (r, c) of the tile draws rounding_random(seed, index0 + r * index_ld + c * index_step):
// its flat index in the tensor, also when the tile is a transposed copy of a column block.
template <ElementFormat F>
TileCounts fake_quantize_tile(float* data, std::size_t ld, std::size_t rows, std::size_t cols,
                              const ResolvedBlockQuant& q, float global_scale, std::size_t index0,
                              std::size_t index_ld, std::size_t index_step) {
    constexpr auto& values = element_codec::kValues<F>;
    const double max_elem = element_spec(F).max_finite;
    const double amax = amax_from_bits(tile_amax_bits(data, ld, rows, cols));

    TileCounts t;
    double eff;
    if (q.spec.tensor_scale) {
        t.scale = nvfp4_block_scale_fast(amax, global_scale);
        eff = t.scale.value * static_cast<double>(global_scale);
    } else {
        t.scale = mx_block_scale(amax, F, q.rule);
        eff = t.scale.value;
    }
    // What a code is multiplied by on the way out: eff, or with the tensor scale left to the
    // GEMM the block scale alone (eff / global is exact: eff is s_block · global in float64).
    const double out = q.tensor_scale_in_gemm ? eff / nvfp4_gemm_scale(global_scale) : eff;
    if (std::isnan(eff)) {
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < cols; ++c) data[r * ld + c] = static_cast<float>(kNaN);
        return t;
    }
    if (eff == 0) {
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < cols; ++c) {
                float& x = data[r * ld + c];
                t.zeros += (x != 0 && !std::isnan(x)) ? 1 : 0;
                x = std::signbit(x) ? -0.0f : 0.0f;
            }
        return t;
    }
    const double limit = max_elem * eff;
    int clipped = 0, zeros = 0;
    if (q.stochastic) {
        // v / eff is exact under a power-of-two scale; NVFP4 rounds the float64 quotient.
        const std::uint64_t seed = q.seed;
        for (std::size_t r = 0; r < rows; ++r) {
            float* row = data + r * ld;
            const std::size_t at0 = index0 + r * index_ld;
            MANTISSA_SIMD_SUM(clipped, zeros)
            for (std::size_t c = 0; c < cols; ++c) {
                const double v = static_cast<double>(row[c]);
                const std::uint32_t mag = element_codec::stochastic_magnitude<F>(
                    v / eff, rounding_random(seed, at0 + c * index_step));
                const double decoded = values[mag] * out;
                clipped += std::fabs(v) > limit ? 1 : 0;
                zeros += (v != 0 && decoded == 0) ? 1 : 0; // no NaN gets here (eff would be NaN)
                row[c] = with_sign_of(static_cast<float>(decoded), row[c]);
            }
        }
    } else if (!q.spec.tensor_scale) {
        // A power of two in [2^-127, 2^127], exact as a float32; so is v * inv but where the
        // product falls below float32's normals, far under half the format's smallest
        // subnormal, where both round to zero. Rounding on float32 bits gives the decoded value.
        const auto inv = static_cast<float>(1.0 / eff);
        for (std::size_t r = 0; r < rows; ++r) {
            float* row = data + r * ld;
            MANTISSA_SIMD_SUM(clipped, zeros)
            for (std::size_t c = 0; c < cols; ++c) {
                const float v = row[c];
                const float e = element_codec::round_to_element<F>(v * inv);
                clipped += std::fabs(static_cast<double>(v)) > limit ? 1 : 0;
                zeros += (v != 0 && e == 0) ? 1 : 0;
                row[c] = static_cast<float>(static_cast<double>(e) * eff);
            }
        }
    } else if constexpr (F == ElementFormat::Float4E2M1) {
        // |v| against the 7 midpoints between E2M1 magnitudes times the scale (exact products,
        // as in nearest_code_of_quotient; a tie goes to the even magnitude: up from an odd one),
        // as float32 thresholds, and the decoded magnitudes as float32, chosen by selects.
        float T[7], D[8];
        for (int j = 0; j < 7; ++j)
            T[j] = float_threshold((values[j] + values[j + 1]) / 2 * eff, (j & 1) != 0);
        for (int j = 0; j < 8; ++j) D[j] = static_cast<float>(values[j] * out);
        const float clip = float_threshold(limit, false);
        for (std::size_t r = 0; r < rows; ++r) {
            float* row = data + r * ld;
            MANTISSA_SIMD_SUM(clipped, zeros)
            for (std::size_t c = 0; c < cols; ++c) {
                const float v = row[c];
                const float a = std::bit_cast<float>(abs_bits(v));
                float o = D[0];
                o = a > T[0] ? D[1] : o;
                o = a > T[1] ? D[2] : o;
                o = a > T[2] ? D[3] : o;
                o = a > T[3] ? D[4] : o;
                o = a > T[4] ? D[5] : o;
                o = a > T[5] ? D[6] : o;
                o = a > T[6] ? D[7] : o;
                clipped += a > clip ? 1 : 0;
                zeros += (a != 0 && !(a > T[0])) ? 1 : 0;
                row[c] = with_sign_of(o, v);
            }
        }
    } else {
        for (std::size_t r = 0; r < rows; ++r) {
            float* row = data + r * ld;
            for (std::size_t c = 0; c < cols; ++c) {
                const double v = static_cast<double>(row[c]);
                const double decoded = values[nearest_code_fast<F>(v, eff)] * out;
                clipped += std::fabs(v) > limit ? 1 : 0;
                zeros += (v != 0 && decoded == 0) ? 1 : 0;
                row[c] = static_cast<float>(decoded);
            }
        }
    }
    t.clipped = clipped;
    t.zeros = zeros;
    return t;
}

// What one band of blocks (or a whole tensor) added up to; the largest block scale in use kept
// as its float64 bits (scales are >= 0 or NaN: the integer maximum is NaN-sticky like the
// reference's `scale > top || isnan(scale)`).
struct BandTotals {
    std::size_t blocks = 0, clipped = 0, zeros = 0;
    std::uint64_t top = 0;
};

// MX blocks one column wide (a weight's 32 x 1 blocks along the reduction dimension) under
// nearest rounding: the band's column amaxes and scales computed a run of columns at a time, then
// each row quantised with the per-column scales, so every loop runs along a row.
template <ElementFormat F>
BandTotals mx_column_band(float* band, std::size_t cols, std::size_t rows,
                          const ResolvedBlockQuant& q, std::size_t index0) {
    constexpr std::size_t kRun = 256;
    const double max_elem = element_spec(F).max_finite;
    BandTotals b;
    std::uint32_t m[kRun];
    float inv[kRun];
    double eff[kRun], limit[kRun];
    for (std::size_t c0 = 0; c0 < cols; c0 += kRun) {
        const std::size_t n = std::min(kRun, cols - c0);
        for (std::size_t c = 0; c < n; ++c) m[c] = 0;
        for (std::size_t r = 0; r < rows; ++r) {
            const float* row = band + r * cols + c0;
            MANTISSA_SIMD
            for (std::size_t c = 0; c < n; ++c) {
                const std::uint32_t a = abs_bits(row[c]);
                m[c] = a > m[c] ? a : m[c];
            }
        }
        bool special = false;
        for (std::size_t c = 0; c < n; ++c) {
            const BlockScale s = mx_block_scale(amax_from_bits(m[c]), F, q.rule);
            special = special || std::isnan(s.value);
            eff[c] = s.value;
            inv[c] = static_cast<float>(1.0 / s.value);
            limit[c] = max_elem * s.value;
            const std::uint64_t bits = std::bit_cast<std::uint64_t>(s.value);
            b.top = bits > b.top ? bits : b.top;
        }
        b.blocks += n;
        if (special) { // a NaN or inf in some column: one tile at a time, as the reference
            for (std::size_t c = 0; c < n; ++c) {
                const TileCounts t = fake_quantize_tile<F>(band + c0 + c, cols, rows, 1, q, 1.0f,
                                                           index0 + c0 + c, cols, 1);
                b.clipped += static_cast<std::size_t>(t.clipped);
                b.zeros += static_cast<std::size_t>(t.zeros);
            }
            continue;
        }
        std::size_t clipped = 0, zeros = 0;
        for (std::size_t r = 0; r < rows; ++r) {
            float* row = band + r * cols + c0;
            MANTISSA_SIMD_SUM(clipped, zeros)
            for (std::size_t c = 0; c < n; ++c) {
                const float v = row[c];
                const float e = element_codec::round_to_element<F>(v * inv[c]);
                clipped += std::fabs(static_cast<double>(v)) > limit[c] ? 1 : 0;
                zeros += (v != 0 && e == 0) ? 1 : 0;
                row[c] = static_cast<float>(static_cast<double>(e) * eff[c]);
            }
        }
        b.clipped += clipped;
        b.zeros += zeros;
    }
    return b;
}

// NVFP4's n x 1 blocks (E2M1 under nearest rounding) and stochastic n x 1 blocks, without a
// transposed copy: as mx_column_band, the band's column amaxes and scales a run of columns at a
// time, then each row rounded with per-column constants, so every loop runs along a row (wide
// and vectorised, where a 16-value column tile is not). Element for element the arithmetic of
// fake_quantize_tile's matching branch; a column whose scale is NaN, or zero over a non-zero
// amax, sends its run through fake_quantize_tile one column at a time.
template <ElementFormat F>
BandTotals scaled_column_band(float* band, std::size_t cols, std::size_t rows,
                              const ResolvedBlockQuant& q, float global_scale, std::size_t index0) {
    constexpr std::size_t kRun = 256;
    constexpr auto& values = element_codec::kValues<F>;
    constexpr bool kThresholds = F == ElementFormat::Float4E2M1;
    const double max_elem = element_spec(F).max_finite;
    BandTotals b;
    std::uint32_t m[kRun];
    double eff[kRun], out[kRun], limit[kRun]; // out: fake_quantize_tile's
    const double gemm_scale = q.tensor_scale_in_gemm ? nvfp4_gemm_scale(global_scale) : 1.0;
    float T[7][kRun], D[8][kRun], clip[kRun];
    for (std::size_t c0 = 0; c0 < cols; c0 += kRun) {
        const std::size_t n = std::min(kRun, cols - c0);
        for (std::size_t c = 0; c < n; ++c) m[c] = 0;
        for (std::size_t r = 0; r < rows; ++r) {
            const float* row = band + r * cols + c0;
            MANTISSA_SIMD
            for (std::size_t c = 0; c < n; ++c) {
                const std::uint32_t a = abs_bits(row[c]);
                m[c] = a > m[c] ? a : m[c];
            }
        }
        bool special = false;
        for (std::size_t c = 0; c < n; ++c) {
            const double amax = amax_from_bits(m[c]);
            const double e = q.spec.tensor_scale
                                 ? nvfp4_block_scale_fast(amax, global_scale).value *
                                       static_cast<double>(global_scale)
                                 : mx_block_scale(amax, F, q.rule).value;
            special = special || std::isnan(e) || (e == 0 && amax != 0);
            eff[c] = e;
            out[c] = e / gemm_scale; // exact (fake_quantize_tile)
            limit[c] = max_elem * e;
            const std::uint64_t bits = std::bit_cast<std::uint64_t>(e);
            b.top = bits > b.top ? bits : b.top;
            if (kThresholds && !q.stochastic) {
                for (int j = 0; j < 7; ++j)
                    T[j][c] = float_threshold((values[j] + values[j + 1]) / 2 * e, (j & 1) != 0);
                for (int j = 0; j < 8; ++j) D[j][c] = static_cast<float>(values[j] * out[c]);
                clip[c] = float_threshold(limit[c], false);
            }
        }
        b.blocks += n;
        if (special) {
            for (std::size_t c = 0; c < n; ++c) {
                const TileCounts t = fake_quantize_tile<F>(band + c0 + c, cols, rows, 1, q,
                                                           global_scale, index0 + c0 + c, cols, 1);
                b.clipped += static_cast<std::size_t>(t.clipped);
                b.zeros += static_cast<std::size_t>(t.zeros);
            }
            continue;
        }
        std::size_t clipped = 0, zeros = 0;
        if (q.stochastic) {
            // A zero scale here has an all-zero column: 0 / 0 draws some magnitude, times 0 is a
            // zero of the value's sign, neither clipped nor flushed, as the reference's zero case.
            const std::uint64_t seed = q.seed;
            for (std::size_t r = 0; r < rows; ++r) {
                float* row = band + r * cols + c0;
                const std::size_t at0 = index0 + r * cols + c0;
                MANTISSA_SIMD_SUM(clipped, zeros)
                for (std::size_t c = 0; c < n; ++c) {
                    const double v = static_cast<double>(row[c]);
                    const std::uint32_t mag = element_codec::stochastic_magnitude<F>(
                        v / eff[c], rounding_random(seed, at0 + c));
                    const double decoded = values[mag] * out[c];
                    clipped += std::fabs(v) > limit[c] ? 1 : 0;
                    zeros += (v != 0 && decoded == 0) ? 1 : 0;
                    row[c] = with_sign_of(static_cast<float>(decoded), row[c]);
                }
            }
        } else if constexpr (kThresholds) {
            // As fake_quantize_tile's E2M1 branch; a zero scale (an all-zero column) makes every
            // threshold and value 0: each value stays a zero of its sign, nothing counted.
            for (std::size_t r = 0; r < rows; ++r) {
                float* row = band + r * cols + c0;
                MANTISSA_SIMD_SUM(clipped, zeros)
                for (std::size_t c = 0; c < n; ++c) {
                    const float v = row[c];
                    const float a = std::bit_cast<float>(abs_bits(v));
                    float o = D[0][c];
                    o = a > T[0][c] ? D[1][c] : o;
                    o = a > T[1][c] ? D[2][c] : o;
                    o = a > T[2][c] ? D[3][c] : o;
                    o = a > T[3][c] ? D[4][c] : o;
                    o = a > T[4][c] ? D[5][c] : o;
                    o = a > T[5][c] ? D[6][c] : o;
                    o = a > T[6][c] ? D[7][c] : o;
                    clipped += a > clip[c] ? 1 : 0;
                    zeros += (a != 0 && !(a > T[0][c])) ? 1 : 0;
                    row[c] = with_sign_of(o, v);
                }
            }
        }
        b.clipped += clipped;
        b.zeros += zeros;
    }
    return b;
}

// Any other blocks one column wide (NVFP4's n x 1, stochastic rounding): a run of the band's
// columns copied into a scratch buffer one column per row, each quantised there as a 1 x rows
// tile (one contiguous loop, the element's flat index kept for stochastic rounding), and copied
// back. Bands taller than the buffer go tile by tile.
template <ElementFormat F>
BandTotals transposed_column_band(float* band, std::size_t cols, std::size_t rows,
                                  const ResolvedBlockQuant& q, float global_scale,
                                  std::size_t index0) {
    constexpr std::size_t kScratch = 4096;
    BandTotals b;
    auto add = [&](const TileCounts& t) {
        ++b.blocks;
        b.clipped += static_cast<std::size_t>(t.clipped);
        b.zeros += static_cast<std::size_t>(t.zeros);
        const double scale = q.spec.tensor_scale ? t.scale.value * global_scale : t.scale.value;
        const std::uint64_t bits = std::bit_cast<std::uint64_t>(scale);
        b.top = bits > b.top ? bits : b.top;
    };
    if (rows > kScratch) {
        for (std::size_t c = 0; c < cols; ++c)
            add(fake_quantize_tile<F>(band + c, cols, rows, 1, q, global_scale, index0 + c, cols,
                                      1));
        return b;
    }
    float scratch[kScratch];
    const std::size_t run = kScratch / rows;
    for (std::size_t c0 = 0; c0 < cols; c0 += run) {
        const std::size_t n = std::min(run, cols - c0);
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t j = 0; j < n; ++j) scratch[j * rows + r] = band[r * cols + c0 + j];
        for (std::size_t j = 0; j < n; ++j)
            add(fake_quantize_tile<F>(scratch + j * rows, rows, 1, rows, q, global_scale,
                                      index0 + c0 + j, 0, cols));
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t j = 0; j < n; ++j) band[r * cols + c0 + j] = scratch[j * rows + r];
    }
    return b;
}

// fake_quantize_blocks for one element format: bands of block rows over the threads.
template <ElementFormat F>
BandTotals fake_quantize_bands(float* data, std::size_t rows, std::size_t cols,
                               const ResolvedBlockQuant& q, float global_scale, std::size_t br,
                               std::size_t bc) {
    const auto bands = static_cast<std::int64_t>((rows + br - 1) / br);
    const bool columns = bc == 1 && br > 1;
    const bool mx_columns = columns && !q.stochastic && !q.spec.tensor_scale;
    const bool scaled_columns =
        columns && (q.stochastic || (q.spec.tensor_scale && F == ElementFormat::Float4E2M1));
    std::size_t blocks = 0, clipped = 0, zeros = 0;
    std::uint64_t top = 0;
    MANTISSA_OMP_FOR_TOTALS(blocks, clipped, zeros, top,
                            bands > 1 && static_cast<std::int64_t>(rows * cols) >= kParallelMin)
    for (std::int64_t band = 0; band < bands; ++band) {
        const std::size_t row = static_cast<std::size_t>(band) * br;
        const std::size_t tr = std::min(br, rows - row);
        BandTotals b;
        if (mx_columns) {
            b = mx_column_band<F>(data + row * cols, cols, tr, q, row * cols);
        } else if (scaled_columns) {
            b = scaled_column_band<F>(data + row * cols, cols, tr, q, global_scale, row * cols);
        } else if (columns) {
            b = transposed_column_band<F>(data + row * cols, cols, tr, q, global_scale, row * cols);
        } else {
            for (std::size_t col = 0; col < cols; col += bc) {
                const std::size_t tc = std::min(bc, cols - col);
                const std::size_t at = row * cols + col;
                const TileCounts t =
                    fake_quantize_tile<F>(data + at, cols, tr, tc, q, global_scale, at, cols, 1);
                ++b.blocks;
                b.clipped += static_cast<std::size_t>(t.clipped);
                b.zeros += static_cast<std::size_t>(t.zeros);
                const double scale =
                    q.spec.tensor_scale ? t.scale.value * global_scale : t.scale.value;
                const std::uint64_t bits = std::bit_cast<std::uint64_t>(scale);
                b.top = bits > b.top ? bits : b.top;
            }
        }
        blocks += b.blocks;
        clipped += b.clipped;
        zeros += b.zeros;
        top = b.top > top ? b.top : top;
    }
    return {blocks, clipped, zeros, top};
}

// Calls f(std::integral_constant<ElementFormat, F>) for the block element format.
template <typename Fn>
decltype(auto) with_element(ElementFormat e, Fn&& f) {
    switch (e) {
    case ElementFormat::Float8E5M2:
        return f(std::integral_constant<ElementFormat, ElementFormat::Float8E5M2>{});
    case ElementFormat::Float6E3M2:
        return f(std::integral_constant<ElementFormat, ElementFormat::Float6E3M2>{});
    case ElementFormat::Float6E2M3:
        return f(std::integral_constant<ElementFormat, ElementFormat::Float6E2M3>{});
    case ElementFormat::Float4E2M1:
        return f(std::integral_constant<ElementFormat, ElementFormat::Float4E2M1>{});
    case ElementFormat::Float8E4M3:
    case ElementFormat::E8M0: // never a block element format (block_format_spec)
        break;
    }
    return f(std::integral_constant<ElementFormat, ElementFormat::Float8E4M3>{});
}

TileCounts fake_quantize_tile(float* data, std::size_t ld, std::size_t rows, std::size_t cols,
                              const ResolvedBlockQuant& q, float global_scale, std::size_t index0) {
    return with_element(q.spec.element, [&](auto f) {
        return fake_quantize_tile<decltype(f)::value>(data, ld, rows, cols, q, global_scale, index0,
                                                      ld, 1);
    });
}

template <typename T>
double tensor_amax(const T* data, std::size_t n) {
    double amax = 0;
    bool nan = false;
    for (std::size_t i = 0; i < n; ++i) {
        const double v = std::fabs(static_cast<double>(data[i]));
        nan = nan || std::isnan(v);
        amax = std::max(amax, v);
    }
    return nan ? kNaN : amax;
}

} // namespace

const BlockFormatSpec& block_format_spec(BlockFormat format) {
    const auto i = static_cast<std::size_t>(format);
    if (i >= std::size(kSpecs))
        throw Error(ErrorKind::InvalidArgument, "unknown block format " + std::to_string(i));
    return kSpecs[i];
}

std::string_view block_format_name(BlockFormat format) {
    return block_format_spec(format).name;
}

const std::vector<BlockFormat>& block_formats() {
    static const std::vector<BlockFormat> all = {BlockFormat::MxFp8E4M3, BlockFormat::MxFp8E5M2,
                                                 BlockFormat::MxFp6E3M2, BlockFormat::MxFp6E2M3,
                                                 BlockFormat::MxFp4,     BlockFormat::NvFp4};
    return all;
}

BlockFormat block_format_from_name(std::string_view name, std::string_view field) {
    std::string valid;
    for (const BlockFormatSpec& s : kSpecs) {
        if (s.name == name) return s.format;
        valid += (valid.empty() ? "" : ", ") + std::string(s.name);
    }
    throw Error(ErrorKind::InvalidArgument, std::string(field) + ": unknown block format '" +
                                                std::string(name) + "' (valid: " + valid + ")");
}

std::string_view scale_rule_name(ScaleRule rule) {
    switch (rule) {
    case ScaleRule::Floor:
        return "floor";
    case ScaleRule::Ceil:
        return "ceil";
    case ScaleRule::Amax:
        return "amax";
    }
    return "?";
}

ScaleRule scale_rule_from_name(std::string_view name, std::string_view field) {
    for (ScaleRule r : {ScaleRule::Floor, ScaleRule::Ceil, ScaleRule::Amax})
        if (scale_rule_name(r) == name) return r;
    throw Error(ErrorKind::InvalidArgument, std::string(field) + ": unknown scale rule '" +
                                                std::string(name) + "' (valid: floor, ceil, amax)");
}

bool supports_scale_rule(BlockFormat format, ScaleRule rule) {
    return block_format_spec(format).tensor_scale ? rule == ScaleRule::Amax
                                                  : rule != ScaleRule::Amax;
}

ResolvedBlockQuant resolve_block_quant(const BlockQuantConfig& config) {
    const BlockFormatSpec& spec = block_format_spec(config.format);
    ResolvedBlockQuant r{spec,
                         config.rule.value_or(spec.default_rule),
                         config.block_size ? config.block_size : spec.block_size,
                         config.stochastic,
                         config.seed,
                         config.tensor_scale_in_gemm && spec.tensor_scale};
    if (!supports_scale_rule(spec.format, r.rule)) {
        const std::string why =
            spec.tensor_scale
                ? "its E4M3 block scale is amax/6 under a float32 tensor scale: use 'amax'"
                : "its E8M0 block scale is a power of two: use 'floor' or 'ceil'";
        throw Error(ErrorKind::InvalidArgument,
                    "scale_rule: " + std::string(spec.name) + " does not support '" +
                        std::string(scale_rule_name(r.rule)) + "' (" + why + ")");
    }
    if (!is_power_of_two(r.block_size) || r.block_size > 4096)
        throw Error(ErrorKind::InvalidArgument, "block_size: " + std::to_string(r.block_size) +
                                                    " is not a power of two between 1 and 4096");
    return r;
}

BlockScale mx_block_scale(double amax, ElementFormat element, ScaleRule rule) {
    const std::uint32_t code = quant_math::mx_scale_code(amax, element, rule == ScaleRule::Ceil);
    return {static_cast<std::uint8_t>(code), decode_element(code, ElementFormat::E8M0)};
}

float nvfp4_global_scale(double amax_tensor) {
    return quant_math::nvfp4_global_scale(amax_tensor);
}

float nvfp4_gemm_scale(float global_scale) {
    return quant_math::nvfp4_gemm_scale(global_scale);
}

BlockScale nvfp4_block_scale(double amax_block, float global_scale) {
    const std::uint32_t code = quant_math::nvfp4_scale_code(amax_block, global_scale);
    return {static_cast<std::uint8_t>(code), decode_element(code, ElementFormat::Float8E4M3)};
}

BlockQuantResult quantize_blocks(std::span<const double> values, const BlockQuantConfig& config) {
    BlockQuantResult r;
    r.config = resolve_block_quant(config);
    const std::size_t n = values.size();
    r.codes.assign(n, 0);
    r.decoded.assign(n, 0.0);
    if (r.config.spec.tensor_scale)
        r.global_scale = nvfp4_global_scale(tensor_amax(values.data(), n));
    const auto bs = static_cast<std::size_t>(r.config.block_size);
    r.blocks.reserve((n + bs - 1) / bs);
    for (std::size_t begin = 0; begin < n; begin += bs) {
        const std::size_t count = std::min(bs, n - begin);
        const TileCounts t =
            quantize_tile(values.data() + begin, count, 1, count, r.config, r.global_scale, begin,
                          r.codes.data() + begin, r.decoded.data() + begin);
        BlockReport b;
        b.begin = begin;
        b.count = count;
        b.col = begin;
        b.cols = count;
        b.scale = t.scale;
        b.clipped = t.clipped;
        b.zeros = t.zeros;
        r.clipped += static_cast<std::size_t>(t.clipped);
        r.zeros += static_cast<std::size_t>(t.zeros);
        r.blocks.push_back(b);
    }
    return r;
}

BlockQuantResult quantize_blocks_2d(std::span<const double> values, std::size_t rows,
                                    std::size_t cols, const BlockQuantConfig& config, int tile) {
    BlockQuantResult r;
    r.config = resolve_block_quant(config);
    if (!is_power_of_two(tile) || tile > 64)
        throw Error(ErrorKind::InvalidArgument,
                    "tile: " + std::to_string(tile) + " is not a power of two between 1 and 64");
    if (rows * cols != values.size())
        throw Error(ErrorKind::InvalidArgument, "shape: " + std::to_string(rows) + " x " +
                                                    std::to_string(cols) + " is not " +
                                                    std::to_string(values.size()) + " values");
    r.config.block_size = tile * tile;
    const std::size_t n = values.size(), ts = static_cast<std::size_t>(tile);
    r.codes.assign(n, 0);
    r.decoded.assign(n, 0.0);
    if (r.config.spec.tensor_scale)
        r.global_scale = nvfp4_global_scale(tensor_amax(values.data(), n));
    for (std::size_t row = 0; row < rows; row += ts)
        for (std::size_t col = 0; col < cols; col += ts) {
            const std::size_t tr = std::min(ts, rows - row), tc = std::min(ts, cols - col);
            const std::size_t at = row * cols + col;
            const TileCounts t =
                quantize_tile(values.data() + at, cols, tr, tc, r.config, r.global_scale, at,
                              r.codes.data() + at, r.decoded.data() + at);
            BlockReport b;
            b.begin = at;
            b.count = tr * tc;
            b.row = row;
            b.col = col;
            b.rows = tr;
            b.cols = tc;
            b.scale = t.scale;
            b.clipped = t.clipped;
            b.zeros = t.zeros;
            r.clipped += static_cast<std::size_t>(t.clipped);
            r.zeros += static_cast<std::size_t>(t.zeros);
            r.blocks.push_back(b);
        }
    return r;
}

BlockQuantStats fake_quantize(std::span<float> data, const BlockQuantConfig& config) {
    const ResolvedBlockQuant q = resolve_block_quant(config);
    BlockQuantStats s;
    const std::size_t n = data.size(), bs = static_cast<std::size_t>(q.block_size);
    if (q.spec.tensor_scale) s.global_scale = nvfp4_global_scale(tensor_amax(data.data(), n));
    for (std::size_t begin = 0; begin < n; begin += bs) {
        const std::size_t count = std::min(bs, n - begin);
        float* block = data.data() + begin;
        const TileCounts t = fake_quantize_tile(block, count, 1, count, q, s.global_scale, begin);
        ++s.blocks;
        s.clipped += static_cast<std::size_t>(t.clipped);
        s.zeros += static_cast<std::size_t>(t.zeros);
    }
    return s;
}

BlockQuantStats fake_quantize_blocks(std::span<float> data, std::size_t rows, std::size_t cols,
                                     const BlockQuantConfig& config, int block_rows, int block_cols,
                                     double* max_scale, double tensor_amax) {
    BlockQuantConfig c = config;
    c.block_size = 0; // the shape below decides; resolve only checks the format and rule
    const ResolvedBlockQuant q = resolve_block_quant(c);
    if (block_rows < 1 || block_cols < 1 || rows * cols != data.size())
        throw Error(ErrorKind::InvalidArgument, "fake_quantize_blocks: bad shape");
    BlockQuantStats s;
    if (q.spec.tensor_scale)
        s.global_scale = nvfp4_global_scale(
            tensor_amax >= 0 ? tensor_amax : float_tensor_amax(data.data(), data.size()));
    const auto br = static_cast<std::size_t>(block_rows), bc = static_cast<std::size_t>(block_cols);
    const BandTotals t = with_element(q.spec.element, [&](auto f) {
        return fake_quantize_bands<decltype(f)::value>(data.data(), rows, cols, q, s.global_scale,
                                                       br, bc);
    });
    s.blocks = t.blocks;
    s.clipped = t.clipped;
    s.zeros = t.zeros;
    if (max_scale) *max_scale = std::bit_cast<double>(t.top);
    return s;
}

} // namespace mantissa
