// The MX block scale (OCP MX v1.0 §6.3's floor rule, or Transformer Engine's ceil) in 32-bit
// arithmetic from the block's amax as float32 bits: quant_math::mx_scale_code's code, with the
// scale and its inverse as float32 (powers of two: exact). The one-thread-per-block quantise kernel
// makes one per block of 32 elements; quant_math's float64 route (a 64-bit bit search, a float64
// reciprocal, three float64 conversions) cost about a fifth of the block's element work once the
// elements took the hardware's FP8 conversions (issue 26). Read by the host compiler too:
// tst_cuda_shortcuts checks it against mx_scale_code over every exponent, for every MX element
// format and both rules.
#pragma once

#include <bit>
#include <cstdint>

#include "core/hd_bits.h"
#include "core/host_device.h"
#include "core/numeric/element_format.h"
#include "core/numeric/quant_math.h"

namespace mantissa::cuda {

struct MxScaleBits {
    // E8M0: the scale is 2^(code - 127); 0xFF (NaN) for a non-finite amax
    std::uint32_t code = 0xFF;
    float scale = 0;   // 2^(code - 127); NaN for 0xFF
    float inverse = 0; // 1 / scale, exactly; NaN for 0xFF
    // The scale's float64 bits (decode_element's value), which the kernels' largest-scale total
    // compares as integers.
    MANTISSA_HD std::uint64_t scale_bits64() const {
        return code == 0xFFu ? 0x7FF8000000000000ull : static_cast<std::uint64_t>(code + 896) << 52;
    }
};

// 2^k as a float32 for -149 <= k <= 127: exact (a subnormal below -126).
MANTISSA_HD inline float pow2_float(int k) {
    return k >= -126 ? std::bit_cast<float>(static_cast<std::uint32_t>(k + 127) << 23)
                     : std::bit_cast<float>(1u << (k + 149));
}

// mx_scale_code(amax, F, ceil) for amax = the float32 with bits `amax_bits` (|x|'s bits; above
// infinity's, a NaN), and its scale.
template <ElementFormat F>
MANTISSA_HD inline MxScaleBits mx_scale_bits(std::uint32_t amax_bits, bool ceil) {
    MxScaleBits s;
    if (amax_bits >= 0x7F800000u) { // infinite or NaN
        s.scale = s.inverse = std::bit_cast<float>(0x7FC00000u);
        return s;
    }
    int k = -127;
    if (amax_bits != 0) {
        // floor(log2 amax): the exponent, or for a subnormal (bits · 2^-149) its top bit's place
        const int biased = static_cast<int>(amax_bits >> 23);
        const int log2 = biased != 0 ? biased - 127 : hd::bit_width(amax_bits) - 150;
        constexpr int emax = quant_math::element_emax(F);
        k = log2 - emax;
        // ceil: one more binade when amax exceeds max · 2^k (exact in float32: max has a few
        // significant bits, and k <= 127 - emax keeps the product below 2^128).
        if (ceil && k >= -128) {
            constexpr float max = static_cast<float>(quant_math::element_max(F));
            if (std::bit_cast<float>(amax_bits) > max * pow2_float(k)) ++k;
        }
        k = k < -127 ? -127 : (k > 127 ? 127 : k);
    }
    s.code = static_cast<std::uint32_t>(k + 127);
    s.scale = pow2_float(k);
    s.inverse = pow2_float(-k);
    return s;
}

} // namespace mantissa::cuda
