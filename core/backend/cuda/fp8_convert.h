// The CUDA library's float32 <-> FP8 conversions as the quantise kernels use them, in a header the
// host compiler reads too: on compute capability 8.9+ each is one instruction (cvt.rn.satfinite
// to FP8, cvt.rn.f16x2 back), and on the host NVIDIA's emulation of the same conversions, which
// tst_cuda_shortcuts checks against element_codec's rounding value for value (issue 26: rounding
// on the float32 bits made the MX and FP8 quantise kernels ALU-bound on an H200).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include <cuda_fp8.h>

#include "core/host_device.h"
#include "core/numeric/element_format.h"
#include "core/numeric/quant_math.h"

// Whether the code being compiled may use the FP8 conversion instructions (compute capability
// 8.9+): nvcc's device pass for such a GPU, or the kernel emulator's Hopper build
// (tests/cuda_emu), which runs the same branches on NVIDIA's host forms of the conversions.
// The emulator compiles a kernel file once per emulated GPU only when the file itself names this
// header or the macro; one that reaches it through another header would run one branch on both.
#if defined(MANTISSA_EMU_SHARED_KERNELS)
#error                                                                                             \
    "fp8_convert.h reached from a kernel file the emulator compiles once for both GPUs: include it in the .cu file itself (tests/cuda_emu/CMakeLists.txt)"
#endif
#if (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890) || defined(MANTISSA_EMU_FP8_CONVERSIONS)
#define MANTISSA_FP8_CONVERSIONS 1
#else
#define MANTISSA_FP8_CONVERSIONS 0
#endif

namespace mantissa::cuda {

template <ElementFormat F>
inline constexpr bool kIsFp8 = F == ElementFormat::Float8E4M3 || F == ElementFormat::Float8E5M2;

template <ElementFormat F>
inline constexpr __nv_fp8_interpretation_t kFp8Kind =
    F == ElementFormat::Float8E5M2 ? __NV_E5M2 : __NV_E4M3;

// F's code nearest to the float32 `x`, ties to even, a finite value beyond ±max saturating to
// ±max (.satfinite): element_codec::round_to_code's rule for a finite x. NaN gives a NaN code.
template <ElementFormat F>
MANTISSA_HD inline std::uint32_t fp8_code(float x) {
    static_assert(kIsFp8<F>, "fp8_code: an FP8 element format");
    return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, kFp8Kind<F>);
}

// fp8_code of two values in one conversion (cvt.rn.satfinite.e4m3x2 or .e5m2x2): lo's code in
// the low byte, hi's in the next.
template <ElementFormat F>
MANTISSA_HD inline std::uint32_t fp8_code_pair(float lo, float hi) {
    static_assert(kIsFp8<F>, "fp8_code_pair: an FP8 element format");
    float2 pair;
    pair.x = lo;
    pair.y = hi;
    return __nv_cvt_float2_to_fp8x2(pair, __NV_SATFINITE, kFp8Kind<F>);
}

// v · scale rounded to odd, as the product truncated toward zero with its last bit set where
// the truncation dropped anything: for a product in float32's range the value of
// element_codec::product_round_to_odd (rounding to odd keeps the exact product's FP8 rounding),
// and beyond it ±FLT_MAX, which .satfinite saturates as the exact product saturates. On the GPU
// two instructions and a select (mul.rz, then fma for what was dropped), with no branch; on the
// host the same truncation from the exact float64 product, for tst_cuda_shortcuts to sweep.
// Finite v and scale only.
MANTISSA_HD inline float odd_product_rz(float v, float scale) {
#if defined(__CUDA_ARCH__)
    const float t = __fmul_rz(v, scale);
    const float dropped = __fmaf_rn(v, scale, -t);
#else
    const double exact = static_cast<double>(v) * static_cast<double>(scale); // 24 x 24 bits
    float t = static_cast<float>(exact);
    if (std::fabs(static_cast<double>(t)) > std::fabs(exact)) t = std::nextafter(t, 0.0f);
    const float dropped = std::fma(v, scale, -t);
#endif
    return std::bit_cast<float>(std::bit_cast<std::uint32_t>(t) | (dropped != 0 ? 1u : 0u));
}

// The value of F's code `code`, through float16, which holds every FP8 value exactly.
template <ElementFormat F>
MANTISSA_HD inline float fp8_value(std::uint32_t code) {
    static_assert(kIsFp8<F>, "fp8_value: an FP8 element format");
    return __half2float(
        __half(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(code), kFp8Kind<F>)));
}

// The F value nearest to a finite float32 `x`: element_codec::round_to_element<F>(x), bit for bit
// (signed zeros included), as two conversions.
template <ElementFormat F>
MANTISSA_HD inline float fp8_round(float x) {
    return fp8_value<F>(fp8_code<F>(x));
}

// Per-tensor FP8's clipped test, |v · scale| > max · (1 + 2^-22) on the exact product (quant_math's
// cast_code), in float32 instead of float64 (a float64 conversion per element is a 16-per-cycle
// instruction on Hopper). For every FP8 format max is 1.75 · 2^e, so that limit is max plus 3.5
// units in its last place: the midpoint between two float32s, `above` the upper one. The product
// rounded to nearest, hi = fl(v · scale), is at least `above` exactly when the product exceeds
// the midpoint, but for a product *equal* to it (a tie: hi rounds up to the even `above`, and
// hi's rounding error lo is minus half a unit in magnitude).
struct ClipLimit {
    float above = 0;       // the smallest float32 above max · (1 + 2^-22)
    float half_unit = 0;   // half the gap below `above`
    bool midpoint = false; // the limit is that midpoint; else per_tensor_clipped does not apply
};

// Constant-evaluated for the FP8 formats (per_tensor_code), where both are midpoints.
MANTISSA_HD constexpr ClipLimit clip_limit(double max_elem) {
    const double limit = max_elem * (1.0 + 0x1p-22);
    std::uint32_t bits = std::bit_cast<std::uint32_t>(static_cast<float>(limit));
    if (static_cast<double>(std::bit_cast<float>(bits)) <= limit) ++bits;
    const float above = std::bit_cast<float>(bits), below = std::bit_cast<float>(bits - 1);
    ClipLimit c;
    c.above = above;
    c.half_unit = (above - below) / 2;                  // exact: a power of two
    c.midpoint = (bits & 0x7F800000u) != 0x7F800000u && // finite
                 (static_cast<double>(below) + static_cast<double>(above)) / 2 == limit;
    return c;
}
static_assert(clip_limit(quant_math::element_max(ElementFormat::Float8E4M3)).midpoint &&
                  clip_limit(quant_math::element_max(ElementFormat::Float8E5M2)).midpoint,
              "per_tensor_clipped needs the FP8 clipping limits to be float32 midpoints");

// Whether the exact product hi + lo (hi = fl(v · scale), lo = fma(v, scale, -hi)) exceeds the
// limit, for finite v and scale and c.midpoint. Near the limit hi is a normal float32, so lo is
// exact; a product beyond float32's range has hi = ±inf and exceeds it.
MANTISSA_HD inline bool per_tensor_clipped(float hi, float lo, const ClipLimit& c) {
    // |hi| and its sign from the bits: no <cmath> call in device code (libstdc++'s constexpr
    // functions reach it only through --expt-relaxed-constexpr, as std::bit_width did).
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(hi);
    const float a = std::bit_cast<float>(bits & 0x7FFFFFFFu);
    if (a != c.above) return a > c.above;
    const float toward_zero = (bits >> 31) != 0 ? lo : -lo; // lo's pull on |hi| downwards
    return toward_zero != c.half_unit;
}

} // namespace mantissa::cuda
