// The reference encoder/decoder for every float format, on bit patterns: a double rounded once
// to the target with integer arithmetic, so exact and rounding-mode free; half.h is tested on it.
#include "core/numeric/float_format.h"

#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"

namespace mantissa {

namespace {

// Everything the generic encoder needs about a format besides FloatFormat's display fields.
struct Layout {
    int mantissa_bits;
    int exponent_bias;
    int min_exponent;       // exponent of the smallest normal value (1 - bias)
    std::uint64_t max_bits; // magnitude pattern of max_finite
    std::uint64_t inf_bits; // magnitude pattern of +inf (e4m3: none, 0)
    std::uint64_t nan_bits; // exponent field all ones, fraction zero: the NaN "base" pattern
    int total_bits;         // width, for the sign bit
    bool has_infinity;
    bool single_nan; // e4m3: exactly one NaN magnitude, S.1111.111
};

const Layout& layout(DType dtype) {
    static const Layout f64{
        52, 1023, -1022, 0x7FEFFFFFFFFFFFFFull, 0x7FF0000000000000ull, 0x7FF0000000000000ull,
        64, true, false};
    static const Layout f32{23, 127,  -126, 0x7F7FFFFFull, 0x7F800000ull, 0x7F800000ull,
                            32, true, false};
    static const Layout f16{10, 15, -14, 0x7BFFull, 0x7C00ull, 0x7C00ull, 16, true, false};
    static const Layout bf16{7, 127, -126, 0x7F7Full, 0x7F80ull, 0x7F80ull, 16, true, false};
    // e4m3 "fn": exponent field 15 holds finite values except mantissa 111, so max is 1.110b * 2^8.
    static const Layout e4m3{3, 7, -6, 0x7Eull, 0, 0x7Full, 8, false, true};
    static const Layout e5m2{2, 15, -14, 0x7Bull, 0x7Cull, 0x7Cull, 8, true, false};
    switch (dtype) {
    case DType::Float64:
        return f64;
    case DType::Float32:
        return f32;
    case DType::Float16:
        return f16;
    case DType::BFloat16:
        return bf16;
    case DType::Float8E4M3:
        return e4m3;
    case DType::Float8E5M2:
        return e5m2;
    case DType::UInt8:
    case DType::Int32:
        break;
    }
    throw Error(ErrorKind::InvalidArgument,
                "'" + std::string(dtype_name(dtype)) + "' is not a floating-point dtype");
}

FloatFormat make_format(DType dtype, int exponent_bits) {
    const Layout& l = layout(dtype);
    FloatFormat f{};
    f.dtype = dtype;
    f.exponent_bits = exponent_bits;
    f.mantissa_bits = l.mantissa_bits;
    f.exponent_bias = l.exponent_bias;
    f.has_infinity = l.has_infinity;
    f.max_finite = decode_bits(l.max_bits, dtype);
    f.min_normal = std::ldexp(1.0, l.min_exponent);
    f.min_subnormal = std::ldexp(1.0, l.min_exponent - l.mantissa_bits);
    f.epsilon = std::ldexp(1.0, -l.mantissa_bits);
    return f;
}

} // namespace

const FloatFormat& float_format(DType dtype) {
    static const FloatFormat formats[] = {
        make_format(DType::Float64, 11),   make_format(DType::Float32, 8),
        make_format(DType::Float16, 5),    make_format(DType::BFloat16, 8),
        make_format(DType::Float8E4M3, 4), make_format(DType::Float8E5M2, 5),
    };
    switch (dtype) {
    case DType::Float64:
        return formats[0];
    case DType::Float32:
        return formats[1];
    case DType::Float16:
        return formats[2];
    case DType::BFloat16:
        return formats[3];
    case DType::Float8E4M3:
        return formats[4];
    case DType::Float8E5M2:
        return formats[5];
    case DType::UInt8:
    case DType::Int32:
        break;
    }
    throw Error(ErrorKind::InvalidArgument,
                "'" + std::string(dtype_name(dtype)) + "' is not a floating-point dtype");
}

std::uint64_t encode_bits(double value, DType dtype, Overflow overflow) {
    const std::uint64_t x = std::bit_cast<std::uint64_t>(value);
    if (dtype == DType::Float64) return x; // already the format: no rounding at all
    const Layout& l = layout(dtype);
    const int m = l.mantissa_bits;
    const std::uint64_t sign = (x >> 63) << (l.total_bits - 1);
    const std::uint64_t a = x & 0x7FFFFFFFFFFFFFFFull;
    constexpr std::uint64_t frac_mask = (1ull << 52) - 1;

    if (a > 0x7FF0000000000000ull) { // NaN: keep the top payload bits so every pattern round-trips
        if (l.single_nan) return sign | l.nan_bits;
        std::uint64_t kept = (a & frac_mask) >> (52 - m);
        if (kept == 0) kept = 1ull << (m - 1); // a payload that vanished: make it the quiet NaN
        return sign | l.nan_bits | kept;
    }
    const std::uint64_t overflowed =
        overflow == Overflow::Saturate ? l.max_bits : (l.has_infinity ? l.inf_bits : l.nan_bits);
    if (a == 0x7FF0000000000000ull) {
        // OCP FP8 saturating mode also clamps infinities; IEEE formats keep their infinities.
        if (l.has_infinity && (overflow == Overflow::Ieee || l.total_bits > 8))
            return sign | l.inf_bits;
        return sign | overflowed;
    }
    if (a == 0) return sign;

    // value = M * 2^(e - 52) with M an integer (53 bits for normal doubles).
    const std::uint64_t biased = a >> 52;
    const std::uint64_t M = (a & frac_mask) | (biased ? (1ull << 52) : 0);
    const int e = biased ? static_cast<int>(biased) - 1023 : -1022;
    // The target's quantum at this magnitude is 2^(max(e, emin) - m): shift M right to it.
    const int s = 52 - m + (e < l.min_exponent ? l.min_exponent - e : 0);
    std::uint64_t n = 0;
    if (s <= 53) { // s >= 54 leaves less than half a quantum: rounds to zero
        n = M >> s;
        const std::uint64_t rem = M & ((1ull << s) - 1);
        const std::uint64_t half = 1ull << (s - 1);
        n += (rem > half || (rem == half && (n & 1))) ? 1 : 0; // nearest, ties to even
    }
    // Normal: n in [2^m, 2^(m+1)]; adding it to (field - 1) << m also carries a rounding that
    // reaches the next binade. Subnormal: n is the fraction itself, and n == 2^m is min_normal.
    const std::uint64_t mag =
        e >= l.min_exponent ? (static_cast<std::uint64_t>(e + l.exponent_bias - 1) << m) + n : n;
    if (mag > l.max_bits) return sign | overflowed;
    return sign | mag;
}

double decode_bits(std::uint64_t bits, DType dtype) {
    if (dtype == DType::Float64) return std::bit_cast<double>(bits);
    const Layout& l = layout(dtype);
    const int m = l.mantissa_bits;
    const std::uint64_t width_mask = (1ull << l.total_bits) - 1;
    bits &= width_mask;
    const bool negative = (bits >> (l.total_bits - 1)) & 1;
    const std::uint64_t mag = bits & (width_mask >> 1);
    const std::uint64_t frac = mag & ((1ull << m) - 1);
    const int field = static_cast<int>(mag >> m);
    const std::uint64_t sign64 = negative ? (1ull << 63) : 0;

    if (mag > l.max_bits && (!l.has_infinity || mag > l.inf_bits)) {
        // NaN: carry the payload into the double's fraction (e4m3's one NaN becomes the quiet NaN).
        const std::uint64_t payload = l.single_nan ? (1ull << 51) : frac << (52 - m);
        return std::bit_cast<double>(sign64 | 0x7FF0000000000000ull | payload);
    }
    if (l.has_infinity && mag == l.inf_bits)
        return std::bit_cast<double>(sign64 | 0x7FF0000000000000ull);
    double v;
    if (field == 0)
        v = std::ldexp(static_cast<double>(frac), l.min_exponent - m);
    else
        v = std::ldexp(static_cast<double>(frac | (1ull << m)), field - l.exponent_bias - m);
    return negative ? -v : v;
}

double round_to_dtype(double value, DType dtype, Overflow overflow) {
    return decode_bits(encode_bits(value, dtype, overflow), dtype);
}

FloatClass classify_bits(std::uint64_t bits, DType dtype) {
    const Layout& l = layout(dtype);
    const std::uint64_t width_mask = l.total_bits == 64 ? ~0ull : ((1ull << l.total_bits) - 1);
    const std::uint64_t mag = bits & (width_mask >> 1);
    if (mag == 0) return FloatClass::Zero;
    if (mag <= l.max_bits)
        return (mag >> l.mantissa_bits) == 0 ? FloatClass::Subnormal : FloatClass::Normal;
    if (l.has_infinity && mag == l.inf_bits) return FloatClass::Infinity;
    return FloatClass::NaN;
}

const char* float_class_name(FloatClass cls) {
    switch (cls) {
    case FloatClass::Zero:
        return "zero";
    case FloatClass::Subnormal:
        return "subnormal";
    case FloatClass::Normal:
        return "normal";
    case FloatClass::Infinity:
        return "inf";
    case FloatClass::NaN:
        return "nan";
    }
    return "?";
}

BitFields split_bits(std::uint64_t bits, DType dtype) {
    const Layout& l = layout(dtype);
    const int m = l.mantissa_bits;
    const int exponent_bits = l.total_bits - 1 - m;
    BitFields f{};
    f.sign = static_cast<std::uint32_t>((bits >> (l.total_bits - 1)) & 1);
    f.exponent = static_cast<std::uint32_t>((bits >> m) & ((1ull << exponent_bits) - 1));
    f.mantissa = bits & ((1ull << m) - 1);
    return f;
}

} // namespace mantissa
