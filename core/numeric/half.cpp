// Compile-time checks of the inline 16-bit conversions in half.h, at the edges that matter most.
// The functions live in the header so hot loops inline them; a broken edit fails the build here.
#include "core/numeric/half.h"

namespace mantissa {
namespace {

// float16: max finite, the overflow threshold (65520 ties to even = inf), the subnormal edges.
static_assert(float_to_half_bits(65504.0f) == 0x7BFF);
static_assert(float_to_half_bits(65519.99f) == 0x7BFF);
static_assert(float_to_half_bits(65520.0f) == 0x7C00);
static_assert(float_to_half_bits(-65520.0f) == 0xFC00);
static_assert(float_to_half_bits(256.0f * 256.0f) == 0x7C00); // the Keras guide's overflow
static_assert(float_to_half_bits(0x1p-24f) == 0x0001);        // min subnormal
static_assert(float_to_half_bits(0x1p-25f) == 0x0000);        // half of it: tie to even -> 0
static_assert(float_to_half_bits(0x1.000002p-25f) == 0x0001); // just above half -> min subnormal
static_assert(float_to_half_bits(0x1.8p-24f) == 0x0002);      // 1.5 quanta: tie to even -> 2
static_assert(float_to_half_bits(0x1p-14f) == 0x0400);        // min normal
static_assert(float_to_half_bits(1e-10f) == 0x0000);
static_assert(float_to_half_bits(-0.0f) == 0x8000);
static_assert(float_to_half_bits(1.0f + 0x1p-11f) == 0x3C00);   // tie between 1 and 1+eps -> 1
static_assert(float_to_half_bits(1.0f + 0x1.8p-10f) == 0x3C02); // tie -> even (2)
static_assert(half_bits_to_float(0x7BFF) == 65504.0f);
static_assert(half_bits_to_float(0x0001) == 0x1p-24f);
static_assert(half_bits_to_float(0x03FF) == 0x1.ff8p-15f);
static_assert(half_bits_to_float(0x3C00) == 1.0f);
static_assert(half_bits_to_float(0xC000) == -2.0f);

// bfloat16: float32's range, 8 significant bits.
static_assert(float_to_bfloat16_bits(1.0f) == 0x3F80);
static_assert(float_to_bfloat16_bits(1.0f + 0x1p-8f) == 0x3F80);   // tie -> even
static_assert(float_to_bfloat16_bits(1.0f + 0x1.8p-7f) == 0x3F82); // tie -> even
static_assert(float_to_bfloat16_bits(0x1.fffffep127f) == 0x7F80);  // float32 max -> inf
static_assert(float_to_bfloat16_bits(-0.0f) == 0x8000);
static_assert(bfloat16_bits_to_float(0x4380) == 256.0f);

} // namespace
} // namespace mantissa
