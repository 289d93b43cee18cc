// Fast scalar conversions between float32 and the 16-bit formats, for the CPU engine's hot loops.
// They agree bit for bit with encode_bits()/decode_bits() (tested over every pattern and edge).
#pragma once

#include <bit>
#include <cstdint>

namespace mantissa {

// Defined inline (and constexpr) so that loops over arrays inline them and vectorise: they use
// integer selects only, no branches and no FPU rounding mode, so the result never depends on
// MXCSR or -ffp-contract. NaN payloads are kept (top bits), so every 16-bit pattern round-trips.

// Round to nearest even, IEEE overflow to ±inf (|x| >= 65520 -> inf).
constexpr std::uint16_t float_to_half_bits(float value) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    const std::uint32_t a = x & 0x7FFFFFFFu;

    // Normal range: rebias the exponent (127 -> 15), round away the low 13 bits to nearest even;
    // a carry walks into the exponent, and anything past 0x7BFF becomes inf (0x7C00).
    std::uint32_t normal = a - 0x38000000u;
    normal = (normal + 0xFFFu + ((normal >> 13) & 1u)) >> 13;
    normal = normal < 0x7C00u ? normal : 0x7C00u;

    // Below 2^-14: the result is the integer round(a * 2^24), i.e. the 24-bit significand shifted
    // right by 126 - exponent (kept within 14..31 so that every lane's shifts stay defined).
    const std::uint32_t exponent = a >> 23;
    const std::uint32_t significand = (a & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t d = 126u - exponent; // >= 14 in the lanes that use it
    const std::uint32_t shift = exponent > 112u ? 14u : (d < 31u ? d : 31u);
    // Nearest even by the same add-and-shift as above: half a quantum minus one, plus the kept lsb.
    const std::uint32_t lsb = (significand >> shift) & 1u;
    const std::uint32_t sub = (significand + ((1u << (shift - 1u)) - 1u) + lsb) >> shift;

    // NaN: keep the top 10 payload bits; a payload that vanished becomes the quiet bit.
    const std::uint32_t kept = (a >> 13) & 0x3FFu;
    const std::uint32_t nan = 0x7C00u | kept | (kept == 0 ? 0x200u : 0u);

    const std::uint32_t mag = a > 0x7F800000u ? nan : (a < 0x38800000u ? sub : normal);
    return static_cast<std::uint16_t>(sign | mag);
}

// Exact (every half is a float).
constexpr float half_bits_to_float(std::uint16_t bits) {
    const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
    const std::uint32_t a = bits & 0x7FFFu;
    // Exponent 31 (inf/NaN) must land on 255, so it is rebiased by 0x70000000 rather than
    // 0x38000000.
    const std::uint32_t normal = (a << 13) + (a >= 0x7C00u ? 0x70000000u : 0x38000000u);

    // Subnormal: a * 2^-24 = 1.f * 2^(p - 24) with p the top set bit of a (0..9), found by a
    // branch-free binary search. Integer-only on purpose: GCC will not if-convert (so not
    // vectorise) a float multiply under the default -ftrapping-math.
    std::uint32_t v = a, p = 0, c = 0;
    c = (v >> 8) != 0 ? 8u : 0u, p += c, v >>= c;
    c = (v >> 4) != 0 ? 4u : 0u, p += c, v >>= c;
    c = (v >> 2) != 0 ? 2u : 0u, p += c, v >>= c;
    c = (v >> 1) != 0 ? 1u : 0u, p += c;
    // The implicit bit of (a << (23 - p)) lands in the exponent field and adds the missing 1.
    const std::uint32_t subnormal = a == 0 ? 0u : (a << (23u - p)) + ((p + 102u) << 23);

    return std::bit_cast<float>(sign | (a < 0x400u ? subnormal : normal));
}

// Round to nearest even (bfloat16 is float32's top half, so overflow to inf falls out of the
// carry).
constexpr std::uint16_t float_to_bfloat16_bits(float value) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
    const std::uint32_t rounded = (x + 0x7FFFu + ((x >> 16) & 1u)) >> 16;
    // NaN: truncate the payload, setting the quiet bit only if nothing of it survived.
    const std::uint32_t kept = (x >> 16) & 0x7Fu;
    const std::uint32_t nan = (x >> 16) | (kept == 0 ? 0x40u : 0u);
    return static_cast<std::uint16_t>((x & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded);
}

// Exact (a shift).
constexpr float bfloat16_bits_to_float(std::uint16_t bits) {
    return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

} // namespace mantissa
