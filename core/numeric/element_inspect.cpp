// Element inspection: classifies what one rounding to an element format did, from the code and the
// input alone (the codec itself is element_format.h's).
#include "core/numeric/element_inspect.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>

namespace mantissa {

namespace {

ElementOutcome outcome_of(double input, std::uint32_t code, double stored, ElementFormat format) {
    const ElementSpec& s = element_spec(format);
    if (format == ElementFormat::E8M0) {
        if (std::isnan(stored))
            return !std::isnan(input) && std::signbit(input) && input != 0
                       ? ElementOutcome::NegativeToNaN
                       : ElementOutcome::NaN;
        // Below 1.5 * 2^-128 the nearest power of two would be smaller than 2^-127.
        if (code == 0 && input < s.min_subnormal * 0.75) return ElementOutcome::ClampedToMin;
        if (code == 0xFE && input > s.max_finite) return ElementOutcome::Saturated;
        return ElementOutcome::Normal;
    }
    if (std::isnan(input))
        return std::isnan(stored) ? ElementOutcome::NaN : ElementOutcome::NaNToZero;
    if (std::fabs(input) > s.max_finite && std::fabs(stored) == s.max_finite)
        return ElementOutcome::Saturated;
    if (std::isinf(stored)) return ElementOutcome::Infinity;
    if (stored == 0) return input == 0 ? ElementOutcome::Zero : ElementOutcome::UnderflowToZero;
    return std::fabs(stored) < s.min_normal ? ElementOutcome::Subnormal : ElementOutcome::Normal;
}

} // namespace

const char* element_outcome_name(ElementOutcome outcome) {
    switch (outcome) {
    case ElementOutcome::Zero:
        return "zero";
    case ElementOutcome::Subnormal:
        return "subnormal";
    case ElementOutcome::Normal:
        return "normal";
    case ElementOutcome::Infinity:
        return "inf";
    case ElementOutcome::NaN:
        return "nan";
    case ElementOutcome::Saturated:
        return "saturated";
    case ElementOutcome::UnderflowToZero:
        return "underflow_to_zero";
    case ElementOutcome::NaNToZero:
        return "nan_to_zero";
    case ElementOutcome::ClampedToMin:
        return "clamped_to_min";
    case ElementOutcome::NegativeToNaN:
        return "negative_to_nan";
    }
    return "?";
}

const char* element_outcome_label(ElementOutcome outcome) {
    switch (outcome) {
    case ElementOutcome::Saturated:
        return "saturated→max";
    case ElementOutcome::UnderflowToZero:
        return "underflow→0";
    case ElementOutcome::NaNToZero:
        return "nan→0 (no NaN)";
    case ElementOutcome::ClampedToMin:
        return "clamped→2^-127 (no zero)";
    case ElementOutcome::NegativeToNaN:
        return "negative→nan (no sign)";
    default:
        return element_outcome_name(outcome);
    }
}

ElementInspection inspect_element(double value, ElementFormat format) {
    ElementInspection r;
    r.format = format;
    r.input = value;
    r.code = encode_element(value, format);
    r.stored = decode_element(r.code, format);
    r.outcome = outcome_of(value, r.code, r.stored, format);
    if (std::isnan(value) || std::isnan(r.stored)) {
        r.abs_error = r.rel_error = std::numeric_limits<double>::quiet_NaN();
    } else if (value == r.stored) {
        r.abs_error = r.rel_error = 0;
    } else {
        r.abs_error = std::fabs(r.stored - value);
        r.rel_error =
            value == 0 ? std::numeric_limits<double>::infinity() : r.abs_error / std::fabs(value);
    }
    return r;
}

std::string element_bit_string(std::uint32_t code, ElementFormat format) {
    const ElementSpec& s = element_spec(format);
    std::string out;
    int bit = s.width - 1;
    if (s.has_sign) {
        out += ((code >> bit) & 1u) ? "1|" : "0|";
        --bit;
    }
    for (int i = 0; i < s.exponent_bits; ++i, --bit) out += ((code >> bit) & 1u) ? '1' : '0';
    if (s.mantissa_bits > 0) out += '|';
    for (int i = 0; i < s.mantissa_bits; ++i, --bit) out += ((code >> bit) & 1u) ? '1' : '0';
    return out;
}

std::string element_hex_string(std::uint32_t code, ElementFormat format) {
    const int digits = (element_spec(format).width + 3) / 4;
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%0*" PRIX32, digits, code);
    return buf;
}

} // namespace mantissa
