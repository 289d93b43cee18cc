// The element codecs specialised at compile time for the quantiser's hot loops: the format's
// layout becomes constants (no per-element switch), and decoding is a table of the format's
// values. Same arithmetic as encode_element / decode_element (element_format.h), which stay the
// spec; tst_block_quant checks these against them over every code and a sweep of values.
#pragma once

#include <array>
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

} // namespace mantissa::element_codec
