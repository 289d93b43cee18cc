// The quantisers' per-element and per-block arithmetic, shared by the CPU engine
// (core/numeric/block_quant.cpp, tensor_quant.cpp) and the CUDA kernels
// (core/backend/cuda/fake_quantize.cu) through MANTISSA_HD: one definition, so the CPU tests of
// it (tst_block_quant's exact rational references, tst_quant_train) test the kernels' arithmetic.
//
// - MX block scale (OCP MX v1.0 §6.3): X = 2^(floor(log2 amax) - emax_elem) under `floor`; the
//   smallest power of two with amax / X <= max_elem under `ceil` (Transformer Engine's MXFP8).
// - NVFP4: s_global = amax_tensor / (448 * 6) as float32; s_block = (amax_block / 6) / s_global
//   rounded to nearest E4M3; elements rounded to E2M1 at the exact quotient V / (s_block s_global).
// - Per-tensor FP8 (TE's delayed and current scaling): scale = (max_elem / amax) / 2^margin in
//   float32; code = round(v * scale), value = code * (1 / scale); delayed scaling records the
//   tensor's amax in a history ring after the cast and sets the next step's scale from it.
// Integer and exactly rounded float64 operations only (no library math, no FPU mode), so the host
// compiler and nvcc (--fmad=false) give the same bits.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

#include "core/hd_bits.h"
#include "core/host_device.h"
#include "core/numeric/element_format.h"

namespace mantissa::quant_math {

inline constexpr std::uint64_t kAbsMask = 0x7FFFFFFFFFFFFFFFull;
inline constexpr std::uint64_t kInfBits = 0x7FF0000000000000ull;
inline constexpr std::uint64_t kQuietNaNBits = 0x7FF8000000000000ull; // quiet_NaN()'s bits

MANTISSA_HD constexpr double nan_value() {
    return std::bit_cast<double>(kQuietNaNBits);
}
MANTISSA_HD constexpr double abs_of(double x) {
    return std::bit_cast<double>(std::bit_cast<std::uint64_t>(x) & kAbsMask);
}
MANTISSA_HD constexpr bool is_nan(double x) {
    return (std::bit_cast<std::uint64_t>(x) & kAbsMask) > kInfBits;
}
MANTISSA_HD constexpr bool is_finite(double x) {
    return (std::bit_cast<std::uint64_t>(x) & kAbsMask) < kInfBits;
}
MANTISSA_HD constexpr bool sign_bit(double x) {
    return (std::bit_cast<std::uint64_t>(x) >> 63) != 0;
}
// 2^k for -1022 <= k <= 1023 (a normal float64: exact).
MANTISSA_HD constexpr double pow2(int k) {
    return std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52);
}
// floor(log2 x) for a finite x > 0, float64 subnormals included (std::ilogb's value).
MANTISSA_HD constexpr int ilogb_of(double x) {
    const std::uint64_t a = std::bit_cast<std::uint64_t>(x) & kAbsMask;
    const int biased = static_cast<int>(a >> 52);
    if (biased) return biased - 1023;
    return -1074 + hd::bit_width(a) - 1; // not std::bit_width: core/hd_bits.h says why
}

// The largest finite value of a signed element format and floor(log2) of it (MX's emax_elem:
// 8 E4M3, 15 E5M2, 4 E3M2, 2 E2M3 and E2M1); element_spec() holds the same numbers.
MANTISSA_HD constexpr double element_max(ElementFormat f) {
    const element_detail::Layout l = element_detail::layout(f);
    return element_detail::decode_signed(l.max_mag, l);
}
MANTISSA_HD constexpr int element_emax(ElementFormat f) {
    return ilogb_of(element_max(f));
}

// The code nearest (ties to even, saturating) to the exact real a / d, for d > 0 whose
// significand is short enough that (midpoint * d) is exact in float64 (at most 53 - 5 bits):
// the float64 quotient is within an ulp, so at most one step corrects it, decided by exact
// products against the midpoints of the neighbouring codes.
MANTISSA_HD constexpr std::uint32_t nearest_code_of_quotient(double a, double d, ElementFormat f) {
    const element_detail::Layout l = element_detail::layout(f);
    const std::uint32_t sign_mask = 1u << (l.width - 1);
    const std::uint32_t c = encode_element(a / d, f);
    const std::uint32_t sign = c & sign_mask;
    std::uint32_t mag = c & (sign_mask - 1);
    const double A = abs_of(a);
    for (int step = 0; step < 2; ++step) {
        const double v = decode_element(mag, f);
        if (mag > 0) {
            const double p = (v + decode_element(mag - 1, f)) / 2 * d;
            if (A < p || (A == p && (mag & 1))) {
                --mag;
                continue;
            }
        }
        if (mag < l.max_mag) {
            const double p = (v + decode_element(mag + 1, f)) / 2 * d;
            if (A > p || (A == p && (mag & 1))) {
                ++mag;
                continue;
            }
        }
        break;
    }
    return sign | mag;
}

// MX: the E8M0 code of a block whose largest magnitude is `amax` (0xFF, NaN, when amax is inf or
// NaN, since E8M0 has no infinity; 0x00 = 2^-127 for an all-zero block, as it has no zero).
// Its value is decode_element(code, E8M0).
MANTISSA_HD constexpr std::uint32_t mx_scale_code(double amax, ElementFormat element, bool ceil) {
    if (!is_finite(amax)) return 0xFF;
    int k = -127;
    if (amax > 0) {
        k = ilogb_of(amax) - element_emax(element); // floor(log2 amax) - emax_elem, exactly
        // ceil: amax / 2^k lies in [2^emax, 2^(emax+1)), so one more binade always suffices. Below
        // 2^-128 the clamp decides anyway (and 2^k would not be a normal float64).
        if (ceil && k >= -128 && amax > element_max(element) * pow2(k)) ++k;
        k = k < -127 ? -127 : (k > 127 ? 127 : k);
    }
    return static_cast<std::uint32_t>(k + 127);
}

// NVFP4 with the tensor scale applied in the GEMM (BlockQuantConfig::tensor_scale_in_gemm): the
// factor its copy leaves out, the tensor scale where positive, else 1. A decoded value
// code · s_block · global (exact in float64) divided by it gives code · s_block exactly.
MANTISSA_HD constexpr float nvfp4_gemm_scale(float global) {
    return global > 0 ? global : 1.0f;
}

// NVFP4's float32 tensor scale: the float32 nearest to amax_tensor / 2688 (the smallest positive
// float32 if that is 0 for a non-zero amax; 0 for an all-zero tensor; NaN for a non-finite amax).
MANTISSA_HD constexpr float nvfp4_global_scale(double amax_tensor) {
    if (!is_finite(amax_tensor)) return std::bit_cast<float>(0x7FC00000u);
    if (amax_tensor == 0) return 0.0f;
    constexpr double d = 448.0 * 6.0; // 2688 = 21 * 2^7: a short significand, products exact
    float s = static_cast<float>(amax_tensor / d);
    // The float64 quotient was rounded once already: correct to the float32 nearest the exact
    // quotient by comparing amax with d times the midpoints (exact: 25 + 5 bits).
    for (int step = 0; step < 2; ++step) {
        const std::uint32_t bits = std::bit_cast<std::uint32_t>(s);      // s >= 0
        const float down = bits ? std::bit_cast<float>(bits - 1) : 0.0f; // nextafter to 0
        const float up = std::bit_cast<float>(bits + 1);                 // nextafter to inf
        const bool even = (bits & 1u) == 0;
        const double lo = (static_cast<double>(s) + down) / 2 * d;
        const double hi = (static_cast<double>(s) + up) / 2 * d;
        if (s > 0 && (amax_tensor < lo || (amax_tensor == lo && !even)))
            s = down;
        else if (is_finite(up) && (amax_tensor > hi || (amax_tensor == hi && !even)))
            s = up;
        else
            break;
    }
    return s > 0 ? s : std::bit_cast<float>(1u); // denorm_min
}

// NVFP4: the E4M3 code nearest to (amax_block / 6) / global_scale, saturating at 448 (0x7F, NaN,
// for a non-finite amax or global scale; 0 for an all-zero block or tensor).
MANTISSA_HD constexpr std::uint32_t nvfp4_scale_code(double amax_block, float global_scale) {
    if (!is_finite(amax_block) || is_nan(static_cast<double>(global_scale))) return 0x7F;
    if (amax_block == 0 || global_scale == 0) return 0x00;
    return nearest_code_of_quotient(amax_block, 6.0 * static_cast<double>(global_scale),
                                    ElementFormat::Float8E4M3);
}

// The float32 t with (a > t) == (a > M) (`up`: == (a >= M)) for every float32 a >= 0: the float
// below M, or below that when M is a float and a tie goes up. NVFP4's E2M1 elements are rounded
// by comparing |v| with such thresholds (the midpoints between magnitudes times the scale) on
// both engines.
MANTISSA_HD constexpr float float_threshold(double M, bool up) {
    const float f = static_cast<float>(M); // M > 0: f is positive (or +inf, or 0 if M is tiny)
    if (static_cast<double>(f) > M || (up && static_cast<double>(f) == M && f > 0))
        return std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) - 1); // the float below
    return f;
}

// The stochastic-rounding stream of a training step: a new one each step, reproducibly; element
// i of the tensor's row-major view then draws rounding_random(step_seed(seed, step), i).
MANTISSA_HD constexpr std::uint64_t step_seed(std::uint64_t seed, std::uint64_t step) {
    return seed * 0x9E3779B97F4A7C15ull + step;
}

// One element of a block under the whole scale `eff` (the E8M0 value, or NVFP4's E4M3 value
// times the tensor scale): its code, decoded value and whether it clipped or flushed to zero.
struct ElementResult {
    std::uint32_t code = 0;
    double decoded = 0;
    bool clipped = false; // |v| beyond max_elem * eff: saturated
    bool zero = false;    // a non-zero v decoded as zero
};
// An element of a block whose whole scale `eff` is NaN or zero: quantize_element's first two
// cases, which the CUDA line kernels call alone (their other cases have faster forms there).
MANTISSA_HD constexpr ElementResult degenerate_element(double v, double eff, ElementFormat f) {
    ElementResult r;
    if (is_nan(eff)) { // a NaN or inf in the block (MX) or tensor: the block is NaN
        r.decoded = nan_value();
    } else { // an all-zero block, or a block scale that underflowed E4M3
        const element_detail::Layout l = element_detail::layout(f);
        r.code = sign_bit(v) ? 1u << (l.width - 1) : 0u;
        r.decoded = sign_bit(v) ? -0.0 : 0.0;
    }
    r.zero = v != 0 && !is_nan(v) && r.decoded == 0;
    return r;
}

// `exact_quotient`: round the exact real v / eff (NVFP4's scale is no power of two); otherwise
// v / eff is exact (MX). `random` drives stochastic rounding (rounding_random(seed, index)).
MANTISSA_HD constexpr ElementResult quantize_element(double v, double eff, ElementFormat f,
                                                     double max_elem, bool stochastic,
                                                     bool exact_quotient, std::uint32_t random) {
    if (is_nan(eff) || eff == 0) return degenerate_element(v, eff, f);
    ElementResult r;
    if (stochastic)
        r.code = encode_element_stochastic(v / eff, f, random);
    else if (exact_quotient)
        r.code = nearest_code_of_quotient(v, eff, f);
    else
        r.code = encode_element(v / eff, f);     // a power of two: v / eff is exact
    r.decoded = decode_element(r.code, f) * eff; // a few bits x the scale: exact
    r.clipped = abs_of(v) > max_elem * eff;
    r.zero = v != 0 && !is_nan(v) && r.decoded == 0;
    return r;
}

// ---- per-tensor FP8 (TE's Float8Quantizer / Float8CurrentScaling) ----

// TE: scale = (fp8_max / amax) / 2^margin in float32; an amax of zero, inf or NaN keeps
// `previous`. The float64 product by 2^-margin is exact, so the one rounding is std::ldexp's.
MANTISSA_HD constexpr float fp8_scale_for(double amax, double max_elem, int margin,
                                          float previous) {
    if (!(amax > 0) || !is_finite(amax)) return previous;
    const float s = static_cast<float>(max_elem) / static_cast<float>(amax);
    const int m = margin < 0 ? 0 : (margin > 1022 ? 1022 : margin); // past 2^-1022 it is 0 anyway
    return static_cast<float>(static_cast<double>(s) * pow2(-m));
}

// One value cast per tensor: x = v * scale (exact, 24 x 24 bits), the code nearest x
// (saturating), decoded times scale_inv. Beyond the float32 rounding of the scale itself (amax x
// fl(448 / amax) may exceed 448 by an ulp and still encode as 448) a value counts as clipped.
// cast_code gives the code itself (what the FP8 GEMM reads, with scale_inv as its decode scale);
// cast_element the decoded value fake quantisation writes. Both decide clipped and zero alike.
struct CodeResult {
    std::uint32_t code = 0;
    bool clipped = false;
    bool zero = false;
};
MANTISSA_HD constexpr CodeResult cast_code(float v, float scale, float scale_inv, ElementFormat f,
                                           double max_elem) {
    const double x = static_cast<double>(v) * static_cast<double>(scale);
    CodeResult r;
    r.code = encode_element(x, f);
    const double decoded = decode_element(r.code, f) * static_cast<double>(scale_inv);
    r.clipped = abs_of(x) > max_elem * (1.0 + 0x1p-22);
    r.zero = v != 0 && !is_nan(static_cast<double>(v)) && decoded == 0;
    return r;
}
struct CastResult {
    float value = 0;
    bool clipped = false;
    bool zero = false;
};
MANTISSA_HD constexpr CastResult cast_element(float v, float scale, float scale_inv,
                                              ElementFormat f, double max_elem) {
    const CodeResult c = cast_code(v, scale, scale_inv, f, max_elem);
    const double decoded = decode_element(c.code, f) * static_cast<double>(scale_inv);
    CastResult r;
    r.clipped = c.clipped;
    r.zero = c.zero;
    r.value = static_cast<float>(decoded); // a 4-bit significand times a float32: one rounding
    return r;
}

// Delayed scaling after the cast (state layout: tensor_quant.h's quant_state_floats): records
// `amax` in the history ring and sets state[0] to the next step's scale (from the max over the
// history, or this amax alone with `most_recent`); `scale` is the one this step used.
MANTISSA_HD constexpr void delayed_record(float* state, std::size_t history_len, double amax,
                                          double max_elem, int margin, bool most_recent,
                                          float scale) {
    float* history = state + 2;
    const auto recorded = static_cast<std::size_t>(state[1]);
    history[recorded % history_len] = static_cast<float>(amax);
    // Counts up to 2 * len, then wraps by len: the position stays right and the float exact.
    const std::size_t next =
        recorded + 1 >= 2 * history_len ? recorded + 1 - history_len : recorded + 1;
    state[1] = static_cast<float>(next);
    double amax_h = amax;
    if (!most_recent) {
        const std::size_t seen = recorded + 1 < history_len ? recorded + 1 : history_len;
        for (std::size_t i = 0; i < seen; ++i) {
            const auto h = static_cast<double>(history[i]);
            amax_h = amax_h < h ? h : amax_h; // std::max's rule: a NaN h never replaces amax_h
        }
    }
    state[0] = fp8_scale_for(amax_h, max_elem, margin, scale);
}

} // namespace mantissa::quant_math
