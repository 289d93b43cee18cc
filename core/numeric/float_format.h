// Bit-exact float formats: float64/32, float16, bfloat16 and OCP FP8 (e4m3, e5m2).
// encode_bits() rounds a double to a format with ONE rounding (nearest, ties to even), per IEEE 754
// / OCP.
#pragma once

#include <cstdint>

#include "core/numeric/dtype.h"

namespace mantissa {

struct FloatFormat {
    DType dtype;
    int exponent_bits;
    int mantissa_bits; // stored fraction bits (float16: 10, bfloat16: 7, e4m3: 3, e5m2: 2)
    int exponent_bias;
    bool has_infinity; // false only for e4m3 (its all-ones exponent still holds finite values)
    double max_finite;
    double min_normal;
    double min_subnormal;
    double epsilon; // distance from 1.0 to the next larger value
};

// Describes a floating dtype; throws Error(InvalidArgument) for uint8/int32.
const FloatFormat& float_format(DType dtype);

// What happens to a finite value whose rounded magnitude exceeds max_finite.
enum class Overflow {
    Ieee,     // ±inf where the format has infinities; NaN for e4m3 (OCP "non-saturating" mode)
    Saturate, // ±max_finite (OCP "saturating" mode)
};

// Rounds `value` to `dtype` (nearest, ties to even, subnormals, signed zero, NaN -> quiet NaN of
// the same sign) and returns its bit pattern in the low bits (float64: all 64 bits).
std::uint64_t encode_bits(double value, DType dtype, Overflow overflow = Overflow::Ieee);
// The exact value of a bit pattern of `dtype`.
double decode_bits(std::uint64_t bits, DType dtype);
// decode_bits(encode_bits(value)): the nearest value representable in `dtype`.
double round_to_dtype(double value, DType dtype, Overflow overflow = Overflow::Ieee);

enum class FloatClass { Zero, Subnormal, Normal, Infinity, NaN };
FloatClass classify_bits(std::uint64_t bits, DType dtype);
const char* float_class_name(FloatClass cls); // "zero", "subnormal", "normal", "inf", "nan"

// The bit fields of a pattern, for display: sign | exponent | mantissa.
struct BitFields {
    std::uint32_t sign;
    std::uint32_t exponent;
    std::uint64_t mantissa;
};
BitFields split_bits(std::uint64_t bits, DType dtype);

} // namespace mantissa
