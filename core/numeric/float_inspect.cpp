// Float inspection on top of the bit-exact encoder: neighbours and ULPs come from the bit patterns
// (the next pattern is the next value), so they are exact in every format, subnormals included.
#include "core/numeric/float_inspect.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace mantissa {

namespace {

std::uint64_t width_mask(DType dtype) {
    const int w = bit_width(dtype);
    return w == 64 ? ~0ull : (1ull << w) - 1;
}

std::uint64_t sign_bit(DType dtype) {
    return 1ull << (bit_width(dtype) - 1);
}

// Magnitude pattern of the largest finite value and of +inf (0 when the format has none).
std::uint64_t max_magnitude(DType dtype) {
    return encode_bits(float_format(dtype).max_finite, dtype);
}

std::uint64_t inf_magnitude(DType dtype) {
    return float_format(dtype).has_infinity
               ? encode_bits(std::numeric_limits<double>::infinity(), dtype)
               : 0;
}

// IEEE nextUp on patterns: towards +inf. Positive magnitudes grow with their pattern, negative
// ones shrink; nothing follows +inf, nor e4m3's 448 (its next pattern is NaN).
std::optional<std::uint64_t> next_up_bits(std::uint64_t bits, DType dtype) {
    const std::uint64_t s = sign_bit(dtype);
    const std::uint64_t mag = bits & (s - 1);
    const bool negative = (bits & s) != 0;
    const FloatFormat& f = float_format(dtype);
    if (mag == 0) return 1; // ±0 -> the smallest positive subnormal
    if (!negative) {
        if (mag < max_magnitude(dtype)) return mag + 1;
        if (mag == max_magnitude(dtype) && f.has_infinity) return inf_magnitude(dtype);
        return std::nullopt; // +inf, or e4m3's max
    }
    if (f.has_infinity && mag == inf_magnitude(dtype)) return s | max_magnitude(dtype);
    return s | (mag - 1); // -min_subnormal -> -0, as IEEE says
}

std::optional<double> neighbour(std::uint64_t bits, DType dtype, bool up) {
    if (classify_bits(bits, dtype) == FloatClass::NaN) return std::nullopt;
    if (up) {
        const auto next = next_up_bits(bits, dtype);
        if (!next) return std::nullopt;
        return decode_bits(*next, dtype);
    }
    // nextDown(v) = -nextUp(-v)
    const auto next = next_up_bits(bits ^ sign_bit(dtype), dtype);
    if (!next) return std::nullopt;
    return -decode_bits(*next, dtype);
}

double spacing(std::uint64_t bits, DType dtype) {
    const FloatClass cls = classify_bits(bits, dtype);
    if (cls == FloatClass::Infinity || cls == FloatClass::NaN)
        return std::numeric_limits<double>::quiet_NaN();
    const FloatFormat& f = float_format(dtype);
    const int emin = 1 - f.exponent_bias;
    const BitFields fields = split_bits(bits, dtype);
    const int e = fields.exponent == 0 ? emin : static_cast<int>(fields.exponent) - f.exponent_bias;
    return std::ldexp(1.0, std::max(e, emin) - f.mantissa_bits);
}

CastOutcome outcome_of(double input, std::uint64_t bits, DType dtype) {
    const FloatClass cls = classify_bits(bits, dtype);
    if (std::isfinite(input) && cls == FloatClass::Infinity) return CastOutcome::OverflowToInf;
    if (std::isfinite(input) && cls == FloatClass::NaN) return CastOutcome::OverflowToNaN;
    if (input != 0 && !std::isnan(input) && cls == FloatClass::Zero)
        return CastOutcome::UnderflowToZero;
    switch (cls) {
    case FloatClass::Zero:
        return CastOutcome::Zero;
    case FloatClass::Subnormal:
        return CastOutcome::Subnormal;
    case FloatClass::Normal:
        return CastOutcome::Normal;
    case FloatClass::Infinity:
        return CastOutcome::Infinity;
    case FloatClass::NaN:
        break;
    }
    return CastOutcome::NaN;
}

FloatInspection make_inspection(double input, std::uint64_t bits, DType dtype) {
    FloatInspection r;
    r.dtype = dtype;
    r.input = input;
    r.bits = bits & width_mask(dtype);
    r.fields = split_bits(r.bits, dtype);
    r.stored = decode_bits(r.bits, dtype);
    r.outcome = outcome_of(input, r.bits, dtype);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if (!std::isfinite(input)) { // inf -> inf is exact; NaN, or inf -> NaN (e4m3), is not a number
        r.abs_error = r.rel_error = input == r.stored ? 0 : nan;
    } else if (input == r.stored) {
        r.abs_error = r.rel_error = 0;
    } else if (!std::isfinite(r.stored)) { // overflow: unbounded error
        r.abs_error = r.rel_error = std::numeric_limits<double>::infinity();
    } else {
        r.abs_error = std::fabs(r.stored - input);
        r.rel_error = r.abs_error / std::fabs(input);
    }
    r.ulp = spacing(r.bits, dtype);
    r.below = neighbour(r.bits, dtype, false);
    r.above = neighbour(r.bits, dtype, true);
    return r;
}

} // namespace

const char* cast_outcome_name(CastOutcome outcome) {
    switch (outcome) {
    case CastOutcome::Zero:
        return "zero";
    case CastOutcome::Subnormal:
        return "subnormal";
    case CastOutcome::Normal:
        return "normal";
    case CastOutcome::Infinity:
        return "inf";
    case CastOutcome::NaN:
        return "nan";
    case CastOutcome::OverflowToInf:
        return "overflow_to_inf";
    case CastOutcome::OverflowToNaN:
        return "overflow_to_nan";
    case CastOutcome::UnderflowToZero:
        return "underflow_to_zero";
    }
    return "?";
}

const char* cast_outcome_label(CastOutcome outcome) {
    switch (outcome) {
    case CastOutcome::OverflowToInf:
        return "overflow→inf";
    case CastOutcome::OverflowToNaN:
        return "overflow→nan";
    case CastOutcome::UnderflowToZero:
        return "underflow→0";
    default:
        return cast_outcome_name(outcome);
    }
}

bool is_overflow(CastOutcome outcome) {
    return outcome == CastOutcome::OverflowToInf || outcome == CastOutcome::OverflowToNaN;
}

FloatInspection inspect_value(double value, DType dtype) {
    return make_inspection(value, encode_bits(value, dtype), dtype);
}

FloatInspection inspect_bits(std::uint64_t bits, DType dtype) {
    bits &= width_mask(dtype);
    return make_inspection(decode_bits(bits, dtype), bits, dtype);
}

int bit_width(DType dtype) {
    const FloatFormat& f = float_format(dtype); // throws for non-floating dtypes
    return 1 + f.exponent_bits + f.mantissa_bits;
}

std::uint64_t toggle_bit(std::uint64_t bits, int index, DType dtype) {
    const int width = bit_width(dtype);
    if (index < 0 || index >= width)
        throw Error(ErrorKind::InvalidArgument, "bit " + std::to_string(index) + " is outside " +
                                                    std::string(dtype_name(dtype)) + " (bits 0.." +
                                                    std::to_string(width - 1) + ")");
    return (bits & width_mask(dtype)) ^ (1ull << index);
}

std::string bit_string(std::uint64_t bits, DType dtype) {
    const FloatFormat& f = float_format(dtype);
    const BitFields s = split_bits(bits, dtype);
    std::string out = std::to_string(s.sign) + "|";
    for (int i = f.exponent_bits - 1; i >= 0; --i) out += ((s.exponent >> i) & 1) ? '1' : '0';
    out += '|';
    for (int i = f.mantissa_bits - 1; i >= 0; --i) out += ((s.mantissa >> i) & 1) ? '1' : '0';
    return out;
}

const char* arith_op_symbol(ArithOp op) {
    switch (op) {
    case ArithOp::Square:
        return "x²";
    case ArithOp::Add:
        return "x + y";
    case ArithOp::Multiply:
        return "x · y";
    }
    return "?";
}

ArithmeticResult compute_in(ArithOp op, double x, double y, DType dtype) {
    auto apply = [op](double a, double b) {
        switch (op) {
        case ArithOp::Square:
            return a * a;
        case ArithOp::Add:
            return a + b;
        case ArithOp::Multiply:
            return a * b;
        }
        return std::numeric_limits<double>::quiet_NaN();
    };
    if (op == ArithOp::Square) y = x;
    ArithmeticResult r;
    r.dtype = dtype;
    r.op = op;
    r.x = round_to_dtype(x, dtype);
    r.y = round_to_dtype(y, dtype);
    r.exact = apply(x, y);
    r.result = inspect_value(apply(r.x, r.y), dtype);
    r.overflow = std::isfinite(x) && std::isfinite(y) && !std::isfinite(r.result.stored);
    r.underflow = r.exact != 0 && !std::isnan(r.exact) && r.result.stored == 0;
    return r;
}

} // namespace mantissa
