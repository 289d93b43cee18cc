// The element and scale formats of block-scaled (microscaling) quantisation: OCP FP8 (E4M3, E5M2),
// OCP MX FP6 (E3M2, E2M3), FP4 (E2M1) and the E8M0 scale. One code per byte (unpacked).
//
// Sources (cited, not copied):
// - OCP 8-bit Floating Point Specification (OFP8) rev 1.0, §5.1 (the E4M3 / E5M2 encodings: E4M3
//   has no infinity and one NaN magnitude S.1111.111, so its max is 448; E5M2 is IEEE-like, max
//   57344) and §5.2 / §5.2.1 (conversion: roundTiesToEven, saturating or non-saturating mode).
// - OCP Microscaling Formats (MX) v1.0, §5.3.1 (FP8 elements are OFP8), §5.3.2 (FP6 E3M2 bias 3,
//   max 28; E2M3 bias 1, max 7.5), §5.3.3 (FP4 E2M1 bias 1: 0, 0.5, 1, 1.5, 2, 3, 4, 6): FP6 and
//   FP4 have no Inf or NaN encodings, so out-of-range values saturate to ±max; §5.4.1 (E8M0: an
//   unsigned exponent, 2^(e-127) for e = 0..254, 0xFF the only NaN, no zero, no infinity).
//
// The DType float8 formats (float_format.h) are the engine's storage types with IEEE overflow; the
// ElementFormat codecs here are the quantiser's: they saturate by default, take a stochastic
// rounding variant, and cover the formats narrower than a byte. For FP8 both agree bit for bit
// (tested over every code and a sweep of values in tst_block_quant).
//
// Everything below the declarations is inline and constexpr on integers only (no FPU rounding
// mode, no allocation) and MANTISSA_HD, so span loops inline it and the CUDA kernels
// (core/backend/cuda/fake_quantize.cu) run the same definitions.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/hd_bits.h"
#include "core/host_device.h"
#include "core/numeric/float_format.h"

namespace mantissa {

enum class ElementFormat : std::uint8_t {
    Float8E4M3, // OFP8 E4M3 ("e4m3fn")
    Float8E5M2, // OFP8 E5M2
    Float6E3M2, // MX FP6 E3M2
    Float6E2M3, // MX FP6 E2M3
    Float4E2M1, // MX FP4 E2M1
    E8M0,       // MX scale: unsigned power of two
};

// Static facts about a format, for display and for the block quantiser.
struct ElementSpec {
    ElementFormat format;
    std::string_view name; // "float8_e4m3", ..., "e8m0"
    int width;             // bits in a code: 8, 8, 6, 6, 4, 8
    int exponent_bits;
    int mantissa_bits;
    int exponent_bias;
    bool has_sign; // false only for E8M0
    bool has_infinity;
    bool has_nan;
    double max_finite;
    double min_normal;    // E8M0: 2^-127, its smallest value
    double min_subnormal; // E8M0: 2^-127 too (it has no subnormals)
    int emax;             // floor(log2(max_finite)): 8, 15, 4, 2, 2, 127 (MX §6.3's emax_elem)
};

const ElementSpec& element_spec(ElementFormat format);
std::string_view element_format_name(ElementFormat format);
// Parses "float6_e3m2" (also "fp6_e3m2", "e3m2", ...); throws Error(InvalidArgument) naming
// `field` and listing the valid names.
ElementFormat element_format_from_name(std::string_view name, std::string_view field = "format");
// True (and `out` set) when `name` names an element format; no exception.
bool try_element_format_from_name(std::string_view name, ElementFormat& out);
// Every element format, narrowest exponent last: e4m3, e5m2, e3m2, e2m3, e2m1, e8m0.
const std::vector<ElementFormat>& element_formats();

// ---- The codecs (inline) ----

namespace element_detail {

// What the integer codec needs about a signed mini-float.
struct Layout {
    int width;
    int mantissa_bits;
    int bias;
    std::uint32_t max_mag; // magnitude code of max_finite
    std::uint32_t inf_mag; // magnitude code of +inf, 0 when none
    std::uint32_t nan_mag; // the canonical NaN magnitude, 0 when none
};

MANTISSA_HD constexpr Layout layout(ElementFormat f) {
    switch (f) {
    case ElementFormat::Float8E4M3:
        return {8, 3, 7, 0x7E, 0, 0x7F}; // S.1111.111 is the NaN, so 1.110b * 2^8 = 448 is max
    case ElementFormat::Float8E5M2:
        return {8, 2, 15, 0x7B, 0x7C, 0x7E}; // 0x7E: the quiet NaN encode_bits() gives
    case ElementFormat::Float6E3M2:
        return {6, 2, 3, 0x1F, 0, 0}; // every code finite: 1.11b * 2^4 = 28
    case ElementFormat::Float6E2M3:
        return {6, 3, 1, 0x1F, 0, 0}; // 1.111b * 2^2 = 7.5
    case ElementFormat::Float4E2M1:
        return {4, 1, 1, 0x7, 0, 0}; // 1.1b * 2^2 = 6
    case ElementFormat::E8M0:
        break;
    }
    return {8, 0, 127, 0xFE, 0, 0xFF}; // E8M0 is decoded separately; kept for completeness
}

constexpr std::uint64_t kDoubleInf = 0x7FF0000000000000ull;

// Rounds |value|'s significand at the format's quantum: nearest-even, or stochastic with
// `random` (round up when the discarded fraction, as 32 bits, plus `random` carries past 2^32).
MANTISSA_HD constexpr std::uint32_t encode_signed(double value, const Layout& l, Overflow overflow,
                                                  bool stochastic, std::uint32_t random) {
    const std::uint64_t x = std::bit_cast<std::uint64_t>(value);
    const std::uint32_t sign = static_cast<std::uint32_t>(x >> 63) << (l.width - 1);
    const std::uint64_t a = x & 0x7FFFFFFFFFFFFFFFull;
    // FP6/FP4 have no NaN encoding (MX §5.3.2/§5.3.3): NaN becomes +0; block quantisation never
    // gets here with a NaN, it marks the whole block NaN through its scale instead.
    if (a > kDoubleInf) return l.nan_mag ? sign | l.nan_mag : 0u;
    // Non-saturating mode (OFP8 §5.2.1): ±inf where the format has it, else NaN (E4M3); formats
    // with neither always saturate.
    const std::uint32_t overflowed =
        overflow == Overflow::Ieee ? (l.inf_mag ? l.inf_mag : (l.nan_mag ? l.nan_mag : l.max_mag))
                                   : l.max_mag;
    if (a == kDoubleInf) return sign | overflowed;
    if (a == 0) return sign;

    const int m = l.mantissa_bits;
    const int emin = 1 - l.bias;
    const std::uint64_t biased = a >> 52;
    const std::uint64_t M = (a & ((1ull << 52) - 1)) | (biased ? (1ull << 52) : 0);
    const int e = biased ? static_cast<int>(biased) - 1023 : -1022;
    // The quantum at this magnitude is 2^(max(e, emin) - m): drop s >= 49 bits of M.
    const int s = 52 - m + (e < emin ? emin - e : 0);
    std::uint64_t n = 0;
    if (stochastic) {
        // The top 32 discarded bits as a fraction of the quantum; P(up) = fraction / 2^32, which
        // is the exact position between the neighbours when nothing lies below those 32 bits.
        const std::uint64_t top = s - 32 < 64 ? M >> (s - 32) : 0;
        n = s < 64 ? M >> s : 0;
        n += ((top & 0xFFFFFFFFull) + random) >> 32;
    } else if (s < 64) {
        n = M >> s;
        const std::uint64_t rem = M & ((1ull << s) - 1);
        const std::uint64_t half = 1ull << (s - 1);
        n += (rem > half || (rem == half && (n & 1))) ? 1 : 0;
    }
    // Normal: n in [2^m, 2^(m+1)], so adding it to (field - 1) << m lets a rounding carry reach
    // the next binade; subnormal: n is the fraction and n == 2^m is the smallest normal.
    const std::uint64_t mag = e >= emin ? (static_cast<std::uint64_t>(e + l.bias - 1) << m) + n : n;
    if (mag > l.max_mag) return sign | overflowed;
    return sign | static_cast<std::uint32_t>(mag);
}

MANTISSA_HD constexpr double decode_signed(std::uint32_t code, const Layout& l) {
    const std::uint32_t mag_mask = (1u << (l.width - 1)) - 1;
    const std::uint32_t mag = code & mag_mask;
    const std::uint64_t sign = static_cast<std::uint64_t>((code >> (l.width - 1)) & 1u) << 63;
    if (l.inf_mag && mag == l.inf_mag) return std::bit_cast<double>(sign | kDoubleInf);
    if (l.nan_mag && mag > l.max_mag)
        return std::bit_cast<double>(sign | kDoubleInf | (1ull << 51));
    const int m = l.mantissa_bits;
    const std::uint64_t frac = mag & ((1u << m) - 1);
    const int field = static_cast<int>(mag >> m);
    if (field == 0) { // frac * 2^(emin - m): normalise on frac's top bit p
        if (frac == 0) return std::bit_cast<double>(sign);
        const int p = hd::bit_width(frac) - 1; // not std::bit_width: core/hd_bits.h says why
        const int exp = 1 - l.bias - m + p;
        return std::bit_cast<double>(sign | (static_cast<std::uint64_t>(exp + 1023) << 52) |
                                     ((frac ^ (1ull << p)) << (52 - p)));
    }
    return std::bit_cast<double>(sign | (static_cast<std::uint64_t>(field - l.bias + 1023) << 52) |
                                 (frac << (52 - m)));
}

// E8M0 (MX §5.4.1): nearest power of two. With no stored mantissa bit the bit-level nearest-even
// rule rounds the midpoint 1.5 * 2^k up (as ml_dtypes does). No zero and no sign: ±0 and values
// below 2^-127 clamp to 0x00 (2^-127); negative values, NaN and ±inf give 0xFF (NaN); finite
// values past 2^127 saturate to 0xFE.
MANTISSA_HD constexpr std::uint32_t encode_e8m0(double value) {
    const std::uint64_t x = std::bit_cast<std::uint64_t>(value);
    const std::uint64_t a = x & 0x7FFFFFFFFFFFFFFFull;
    if (a >= kDoubleInf || ((x >> 63) && a != 0)) return 0xFF;
    const std::uint64_t biased = a >> 52;
    if (biased == 0) return 0x00; // zero or a float64 subnormal, far below 2^-127
    const int up = (a & ((1ull << 52) - 1)) >= (1ull << 51) ? 1 : 0;
    const int k = static_cast<int>(biased) - 1023 + up + 127;
    return k < 0 ? 0x00u : (k > 254 ? 0xFEu : static_cast<std::uint32_t>(k));
}

MANTISSA_HD constexpr double decode_e8m0(std::uint32_t code) {
    code &= 0xFFu;
    if (code == 0xFF) return std::bit_cast<double>(kDoubleInf | (1ull << 51));
    return std::bit_cast<double>(static_cast<std::uint64_t>(static_cast<int>(code) - 127 + 1023)
                                 << 52);
}

} // namespace element_detail

// `value` rounded to nearest (ties to even) in `format`, as its code in the low bits. Overflow:
// Saturate (the default, as block quantisation clamps) or Ieee (±inf for E5M2, NaN for E4M3;
// FP6/FP4 have neither and always saturate). E8M0 ignores `overflow` (see encode_e8m0).
MANTISSA_HD constexpr std::uint32_t encode_element(double value, ElementFormat format,
                                                   Overflow overflow = Overflow::Saturate) {
    if (format == ElementFormat::E8M0) return element_detail::encode_e8m0(value);
    return element_detail::encode_signed(value, element_detail::layout(format), overflow, false, 0);
}

// Stochastic rounding: rounds |value| up to the next representable magnitude with probability
// (|value| - lower) / (upper - lower), decided by `random` (uniform over 32 bits), so the same
// random value always gives the same code. Exact in expectation for values that lie on a 2^-32
// sub-grid of the format's quantum. E8M0 rounds to nearest (a scale format is never stochastic).
MANTISSA_HD constexpr std::uint32_t
encode_element_stochastic(double value, ElementFormat format, std::uint32_t random,
                          Overflow overflow = Overflow::Saturate) {
    if (format == ElementFormat::E8M0) return element_detail::encode_e8m0(value);
    return element_detail::encode_signed(value, element_detail::layout(format), overflow, true,
                                         random);
}

// The exact value of a code (every one is a float32 too); bits above the width are ignored.
MANTISSA_HD constexpr double decode_element(std::uint32_t code, ElementFormat format) {
    if (format == ElementFormat::E8M0) return element_detail::decode_e8m0(code);
    const element_detail::Layout l = element_detail::layout(format);
    return element_detail::decode_signed(code & ((1u << l.width) - 1), l);
}

// Span loops (no allocation): dst[i] = code of src[i]; values[i] = decoded code[i].
void encode_elements(const float* src, std::uint8_t* dst, std::size_t count, ElementFormat format,
                     Overflow overflow = Overflow::Saturate);
// random[i] drives element i (see encode_element_stochastic).
void encode_elements_stochastic(const float* src, const std::uint32_t* random, std::uint8_t* dst,
                                std::size_t count, ElementFormat format,
                                Overflow overflow = Overflow::Saturate);
void decode_elements(const std::uint8_t* codes, float* dst, std::size_t count,
                     ElementFormat format);

// A reproducible 32-bit random value for element `index` of a stream seeded with `seed`
// (a counter-based hash: the same (seed, index) always gives the same value, in any order).
MANTISSA_HD constexpr std::uint32_t rounding_random(std::uint64_t seed, std::uint64_t index) {
    // splitmix64's finaliser over seed and index: well mixed, and cheap enough per element.
    std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + index + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return static_cast<std::uint32_t>((z ^ (z >> 31)) >> 32);
}

} // namespace mantissa
