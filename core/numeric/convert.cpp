// Bulk conversions between dtype storage and float32/float64 working arrays (the CPU backend's
// loads and stores); 16-bit paths use F16C where the CPU has it, else blocked loops over half.h.
#include "core/numeric/convert.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/error.h"
#include "core/numeric/float_format.h"
#include "core/numeric/half.h"

#if defined(__F16C__) && defined(__AVX__)
#include <immintrin.h>
#define MANTISSA_HAVE_F16C 1
#endif

namespace mantissa {

namespace {

// Loops run in fixed-size blocks: at -O2 GCC only vectorises a loop whose vector code replaces
// the scalar code entirely, which a constant trip count guarantees; the tail is done by the
// same body, scalar.
constexpr std::size_t kBlock = 64;

template <typename Src, typename Dst, typename Fn>
inline void blocked_map(const Src* src, Dst* dst, std::size_t count, Fn fn) {
    std::size_t i = 0;
    for (; i + kBlock <= count; i += kBlock)
        for (std::size_t j = 0; j < kBlock; ++j) dst[i + j] = fn(src[i + j]);
    for (; i < count; ++i) dst[i] = fn(src[i]);
}

// In place: one pointer, so no aliasing question stands between the loop and the vectoriser.
template <typename Fn>
inline void blocked_apply(float* data, std::size_t count, Fn fn) {
    std::size_t i = 0;
    for (; i + kBlock <= count; i += kBlock)
        for (std::size_t j = 0; j < kBlock; ++j) data[i + j] = fn(data[i + j]);
    for (; i < count; ++i) data[i] = fn(data[i]);
}

#ifdef MANTISSA_HAVE_F16C
// F16C converts 8 lanes per instruction with IEEE round-to-nearest-even, and it neither flushes
// subnormals nor saturates, so it matches half.h bit for bit except on NaN payloads (it quiets
// signalling NaNs). A block of 8 holding any NaN therefore takes the scalar path.
void half_to_float_f16c(const std::uint16_t* src, float* dst, std::size_t count) {
    std::size_t i = 0;
    const __m128i magnitude = _mm_set1_epi16(0x7FFF), infinity = _mm_set1_epi16(0x7C00);
    for (; i + 8 <= count; i += 8) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
        const __m128i nan = _mm_cmpgt_epi16(_mm_and_si128(h, magnitude), infinity);
        if (_mm_movemask_epi8(nan)) {
            for (std::size_t j = i; j < i + 8; ++j) dst[j] = half_bits_to_float(src[j]);
            continue;
        }
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    }
    for (; i < count; ++i) dst[i] = half_bits_to_float(src[i]);
}

void float_to_half_f16c(const float* src, std::uint16_t* dst, std::size_t count) {
    std::size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        const __m256 v = _mm256_loadu_ps(src + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q))) {
            for (std::size_t j = i; j < i + 8; ++j) dst[j] = float_to_half_bits(src[j]);
            continue;
        }
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                         _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    for (; i < count; ++i) dst[i] = float_to_half_bits(src[i]);
}

void round_half_f16c(float* data, std::size_t count) {
    std::size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        const __m256 v = _mm256_loadu_ps(data + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q))) {
            for (std::size_t j = i; j < i + 8; ++j)
                data[j] = half_bits_to_float(float_to_half_bits(data[j]));
            continue;
        }
        _mm256_storeu_ps(data + i, _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT |
                                                                          _MM_FROUND_NO_EXC)));
    }
    for (; i < count; ++i) data[i] = half_bits_to_float(float_to_half_bits(data[i]));
}
#endif

// The 256 values of an 8-bit float format, decoded once.
template <typename T>
const std::array<T, 256>& fp8_table(DType dtype) {
    static const auto build = [](DType d) {
        std::array<T, 256> t{};
        for (std::size_t b = 0; b < 256; ++b) t[b] = static_cast<T>(decode_bits(b, d));
        return t;
    };
    static const std::array<T, 256> e4m3 = build(DType::Float8E4M3);
    static const std::array<T, 256> e5m2 = build(DType::Float8E5M2);
    return dtype == DType::Float8E4M3 ? e4m3 : e5m2;
}

// float32 -> float64 keeping a NaN's payload bit for bit (a hardware cast would quiet it).
inline double widen(float f) {
    if (f == f) return static_cast<double>(f);
    return decode_bits(std::bit_cast<std::uint32_t>(f), DType::Float32);
}

// Nearest integer (ties to even), saturated to [lo, hi]; NaN becomes 0. For data dtypes only.
template <typename Int>
Int round_to_int(double v, double lo, double hi) {
    if (std::isnan(v)) return 0;
    if (v <= lo) return static_cast<Int>(lo);
    if (v >= hi) return static_cast<Int>(hi);
    double r = std::floor(v);
    const double diff = v - r;
    if (diff > 0.5 || (diff == 0.5 && std::fmod(r, 2.0) != 0.0)) r += 1.0;
    return static_cast<Int>(r);
}

[[noreturn]] void not_floating(const char* what, DType dtype) {
    throw Error(ErrorKind::InvalidArgument, std::string(what) + ": '" +
                                                std::string(dtype_name(dtype)) +
                                                "' is not a floating-point dtype");
}

} // namespace

void convert_to_float(const void* src, DType src_dtype, float* dst, std::size_t count) {
    switch (src_dtype) {
    case DType::Float32:
        std::memcpy(dst, src, count * sizeof(float));
        return;
    case DType::Float64:
        blocked_map(static_cast<const double*>(src), dst, count,
                    [](double v) { return static_cast<float>(v); });
        return;
    case DType::Float16:
#ifdef MANTISSA_HAVE_F16C
        half_to_float_f16c(static_cast<const std::uint16_t*>(src), dst, count);
#else
        blocked_map(static_cast<const std::uint16_t*>(src), dst, count,
                    [](std::uint16_t b) { return half_bits_to_float(b); });
#endif
        return;
    case DType::BFloat16:
        blocked_map(static_cast<const std::uint16_t*>(src), dst, count,
                    [](std::uint16_t b) { return bfloat16_bits_to_float(b); });
        return;
    case DType::Float8E4M3:
    case DType::Float8E5M2: {
        const auto& table = fp8_table<float>(src_dtype);
        const auto* s = static_cast<const std::uint8_t*>(src);
        for (std::size_t i = 0; i < count; ++i) dst[i] = table[s[i]];
        return;
    }
    case DType::UInt8:
        blocked_map(static_cast<const std::uint8_t*>(src), dst, count,
                    [](std::uint8_t v) { return static_cast<float>(v); });
        return;
    case DType::Int32:
        blocked_map(static_cast<const std::int32_t*>(src), dst, count,
                    [](std::int32_t v) { return static_cast<float>(v); });
        return;
    }
}

void convert_to_double(const void* src, DType src_dtype, double* dst, std::size_t count) {
    switch (src_dtype) {
    case DType::Float64:
        std::memcpy(dst, src, count * sizeof(double));
        return;
    case DType::Float32: {
        const auto* s = static_cast<const float*>(src);
        for (std::size_t i = 0; i < count; ++i) dst[i] = widen(s[i]);
        return;
    }
    case DType::Float16: {
        const auto* s = static_cast<const std::uint16_t*>(src);
        for (std::size_t i = 0; i < count; ++i) dst[i] = widen(half_bits_to_float(s[i]));
        return;
    }
    case DType::BFloat16: {
        const auto* s = static_cast<const std::uint16_t*>(src);
        for (std::size_t i = 0; i < count; ++i) dst[i] = widen(bfloat16_bits_to_float(s[i]));
        return;
    }
    case DType::Float8E4M3:
    case DType::Float8E5M2: {
        const auto& table = fp8_table<double>(src_dtype);
        const auto* s = static_cast<const std::uint8_t*>(src);
        for (std::size_t i = 0; i < count; ++i) dst[i] = table[s[i]];
        return;
    }
    case DType::UInt8: {
        const auto* s = static_cast<const std::uint8_t*>(src);
        for (std::size_t i = 0; i < count; ++i) dst[i] = s[i];
        return;
    }
    case DType::Int32: {
        const auto* s = static_cast<const std::int32_t*>(src);
        for (std::size_t i = 0; i < count; ++i) dst[i] = s[i];
        return;
    }
    }
}

void convert_from_float(const float* src, void* dst, DType dst_dtype, std::size_t count) {
    switch (dst_dtype) {
    case DType::Float32:
        std::memcpy(dst, src, count * sizeof(float));
        return;
    case DType::Float64: {
        auto* d = static_cast<double*>(dst);
        for (std::size_t i = 0; i < count; ++i) d[i] = widen(src[i]);
        return;
    }
    case DType::Float16:
#ifdef MANTISSA_HAVE_F16C
        float_to_half_f16c(src, static_cast<std::uint16_t*>(dst), count);
#else
        blocked_map(src, static_cast<std::uint16_t*>(dst), count,
                    [](float v) { return float_to_half_bits(v); });
#endif
        return;
    case DType::BFloat16:
        blocked_map(src, static_cast<std::uint16_t*>(dst), count,
                    [](float v) { return float_to_bfloat16_bits(v); });
        return;
    case DType::Float8E4M3:
    case DType::Float8E5M2: {
        // float32 -> float64 is exact, so this is still a single rounding.
        auto* d = static_cast<std::uint8_t*>(dst);
        for (std::size_t i = 0; i < count; ++i)
            d[i] = static_cast<std::uint8_t>(encode_bits(widen(src[i]), dst_dtype));
        return;
    }
    case DType::UInt8: {
        auto* d = static_cast<std::uint8_t*>(dst);
        for (std::size_t i = 0; i < count; ++i) d[i] = round_to_int<std::uint8_t>(src[i], 0, 255);
        return;
    }
    case DType::Int32: {
        auto* d = static_cast<std::int32_t*>(dst);
        for (std::size_t i = 0; i < count; ++i)
            d[i] = round_to_int<std::int32_t>(src[i], -2147483648.0, 2147483647.0);
        return;
    }
    }
}

void convert_from_double(const double* src, void* dst, DType dst_dtype, std::size_t count) {
    switch (dst_dtype) {
    case DType::Float64:
        std::memcpy(dst, src, count * sizeof(double));
        return;
    case DType::Float32: {
        // A hardware cast rounds once (nearest even); NaNs go through encode_bits to keep payloads.
        auto* d = static_cast<float*>(dst);
        for (std::size_t i = 0; i < count; ++i)
            d[i] = src[i] == src[i] ? static_cast<float>(src[i])
                                    : std::bit_cast<float>(static_cast<std::uint32_t>(
                                          encode_bits(src[i], DType::Float32)));
        return;
    }
    case DType::Float16:
    case DType::BFloat16: {
        // Not via float32: that would round twice.
        auto* d = static_cast<std::uint16_t*>(dst);
        for (std::size_t i = 0; i < count; ++i)
            d[i] = static_cast<std::uint16_t>(encode_bits(src[i], dst_dtype));
        return;
    }
    case DType::Float8E4M3:
    case DType::Float8E5M2: {
        auto* d = static_cast<std::uint8_t*>(dst);
        for (std::size_t i = 0; i < count; ++i)
            d[i] = static_cast<std::uint8_t>(encode_bits(src[i], dst_dtype));
        return;
    }
    case DType::UInt8: {
        auto* d = static_cast<std::uint8_t*>(dst);
        for (std::size_t i = 0; i < count; ++i) d[i] = round_to_int<std::uint8_t>(src[i], 0, 255);
        return;
    }
    case DType::Int32: {
        auto* d = static_cast<std::int32_t*>(dst);
        for (std::size_t i = 0; i < count; ++i)
            d[i] = round_to_int<std::int32_t>(src[i], -2147483648.0, 2147483647.0);
        return;
    }
    }
}

void convert(const void* src, DType src_dtype, void* dst, DType dst_dtype, std::size_t count) {
    if (src_dtype == dst_dtype) {
        std::memcpy(dst, src, count * dtype_size(src_dtype));
        return;
    }
    if (src_dtype == DType::Float32)
        return convert_from_float(static_cast<const float*>(src), dst, dst_dtype, count);
    if (src_dtype == DType::Float64)
        return convert_from_double(static_cast<const double*>(src), dst, dst_dtype, count);
    // Every other source is exact in float64, so staging through it rounds only once.
    constexpr std::size_t kChunk = 1024;
    double staging[kChunk];
    const auto* s = static_cast<const unsigned char*>(src);
    auto* d = static_cast<unsigned char*>(dst);
    const std::size_t src_size = dtype_size(src_dtype), dst_size = dtype_size(dst_dtype);
    for (std::size_t done = 0; done < count; done += kChunk) {
        const std::size_t n = count - done < kChunk ? count - done : kChunk;
        convert_to_double(s + done * src_size, src_dtype, staging, n);
        convert_from_double(staging, d + done * dst_size, dst_dtype, n);
    }
}

void round_in_place(float* data, std::size_t count, DType dtype) {
    switch (dtype) {
    case DType::Float32:
    case DType::Float64:
        return;
    case DType::Float16:
#ifdef MANTISSA_HAVE_F16C
        round_half_f16c(data, count);
#else
        blocked_apply(data, count,
                      [](float v) { return half_bits_to_float(float_to_half_bits(v)); });
#endif
        return;
    case DType::BFloat16:
        blocked_apply(data, count,
                      [](float v) { return bfloat16_bits_to_float(float_to_bfloat16_bits(v)); });
        return;
    case DType::Float8E4M3:
    case DType::Float8E5M2: {
        const auto& table = fp8_table<float>(dtype);
        for (std::size_t i = 0; i < count; ++i)
            data[i] = table[encode_bits(widen(data[i]), dtype) & 0xFF];
        return;
    }
    case DType::UInt8:
    case DType::Int32:
        not_floating("round_in_place", dtype);
    }
}

} // namespace mantissa
