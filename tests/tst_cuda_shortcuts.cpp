// The CUDA quantise kernels' 32-bit shortcuts against the CPU engine's definitions, value for
// value, on the host: the CUDA library's float32 -> FP8 -> float16 conversions
// (core/backend/cuda/fp8_convert.h; here NVIDIA's host emulation of the instructions the kernels
// run on compute capability 8.9+) give element_codec's codes and values, the odd-rounded product
// (rounded to nearest and corrected, or truncated with a sticky bit) gives the exact product's
// code, the float32 clipped test gives quant_math's float64 one, and the MX block scale from the
// amax's float32 bits (mx_scale_bits.h) gives mx_scale_code's. Built only with the CUDA engine
// (it reads the toolkit's cuda_fp8.h); no GPU needed. On a GPU the op cases run the kernels
// themselves.

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/backend/cuda/fp8_convert.h"
#include "core/backend/cuda/mx_scale_bits.h"
#include "core/numeric/element_codec.h"
#include "core/numeric/element_format.h"
#include "core/numeric/quant_math.h"
#include "tests/unit/codec_sweep.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;

namespace {

constexpr float kInfF = std::numeric_limits<float>::infinity();

std::uint32_t bits_of(float x) {
    return std::bit_cast<std::uint32_t>(x);
}

// Finite float32 values on, around and between F's values, and random ones over the whole range.
template <ElementFormat F>
std::vector<float> float_sweep() {
    std::vector<float> xs;
    for (const double x : codec_sweep<F>()) {
        const auto f = static_cast<float>(x);
        for (float g : {f, std::nextafter(f, kInfF), std::nextafter(f, -kInfF)})
            if (std::isfinite(g)) xs.push_back(g);
    }
    std::mt19937 rng(5);
    for (int i = 0; i < 300000; ++i) {
        const float f = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
        if (std::isfinite(f)) xs.push_back(f);
    }
    return xs;
}

// (v, scale) pairs whose exact products lie on, near and between F's codes and midpoints (with
// scales that make the float32 product inexact, so its error term decides), at the clipping limit,
// and random ones (subnormal products, float32 overflow).
template <ElementFormat F>
std::vector<std::pair<float, float>> product_sweep() {
    std::vector<std::pair<float, float>> ps;
    const float scales[] = {1.0f,           3.0f,   0.1f,  7.3e-3f, 1.0f / 3.0f,
                            448.0f / 13.7f, 1e-30f, 1e30f, 2.5e20f, std::nextafter(1.0f, 2.0f)};
    for (const double x : codec_sweep<F>())
        for (const float scale : scales) {
            const auto v = static_cast<float>(x / static_cast<double>(scale));
            for (float w : {v, std::nextafter(v, kInfF), std::nextafter(v, -kInfF)})
                if (std::isfinite(w)) ps.emplace_back(w, scale);
        }
    // max = 7 · 2^e for both FP8 formats, so 2^e · (1 + 2^-22) · 7 is exactly the clipping limit
    // max · (1 + 2^-22): the tie per_tensor_clipped must not count; its neighbours straddle it.
    const double max = element_spec(F).max_finite;
    const auto at_limit = static_cast<float>(max / 7 * (1 + 0x1p-22));
    for (float sign : {1.0f, -1.0f})
        for (float v : {at_limit, std::nextafter(at_limit, kInfF), std::nextafter(at_limit, 0.0f)})
            for (float scale : {7.0f, std::nextafter(7.0f, kInfF), std::nextafter(7.0f, 0.0f)}) {
                ps.emplace_back(sign * v, scale);
                ps.emplace_back(sign * v * scale, 1.0f);
            }
    std::mt19937 rng(13);
    for (int i = 0; i < 300000; ++i) {
        const float v = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
        const float scale = std::bit_cast<float>(static_cast<std::uint32_t>(rng()) & 0x7FFFFFFFu);
        if (std::isfinite(v) && std::isfinite(scale)) ps.emplace_back(v, scale);
    }
    return ps;
}

class TestCudaShortcuts {
public:
    // fp8_code and fp8_round against round_to_code and round_to_element: every code, midpoint and
    // neighbour, and random finite values (saturation, subnormals and signed zeros included).
    template <ElementFormat F>
    static int conversion_mismatches() {
        int bad = 0;
        for (const float x : float_sweep<F>()) {
            bad += cuda::fp8_code<F>(x) != element_codec::round_to_code<F>(static_cast<double>(x));
            bad += bits_of(cuda::fp8_round<F>(x)) != bits_of(element_codec::round_to_element<F>(x));
        }
        for (std::uint32_t code = 0; code < 256; ++code) {
            if (!std::isfinite(decode_element(code, F))) continue; // never produced saturating
            bad +=
                bits_of(cuda::fp8_value<F>(code)) != bits_of(element_codec::decode_code<F>(code));
        }
        return bad;
    }
    void conversionsMatchTheCodec() {
        CHECK_EQ(conversion_mismatches<ElementFormat::Float8E4M3>(), 0);
        CHECK_EQ(conversion_mismatches<ElementFormat::Float8E5M2>(), 0);
        // The sweep reaches what it is meant to: saturation, a tie to even, a signed zero.
        CHECK_EQ(cuda::fp8_code<ElementFormat::Float8E4M3>(500.0f), 0x7Eu);
        CHECK_EQ(cuda::fp8_code<ElementFormat::Float8E4M3>(-1e30f), 0xFEu);
        CHECK_EQ(cuda::fp8_code<ElementFormat::Float8E4M3>(0x1p-10f), 0x00u); // half of 2^-9
        CHECK_EQ(bits_of(cuda::fp8_round<ElementFormat::Float8E5M2>(-1e-9f)), 0x80000000u);
    }

    // The codes kernel's route (hardware_code): the product rounded to odd, then the conversion,
    // gives the exact product's code.
    template <ElementFormat F>
    static int odd_product_mismatches() {
        int bad = 0;
        for (const auto& [v, scale] : product_sweep<F>()) {
            const float odd = element_codec::product_round_to_odd(v, scale);
            if (!std::isfinite(odd)) continue; // saturated by the kernel before converting
            const double exact = static_cast<double>(v) * static_cast<double>(scale);
            bad += cuda::fp8_code<F>(odd) != element_codec::round_to_code<F>(exact);
        }
        return bad;
    }
    void oddProductsGiveTheExactCode() {
        CHECK_EQ(odd_product_mismatches<ElementFormat::Float8E4M3>(), 0);
        CHECK_EQ(odd_product_mismatches<ElementFormat::Float8E5M2>(), 0);
    }

    // The codes kernel's pair route (code_pair): each product truncated toward zero with the
    // sticky bit set, two codes in one conversion, gives each exact product's code, saturated
    // products included; both codes land in their bytes.
    template <ElementFormat F>
    static int truncated_odd_mismatches(int& saturated_seen) {
        int bad = 0;
        const double max = element_spec(F).max_finite;
        const std::vector<std::pair<float, float>> ps = product_sweep<F>();
        for (std::size_t i = 0; i < ps.size(); ++i) {
            const auto [v, scale] = ps[i];
            const auto [w, scale_w] = ps[(i * 7919) % ps.size()];
            const float odd = cuda::odd_product_rz(v, scale);
            const double exact = static_cast<double>(v) * static_cast<double>(scale);
            const std::uint32_t want = element_codec::round_to_code<F>(exact);
            bad += cuda::fp8_code<F>(odd) != want;
            const float odd_w = cuda::odd_product_rz(w, scale_w);
            const std::uint32_t pair = cuda::fp8_code_pair<F>(odd, odd_w);
            bad += (pair & 0xFFu) != want;
            bad += (pair >> 8) != cuda::fp8_code<F>(odd_w);
            // Where product_round_to_odd's value is finite and its error term exact (a product
            // at least 2^-102: the error then has a float32's bits), the values are the same.
            // Below that its error can round to zero and it returns the nearest, even value: no
            // FP8 code is that small, so both still give the exact product's code.
            const float reference = element_codec::product_round_to_odd(v, scale);
            if (std::isfinite(reference) && std::fabs(exact) >= 0x1p-102)
                bad += bits_of(odd) != bits_of(reference);
            saturated_seen += std::fabs(exact) > max ? 1 : 0;
        }
        return bad;
    }
    void truncatedOddProductsGiveTheExactCode() {
        int saturated = 0;
        CHECK_EQ(truncated_odd_mismatches<ElementFormat::Float8E4M3>(saturated), 0);
        CHECK_EQ(truncated_odd_mismatches<ElementFormat::Float8E5M2>(saturated), 0);
        CHECK(saturated > 1000); // products beyond the largest value, and beyond float32's range
        CHECK_EQ(bits_of(cuda::odd_product_rz(1e30f, 1e30f)), 0x7F7FFFFFu); // FLT_MAX: odd
        CHECK_EQ(cuda::fp8_code<ElementFormat::Float8E4M3>(cuda::odd_product_rz(-1e30f, 1e30f)),
                 0xFEu);
    }

    // per_tensor_clipped on (fl(v · scale), its error) against |v · scale| > max · (1 + 2^-22) in
    // float64, including a product equal to the limit.
    template <ElementFormat F>
    static int clipped_mismatches(int& clipped_seen, int& ties_seen) {
        const double max = element_spec(F).max_finite;
        const cuda::ClipLimit clip = cuda::clip_limit(max);
        if (!clip.midpoint) return 1;
        int bad = 0;
        for (const auto& [v, scale] : product_sweep<F>()) {
            const double exact = static_cast<double>(v) * static_cast<double>(scale);
            const bool want = std::fabs(exact) > max * (1.0 + 0x1p-22);
            const float hi = v * scale;
            const bool got = cuda::per_tensor_clipped(hi, std::fma(v, scale, -hi), clip);
            bad += got != want;
            clipped_seen += want ? 1 : 0;
            ties_seen += std::fabs(exact) == max * (1.0 + 0x1p-22) ? 1 : 0;
        }
        return bad;
    }
    void clippedTestMatchesFloat64() {
        int clipped = 0, ties = 0;
        CHECK_EQ(clipped_mismatches<ElementFormat::Float8E4M3>(clipped, ties), 0);
        CHECK_EQ(clipped_mismatches<ElementFormat::Float8E5M2>(clipped, ties), 0);
        CHECK(clipped > 1000);
        CHECK(ties >= 4); // the products equal to the limit: each sign, each format
        // A limit that is not a float32 midpoint is refused (the kernel then tests in float64).
        CHECK(!cuda::clip_limit(1.0).midpoint);
    }

    // mx_scale_bits against quant_math::mx_scale_code on the float32 amax: every exponent (zero,
    // subnormals, infinity and NaN included) with low, high and random mantissas, and the amaxes
    // on and beside the ceil rule's threshold max · 2^k; the scale and its inverse as float32 and
    // the scale's float64 bits against decode_element's.
    template <ElementFormat F>
    static int mx_scale_mismatches(bool ceil) {
        std::vector<std::uint32_t> amaxes;
        std::mt19937 rng(17);
        for (std::uint32_t e = 0; e < 256; ++e)
            for (std::uint32_t mant : {0u, 1u, 2u, 0x400000u, 0x7FFFFEu, 0x7FFFFFu,
                                       static_cast<std::uint32_t>(rng()) & 0x7FFFFFu,
                                       static_cast<std::uint32_t>(rng()) & 0x7FFFFFu})
                amaxes.push_back(e << 23 | mant);
        const float max = static_cast<float>(quant_math::element_max(F));
        for (int k = -140; k <= 127; ++k) {
            const float threshold = max * std::ldexp(1.0f, k);
            if (!std::isfinite(threshold) || threshold == 0) continue;
            for (float a :
                 {threshold, std::nextafter(threshold, kInfF), std::nextafter(threshold, 0.0f)})
                amaxes.push_back(std::bit_cast<std::uint32_t>(a));
        }
        int bad = 0;
        for (const std::uint32_t bits : amaxes) {
            const double amax = bits > 0x7F800000u
                                    ? std::numeric_limits<double>::quiet_NaN()
                                    : static_cast<double>(std::bit_cast<float>(bits));
            const std::uint32_t want = quant_math::mx_scale_code(amax, F, ceil);
            const cuda::MxScaleBits got = cuda::mx_scale_bits<F>(bits, ceil);
            bad += got.code != want;
            const double scale = decode_element(want, ElementFormat::E8M0);
            bad += got.scale_bits64() != std::bit_cast<std::uint64_t>(scale);
            if (want == 0xFFu) {
                bad += !std::isnan(got.scale) || !std::isnan(got.inverse);
                continue;
            }
            bad += bits_of(got.scale) != bits_of(static_cast<float>(scale));
            bad += bits_of(got.inverse) != bits_of(static_cast<float>(1.0 / scale));
        }
        return bad;
    }
    void mxScaleMatchesQuantMath() {
        for (bool ceil : {false, true}) {
            CHECK_EQ(mx_scale_mismatches<ElementFormat::Float8E4M3>(ceil), 0);
            CHECK_EQ(mx_scale_mismatches<ElementFormat::Float8E5M2>(ceil), 0);
            CHECK_EQ(mx_scale_mismatches<ElementFormat::Float6E3M2>(ceil), 0);
            CHECK_EQ(mx_scale_mismatches<ElementFormat::Float6E2M3>(ceil), 0);
            CHECK_EQ(mx_scale_mismatches<ElementFormat::Float4E2M1>(ceil), 0);
        }
        // The extremes: a zero block takes the smallest scale; the largest float32 (just under
        // 2^128) takes 2^(127 - 8) under the floor rule and, above 448 · 2^119, 2^120 under ceil.
        CHECK_EQ(cuda::mx_scale_bits<ElementFormat::Float8E4M3>(0, false).code, 0u);
        CHECK_EQ(cuda::mx_scale_bits<ElementFormat::Float8E4M3>(0x7F7FFFFFu, false).code, 246u);
        CHECK_EQ(cuda::mx_scale_bits<ElementFormat::Float8E4M3>(0x7F7FFFFFu, true).code, 247u);
    }
};

} // namespace

MANTISSA_TEST_MAIN(TestCudaShortcuts, conversionsMatchTheCodec, oddProductsGiveTheExactCode,
                   truncatedOddProductsGiveTheExactCode, clippedTestMatchesFloat64,
                   mxScaleMatchesQuantMath)
