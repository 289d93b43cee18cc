// Float inspection for the Float Lab and `mantissa-cli cast`: what one value becomes in one format
// (bits, stored value, error, ULP, neighbours, outcome) and one scalar op computed in a format.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/numeric/dtype.h"
#include "core/numeric/float_format.h"

namespace mantissa {

// What rounding a value to a format did: the stored pattern's class, or what went wrong on the way
// (a finite value that became inf/NaN, a non-zero value that became zero).
enum class CastOutcome {
    Zero,
    Subnormal,
    Normal,
    Infinity,
    NaN,
    OverflowToInf,   // finite, too large: ±inf
    OverflowToNaN,   // finite, too large for float8_e4m3, which has no infinity
    UnderflowToZero, // non-zero, below half the smallest subnormal: ±0
};
const char* cast_outcome_name(CastOutcome outcome);  // "overflow_to_inf" (JSON, machine)
const char* cast_outcome_label(CastOutcome outcome); // "overflow→inf" (people; UTF-8)
bool is_overflow(CastOutcome outcome);               // OverflowToInf or OverflowToNaN

// One value rounded once (nearest, ties to even; IEEE overflow) to one format.
struct FloatInspection {
    DType dtype = DType::Float32;
    double input = 0;       // the value before rounding (float64)
    std::uint64_t bits = 0; // the stored pattern, in the low bit_width(dtype) bits
    BitFields fields{};     // sign | exponent | mantissa of `bits`
    double stored = 0;      // the exact value of `bits`
    CastOutcome outcome = CastOutcome::Zero;
    double abs_error = 0; // |stored - input|: 0 when exact, inf on overflow, NaN for NaN input
    double rel_error = 0; // abs_error / |input| (0 for an exact 0; 1 for an underflow to zero)
    // The spacing of the format at `stored`: 2^(max(E, emin) - mantissa_bits), E the unbiased
    // exponent, i.e. the distance to the next value of larger magnitude (numpy.spacing); at 1.0 it
    // is the format's epsilon. NaN for inf and NaN.
    double ulp = 0;
    // The representable values next to `stored` (IEEE nextDown / nextUp): ±inf where the format
    // has infinities, nothing past ±448 in e4m3 or past ±inf, nothing for NaN.
    std::optional<double> below, above;
};

// `value` rounded to `dtype`.
FloatInspection inspect_value(double value, DType dtype);
// A pattern as it is (no rounding: input = stored, error 0); the bits above the width are ignored.
FloatInspection inspect_bits(std::uint64_t bits, DType dtype);

int bit_width(DType dtype); // 64, 32, 16, 16, 8, 8
// `bits` with bit `index` flipped (0 = the least significant mantissa bit, width - 1 = the sign).
// Throws Error(InvalidArgument) for an index outside the format.
std::uint64_t toggle_bit(std::uint64_t bits, int index, DType dtype);
// "0|01111|0000000000": sign | exponent | mantissa, most significant first.
std::string bit_string(std::uint64_t bits, DType dtype);

// The Float Lab's arithmetic row: x², x + y and x · y "in" a dtype. The inputs are rounded to the
// dtype first, the operation is then done exactly (in float64: exact for the products of these
// formats' significands; for sums float64's rounding is innocuous, Figueroa 1995) and the result is
// rounded once to the dtype. For one operation this is the same as the engine's elementwise
// contract (compute in float32, round to the compute dtype), because float32 carries more than
// 2p + 1 bits for every narrower format (tested in tst_float_inspect).
enum class ArithOp { Square, Add, Multiply };
const char* arith_op_symbol(ArithOp op); // "x²", "x + y", "x · y"

struct ArithmeticResult {
    DType dtype = DType::Float32;
    ArithOp op = ArithOp::Square;
    double x = 0, y = 0;    // the inputs after rounding to the dtype
    double exact = 0;       // the operation on the original inputs, in float64
    FloatInspection result; // the value the dtype stores (input = the op on the rounded inputs)
    bool overflow = false;  // finite inputs, non-finite result
    bool underflow = false; // the exact result is not zero, the stored one is
};

// y is ignored for Square.
ArithmeticResult compute_in(ArithOp op, double x, double y, DType dtype);

} // namespace mantissa
