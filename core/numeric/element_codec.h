// The element codecs specialised at compile time for the quantiser's hot loops: the format's
// layout becomes constants (no per-element switch), and decoding is a table of the format's
// values. Same arithmetic as encode_element / decode_element (element_format.h), which stay the
// spec; tst_block_quant checks these against them over every code and a sweep of values.
// The rounding functions (round_to_element, round_bits, round_to_code) are MANTISSA_HD: the CUDA
// engine's per-tensor FP8 and MX kernels run this very code (integer operations on the value's
// bits, no float64 division), so both engines share one definition.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>

#include "core/host_device.h"
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

// The value (not the code) nearest to the float32 `x`, ties to even, saturating at ±max: the
// same rounding as encode_nearest<F> followed by decoding, on float32 bits with integer
// operations only (no FPU rounding mode). `x` must not be NaN or infinite. Both ranges are
// computed and one is selected, with no branch, so a loop over it vectorises.
template <ElementFormat F>
MANTISSA_HD inline float round_to_element(float x) {
    constexpr element_detail::Layout l = element_detail::layout(F);
    constexpr int m = l.mantissa_bits;
    constexpr std::uint32_t emin_biased = static_cast<std::uint32_t>(1 - l.bias + 127);
    constexpr std::uint32_t max_bits =
        std::bit_cast<std::uint32_t>(static_cast<float>(kValues<F>[l.max_mag]));
    constexpr float quantum = static_cast<float>(kValues<F>[1]); // 2^(emin - m)
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
    const std::uint32_t a = bits & 0x7FFFFFFFu;
    const std::uint32_t e = a >> 23;
    // The format's normal range: drop 23 - m bits; a carry moves the binade.
    constexpr int s = 23 - m;
    const std::uint32_t normal =
        std::min((a + ((1u << (s - 1)) - 1) + ((a >> s) & 1u)) & ~((1u << s) - 1), max_bits);
    // Its subnormals: n quanta, n <= 2^m (2^m is the smallest normal), exact as a float. A shift
    // past 31 is clamped: the significand is below 2^24 <= half of 2^31, so n rounds to 0 alike.
    // For a normal x the (unsigned) difference wraps and `sub` is discarded below, but the shift
    // must still stay in [1, 31]: shifting by 32 or more is undefined even when unused.
    const std::uint32_t mant = (a & 0x7FFFFFu) | (static_cast<std::uint32_t>(e != 0) << 23);
    const std::uint32_t shift =
        std::max(std::min(23 - m + (emin_biased - std::max(e, 1u)), 31u), 1u);
    // Nearest even from the first dropped bit and whether any below it is set (shifts of the
    // value, not of a constant: GCC does not vectorise a mask built as (1 << shift) - 1).
    const std::uint32_t t = mant >> (shift - 1);
    const auto sticky = static_cast<std::uint32_t>((t << (shift - 1)) != mant);
    std::uint32_t n = t >> 1;
    n += t & (sticky | n) & 1u;
    const std::uint32_t sub = std::bit_cast<std::uint32_t>(static_cast<float>(n) * quantum);
    const std::uint32_t r = e >= emin_biased ? normal : sub;
    return std::bit_cast<float>(r | (bits & 0x80000000u));
}

// The rounding of a finite float64 `x` to F that round_to_element(double) and round_to_code share:
// the rounded bits in F's normal range (saturated at ±max), the count of quanta in its subnormal
// range (2^m of them is the smallest normal), and which of the two applies.
struct Rounded64 {
    std::uint64_t normal = 0; // |x| rounded to m mantissa bits, as float64 bits
    std::uint64_t quanta = 0; // |x| / quantum, rounded to nearest even
    bool in_normal_range = false;
};
template <ElementFormat F>
MANTISSA_HD inline Rounded64 round_bits(double x) {
    constexpr element_detail::Layout l = element_detail::layout(F);
    constexpr int m = l.mantissa_bits;
    constexpr std::uint64_t emin_biased = static_cast<std::uint64_t>(1 - l.bias + 1023);
    constexpr std::uint64_t max_bits = std::bit_cast<std::uint64_t>(kValues<F>[l.max_mag]);
    const std::uint64_t a = std::bit_cast<std::uint64_t>(x) & 0x7FFFFFFFFFFFFFFFull;
    const std::uint64_t e = a >> 52;
    constexpr int s = 52 - m;
    Rounded64 r;
    r.normal = std::min<std::uint64_t>(
        (a + ((1ull << (s - 1)) - 1) + ((a >> s) & 1u)) & ~((1ull << s) - 1), max_bits);
    const std::uint64_t mant =
        (a & ((1ull << 52) - 1)) | (static_cast<std::uint64_t>(e != 0) << 52);
    // A shift past 63 is clamped: the significand is below 2^53 <= half of 2^63.
    const std::uint64_t shift = std::max<std::uint64_t>(
        std::min<std::uint64_t>(52 - m + (emin_biased - std::max<std::uint64_t>(e, 1)), 63), 1);
    const std::uint64_t t = mant >> (shift - 1); // as in the float32 version above
    const auto sticky = static_cast<std::uint64_t>((t << (shift - 1)) != mant);
    std::uint64_t n = t >> 1;
    n += t & (sticky | n) & 1u;
    r.quanta = n;
    r.in_normal_range = e >= emin_biased;
    return r;
}

// The same on a float64 `x` (a float32 times a float32 scale, exact in float64: per-tensor FP8),
// returning the element's exact value. `x` must not be NaN or infinite.
template <ElementFormat F>
MANTISSA_HD inline double round_to_element(double x) {
    constexpr double quantum = kValues<F>[1];
    const Rounded64 r = round_bits<F>(x);
    const std::uint64_t sub = std::bit_cast<std::uint64_t>(static_cast<double>(r.quanta) * quantum);
    const std::uint64_t v = r.in_normal_range ? r.normal : sub;
    return std::bit_cast<double>(v | (std::bit_cast<std::uint64_t>(x) & 0x8000000000000000ull));
}

// encode_nearest<F>(x) for a finite `x`, on the same rounding: the code of the value
// round_to_element returns (per-tensor FP8 into codes for the FP8 GEMM). The normal range reads
// the exponent and the kept mantissa bits off the rounded float64; the subnormal range is the
// count of quanta (2^m of them is code 1 << m, the smallest normal, as it should be).
template <ElementFormat F>
MANTISSA_HD inline std::uint32_t round_to_code(double x) {
    constexpr element_detail::Layout l = element_detail::layout(F);
    constexpr int m = l.mantissa_bits;
    constexpr std::uint64_t emin_biased = static_cast<std::uint64_t>(1 - l.bias + 1023);
    const Rounded64 r = round_bits<F>(x);
    // The element's biased exponent is the float64's less (emin_biased - 1).
    const std::uint64_t normal_code = (((r.normal >> 52) - (emin_biased - 1)) << m) |
                                      ((r.normal >> (52 - m)) & ((1ull << m) - 1));
    const std::uint64_t mag = r.in_normal_range ? normal_code : r.quanta;
    return static_cast<std::uint32_t>(mag) |
           (static_cast<std::uint32_t>(std::bit_cast<std::uint64_t>(x) >> 63) << (l.width - 1));
}

// round_to_code<F>(v · scale) for finite float32 v and scale, with 32-bit operations only (the
// CUDA engine's per-tensor FP8 kernels: a GPU emulates 64-bit integer arithmetic, which made the
// float64 route compute-bound). The exact product is hi + lo: hi = fl(v · scale) and lo its
// rounding error (fma, exact while hi is a normal float32). No rounding boundary of F (a
// midpoint between two of its values, itself a float32) lies strictly between the product and
// hi, so rounding hi gives the product's code, except when hi *is* a midpoint: then lo's sign,
// relative to hi's, says which way the product lies, and only lo == 0 is a true tie (to even).
// A product beyond float32's range saturates, as it would in float64; one below float32's
// normals lies far under F's smallest subnormal and rounds to a signed zero either way.
template <ElementFormat F>
MANTISSA_HD inline std::uint32_t round_product_to_code(float v, float scale) {
    constexpr element_detail::Layout l = element_detail::layout(F);
    constexpr int m = l.mantissa_bits;
    constexpr std::uint32_t emin_biased = static_cast<std::uint32_t>(1 - l.bias + 127);
    constexpr std::uint32_t max_bits =
        std::bit_cast<std::uint32_t>(static_cast<float>(kValues<F>[l.max_mag]));
    constexpr float inv_quantum = static_cast<float>(1.0 / kValues<F>[1]); // 2^(m - emin)
    constexpr int s = 23 - m;
    constexpr std::uint32_t half = 1u << (s - 1), low_mask = (1u << s) - 1;
    const float hi = v * scale;
    const float lo = std::fma(v, scale, -hi);
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(hi);
    const std::uint32_t a = bits & 0x7FFFFFFFu;
    const std::uint32_t sign = (bits >> 31) << (l.width - 1);
    if (a >= 0x7F800000u) return sign | l.max_mag; // beyond float32: saturated
    // Which way the exact product lies from hi, in magnitude: +1 above, -1 below, 0 on it.
    const int away = lo == 0 ? 0 : ((lo > 0) == (bits >> 31 == 0) ? 1 : -1);
    std::uint32_t mag;
    if ((a >> 23) >= emin_biased) {
        const std::uint32_t rest = a & low_mask;
        std::uint32_t r = a & ~low_mask; // truncated to m mantissa bits
        const bool up =
            rest > half || (rest == half && (away > 0 || (away == 0 && ((a >> s) & 1u))));
        if (up) r += 1u << s; // a carry moves the binade
        r = r < max_bits ? r : max_bits;
        mag = (((r >> 23) - (emin_biased - 1)) << m) | ((r >> s) & ((1u << m) - 1));
    } else {
        // Quanta of 2^(emin - m): |hi| times a power of two is exact; 2^m quanta is code 1 << m.
        const float q = std::bit_cast<float>(a) * inv_quantum;
        const auto whole = static_cast<std::uint32_t>(q); // truncates
        const float rest = q - static_cast<float>(whole); // exact: q < 2^(m+1)
        const bool up = rest > 0.5f || (rest == 0.5f && (away > 0 || (away == 0 && (whole & 1u))));
        mag = whole + (up ? 1u : 0u);
    }
    return sign | mag;
}

// The float32 that v · scale rounds to *odd*: the exact product truncated to 24 bits, its last
// bit set when anything was cut off (hi + lo as in round_product_to_code; ±inf when the product
// leaves float32's range). Rounding it to nearest in a format of at most 22 bits gives the
// exact product's rounding (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums:
// proved algorithms using rounding to odd", IEEE TC 2008), so the CUDA engine hands it to the
// hardware's float32 -> FP8 conversion: one instruction instead of the integer rounding.
MANTISSA_HD inline float product_round_to_odd(float v, float scale) {
    const float hi = v * scale;
    const float lo = std::fma(v, scale, -hi);
    std::uint32_t bits = std::bit_cast<std::uint32_t>(hi);
    if ((bits & 0x7FFFFFFFu) >= 0x7F800000u) return hi; // overflowed: the caller saturates
    if (lo != 0) {
        // |v · scale| below |hi|: truncating takes hi one step down in magnitude (hi != 0, as
        // the product is then smaller than a non-zero hi). Then the sticky bit.
        if ((lo > 0) != ((bits >> 31) == 0)) bits -= 1;
        bits |= 1u;
    }
    return std::bit_cast<float>(bits);
}

// decode_element(code, F) as a float32, from the code's bits (a finite FP8 code: every one is a
// normal float32): the CUDA kernels' decoding, which may not index the host's table.
template <ElementFormat F>
MANTISSA_HD inline float decode_code(std::uint32_t code) {
    constexpr element_detail::Layout l = element_detail::layout(F);
    constexpr int m = l.mantissa_bits;
    const std::uint32_t sign = (code >> (l.width - 1)) & 1u;
    const std::uint32_t mag = code & ((1u << (l.width - 1)) - 1);
    const std::uint32_t e = mag >> m, f = mag & ((1u << m) - 1);
    const std::uint32_t significand = e == 0 ? f : f | (1u << m);
    const int exponent = (e == 0 ? 1 : static_cast<int>(e)) - l.bias - m; // of the last bit
    const float pow2 = std::bit_cast<float>(static_cast<std::uint32_t>(exponent + 127) << 23);
    const float v = static_cast<float>(significand) * pow2; // exact: a few bits
    return std::bit_cast<float>(std::bit_cast<std::uint32_t>(v) | (sign << 31));
}

// The magnitude code encode_stochastic<F>(q, random) gives a finite q (its sign aside), without
// a branch: the same bit arithmetic as encode_signed's stochastic case, with shifts past 63
// clamped (the significand is below 2^53, so they give 0 as the exact shift would).
template <ElementFormat F>
MANTISSA_HD inline std::uint32_t stochastic_magnitude(double q, std::uint32_t random) {
    constexpr element_detail::Layout l = element_detail::layout(F);
    constexpr int m = l.mantissa_bits;
    constexpr std::int64_t emin = 1 - l.bias;
    const std::uint64_t a = std::bit_cast<std::uint64_t>(q) & 0x7FFFFFFFFFFFFFFFull;
    const std::uint64_t biased = a >> 52;
    const std::uint64_t M = (a & ((1ull << 52) - 1)) | (biased ? (1ull << 52) : 0ull);
    const std::int64_t e = biased ? static_cast<std::int64_t>(biased) - 1023 : -1022;
    const std::uint64_t s = static_cast<std::uint64_t>(52 - m + (e < emin ? emin - e : 0));
    const std::uint64_t top = M >> (s - 32 < 63 ? s - 32 : 63);
    std::uint64_t n = M >> (s < 63 ? s : 63);
    n += ((top & 0xFFFFFFFFull) + random) >> 32;
    const std::uint64_t mag = e >= emin ? (static_cast<std::uint64_t>(e + l.bias - 1) << m) + n : n;
    return static_cast<std::uint32_t>(mag < l.max_mag ? mag : l.max_mag);
}

// stochastic_magnitude<F>(q, random) in 32-bit integer operations on q's two halves, for the
// formats with at most 3 mantissa bits (every MX and NVFP4 element format): the CUDA kernels'
// form, where each 64-bit shift and add of the general one costs several instructions.
// tst_block_quant checks the two agree over codes, midpoints, subnormals and random values.
template <ElementFormat F>
MANTISSA_HD inline std::uint32_t stochastic_magnitude_halves(double q, std::uint32_t random) {
    constexpr element_detail::Layout l = element_detail::layout(F);
    constexpr int m = l.mantissa_bits;
    static_assert(m <= 3, "stochastic_magnitude_halves: at most 3 mantissa bits");
    constexpr int emin = 1 - l.bias;
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(q);
    const auto high = static_cast<std::uint32_t>(bits >> 32) & 0x7FFFFFFFu;
    const auto low = static_cast<std::uint32_t>(bits);
    const std::uint32_t biased = high >> 20;
    // The significand M is top:low, top its 21 high bits (the implicit one included).
    const std::uint32_t top = (high & 0xFFFFFu) | (biased ? 0x100000u : 0u);
    const int e = biased ? static_cast<int>(biased) - 1023 : -1022;
    // stochastic_magnitude drops s = 52 - m (+ emin - e below the normals) bits of M and reads
    // the 32 below the kept ones from bit sh = s - 32 on: at least 17 here.
    const int sh = 20 - m + (e < emin ? emin - e : 0);
    std::uint32_t fraction = 0, n = 0;
    if (sh < 32) {
        fraction = (low >> sh) | (top << (32 - sh));
        n = top >> sh;
    } else if (sh < 53) {
        fraction = top >> (sh - 32);
    }
    n += fraction + random < fraction ? 1u : 0u; // the carry out of fraction + random
    const std::uint32_t mag = e >= emin ? (static_cast<std::uint32_t>(e + l.bias - 1) << m) + n : n;
    return mag < l.max_mag ? mag : l.max_mag;
}

} // namespace mantissa::element_codec
