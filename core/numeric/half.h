// Fast scalar conversions between float32 and the 16-bit formats, used in the CPU engine's hot loops.
// They agree bit for bit with encode_bits()/decode_bits() (tested over every pattern and edge).
#pragma once

#include <cstdint>

namespace mantissa {

std::uint16_t float_to_half_bits(float value);  // round to nearest even, IEEE overflow to ±inf
float half_bits_to_float(std::uint16_t bits);   // exact
std::uint16_t float_to_bfloat16_bits(float value); // round to nearest even
float bfloat16_bits_to_float(std::uint16_t bits);  // exact (a shift)

} // namespace mantissa
