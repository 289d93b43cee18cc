// The CUDA quantise kernels' FP8 shortcuts (core/backend/cuda/fp8_convert.h) against the CPU
// engine's rounding, value for value, on the host: the CUDA library's float32 -> FP8 -> float16
// conversions (here NVIDIA's host emulation of the instructions the kernels run on compute
// capability 8.9+) give element_codec's codes and values, the odd-rounded product gives the exact
// product's code, and the float32 clipped test gives quant_math's float64 one. Built only with the
// CUDA engine (it reads the toolkit's cuda_fp8.h); no GPU needed. On a GPU the op cases run the
// kernels themselves.

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/backend/cuda/fp8_convert.h"
#include "core/numeric/element_codec.h"
#include "core/numeric/element_format.h"
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

class TestCudaFp8Convert {
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
};

} // namespace

MANTISSA_TEST_MAIN(TestCudaFp8Convert, conversionsMatchTheCodec, oddProductsGiveTheExactCode,
                   clippedTestMatchesFloat64)
