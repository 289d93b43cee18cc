// The element codecs specialised at compile time for the quantiser's hot loops: the format's
// layout becomes constants (no per-element switch), and decoding is a table of the format's
// values. Same arithmetic as encode_element / decode_element (element_format.h), which stay the
// spec; tst_block_quant checks these against them over every code and a sweep of values.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

#include "core/numeric/element_format.h"

namespace mantissa::element_codec {

// Number of codes of a signed element format (2^width); E8M0 is not an element format here.
template <ElementFormat F>
inline constexpr std::uint32_t kCodes = 1u << element_detail::layout(F).width;

// Every code's exact value (decode_element), indexed by code.
template <ElementFormat F>
inline constexpr std::array<double, kCodes<F>> kValues = [] {
    std::array<double, kCodes<F>> t{};
    for (std::uint32_t c = 0; c < kCodes<F>; ++c) t[c] = decode_element(c, F);
    return t;
}();

// encode_element(value, F) (nearest even, saturating) with the layout folded in.
template <ElementFormat F>
inline std::uint32_t encode_nearest(double value) {
    constexpr element_detail::Layout l = element_detail::layout(F);
    return element_detail::encode_signed(value, l, Overflow::Saturate, false, 0);
}

// encode_element_stochastic(value, F, random) (saturating) with the layout folded in.
template <ElementFormat F>
inline std::uint32_t encode_stochastic(double value, std::uint32_t random) {
    constexpr element_detail::Layout l = element_detail::layout(F);
    return element_detail::encode_signed(value, l, Overflow::Saturate, true, random);
}

// The value (not the code) nearest to the float32 `x`, ties to even, saturating at ±max: the
// same rounding as encode_nearest<F> followed by decoding, on float32 bits with integer
// operations only (no FPU rounding mode). `x` must not be NaN or infinite.
template <ElementFormat F>
inline float round_to_element(float x) {
    constexpr element_detail::Layout l = element_detail::layout(F);
    constexpr int m = l.mantissa_bits;
    constexpr std::uint32_t emin_biased = static_cast<std::uint32_t>(1 - l.bias + 127);
    constexpr std::uint32_t max_bits =
        std::bit_cast<std::uint32_t>(static_cast<float>(kValues<F>[l.max_mag]));
    constexpr float quantum = static_cast<float>(kValues<F>[1]); // 2^(emin - m)
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
    const std::uint32_t a = bits & 0x7FFFFFFFu;
    const std::uint32_t e = a >> 23;
    std::uint32_t r;
    if (e >= emin_biased) { // the format's normal range: drop 23 - m bits; a carry moves binade
        constexpr int s = 23 - m;
        r = (a + ((1u << (s - 1)) - 1) + ((a >> s) & 1u)) & ~((1u << s) - 1);
        r = r < max_bits ? r : max_bits;
    } else { // its subnormals: n quanta, n <= 2^m (2^m is the smallest normal), exact as float
        const std::uint32_t mant = (a & 0x7FFFFFu) | (e ? 0x800000u : 0u);
        const std::uint32_t shift = 23 - m + (emin_biased - (e ? e : 1u));
        std::uint32_t n = 0;
        if (shift < 32) {
            const std::uint32_t rem = mant & ((1u << shift) - 1);
            const std::uint32_t half = 1u << (shift - 1);
            n = mant >> shift;
            n += (rem > half || (rem == half && (n & 1u))) ? 1u : 0u;
        }
        r = std::bit_cast<std::uint32_t>(static_cast<float>(n) * quantum);
    }
    return std::bit_cast<float>(r | (bits & 0x80000000u));
}

} // namespace mantissa::element_codec
