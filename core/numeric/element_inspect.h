// One value rounded to one element format (float6/float4/e8m0 and the saturating float8 codecs),
// for `mantissa-cli cast` and the Float Lab: stored value, code, error and what happened.
#pragma once

#include <cstdint>
#include <string>

#include "core/numeric/element_format.h"

namespace mantissa {

// What rounding to an element format did. Beyond the DType classes (zero, subnormal, normal, inf,
// nan) these formats saturate instead of overflowing, FP6/FP4 have no NaN, and E8M0 has neither
// zero nor sign.
enum class ElementOutcome {
    Zero,
    Subnormal,
    Normal,
    Infinity,
    NaN,
    Saturated,       // |value| (finite or inf) beyond max_finite: stored as ±max
    UnderflowToZero, // non-zero, rounded to ±0
    NaNToZero,       // NaN into FP6/FP4, which have no NaN encoding: +0
    ClampedToMin,    // E8M0: zero or below 2^-127 (it has no zero): 2^-127
    NegativeToNaN,   // E8M0: a negative value (it has no sign): NaN
};
const char* element_outcome_name(ElementOutcome outcome);  // "saturated" (JSON, machine)
const char* element_outcome_label(ElementOutcome outcome); // "saturated→max" (people; UTF-8)

struct ElementInspection {
    ElementFormat format = ElementFormat::Float8E4M3;
    double input = 0;
    std::uint32_t code = 0; // in the low `width` bits
    double stored = 0;      // the exact value of `code`
    ElementOutcome outcome = ElementOutcome::Zero;
    double abs_error = 0; // |stored - input|; NaN when either is NaN, inf for inf -> max
    double rel_error = 0; // abs_error / |input| (0 for an exact 0)
};

// `value` rounded to nearest even with saturation (encode_element).
ElementInspection inspect_element(double value, ElementFormat format);

// "0|10|1": sign | exponent | mantissa, most significant first (E8M0: the 8 exponent bits).
std::string element_bit_string(std::uint32_t code, ElementFormat format);
// "0x7", "0x1F", "0x7E": one hex digit per 4 bits of the width.
std::string element_hex_string(std::uint32_t code, ElementFormat format);

} // namespace mantissa
