// Element format descriptions, names and the span loops over the inline codecs.
#include "core/numeric/element_format.h"

#include <cmath>
#include <string>

#include "core/error.h"

namespace mantissa {

namespace {

ElementSpec make_spec(ElementFormat f, std::string_view name, int width, int exponent_bits,
                      int mantissa_bits, int bias, bool has_sign, bool has_infinity, bool has_nan) {
    ElementSpec s{};
    s.format = f;
    s.name = name;
    s.width = width;
    s.exponent_bits = exponent_bits;
    s.mantissa_bits = mantissa_bits;
    s.exponent_bias = bias;
    s.has_sign = has_sign;
    s.has_infinity = has_infinity;
    s.has_nan = has_nan;
    if (f == ElementFormat::E8M0) {
        s.max_finite = decode_element(0xFE, f);
        s.min_normal = s.min_subnormal = decode_element(0x00, f);
    } else {
        const element_detail::Layout l = element_detail::layout(f);
        s.max_finite = decode_element(l.max_mag, f);
        s.min_normal = std::ldexp(1.0, 1 - bias);
        s.min_subnormal = std::ldexp(1.0, 1 - bias - mantissa_bits);
    }
    s.emax = std::ilogb(s.max_finite);
    return s;
}

struct Alias {
    std::string_view name;
    ElementFormat format;
};

constexpr Alias kAliases[] = {
    {"float8_e4m3", ElementFormat::Float8E4M3},   {"e4m3", ElementFormat::Float8E4M3},
    {"fp8_e4m3", ElementFormat::Float8E4M3},      {"float8_e4m3fn", ElementFormat::Float8E4M3},
    {"float8_e5m2", ElementFormat::Float8E5M2},   {"e5m2", ElementFormat::Float8E5M2},
    {"fp8_e5m2", ElementFormat::Float8E5M2},      {"float6_e3m2", ElementFormat::Float6E3M2},
    {"fp6_e3m2", ElementFormat::Float6E3M2},      {"e3m2", ElementFormat::Float6E3M2},
    {"float6_e2m3", ElementFormat::Float6E2M3},   {"fp6_e2m3", ElementFormat::Float6E2M3},
    {"e2m3", ElementFormat::Float6E2M3},          {"float4_e2m1", ElementFormat::Float4E2M1},
    {"fp4_e2m1", ElementFormat::Float4E2M1},      {"e2m1", ElementFormat::Float4E2M1},
    {"float4_e2m1fn", ElementFormat::Float4E2M1}, {"e8m0", ElementFormat::E8M0},
    {"float8_e8m0", ElementFormat::E8M0},         {"float8_e8m0fnu", ElementFormat::E8M0},
};

// Element loops run in fixed-size blocks so the inner loop has a constant trip count (the same
// reason as convert.cpp's blocked_map); the tail runs the same body.
constexpr std::size_t kBlock = 64;

} // namespace

const ElementSpec& element_spec(ElementFormat format) {
    static const ElementSpec specs[] = {
        make_spec(ElementFormat::Float8E4M3, "float8_e4m3", 8, 4, 3, 7, true, false, true),
        make_spec(ElementFormat::Float8E5M2, "float8_e5m2", 8, 5, 2, 15, true, true, true),
        make_spec(ElementFormat::Float6E3M2, "float6_e3m2", 6, 3, 2, 3, true, false, false),
        make_spec(ElementFormat::Float6E2M3, "float6_e2m3", 6, 2, 3, 1, true, false, false),
        make_spec(ElementFormat::Float4E2M1, "float4_e2m1", 4, 2, 1, 1, true, false, false),
        make_spec(ElementFormat::E8M0, "e8m0", 8, 8, 0, 127, false, false, true),
    };
    const auto i = static_cast<std::size_t>(format);
    if (i >= std::size(specs))
        throw Error(ErrorKind::InvalidArgument, "unknown element format " + std::to_string(i));
    return specs[i];
}

std::string_view element_format_name(ElementFormat format) {
    return element_spec(format).name;
}

bool try_element_format_from_name(std::string_view name, ElementFormat& out) {
    for (const Alias& a : kAliases)
        if (a.name == name) {
            out = a.format;
            return true;
        }
    return false;
}

ElementFormat element_format_from_name(std::string_view name, std::string_view field) {
    ElementFormat f{};
    if (try_element_format_from_name(name, f)) return f;
    std::string valid;
    for (ElementFormat e : element_formats())
        valid += (valid.empty() ? "" : ", ") + std::string(element_format_name(e));
    throw Error(ErrorKind::InvalidArgument, std::string(field) + ": unknown element format '" +
                                                std::string(name) + "' (valid: " + valid + ")");
}

const std::vector<ElementFormat>& element_formats() {
    static const std::vector<ElementFormat> all = {
        ElementFormat::Float8E4M3, ElementFormat::Float8E5M2, ElementFormat::Float6E3M2,
        ElementFormat::Float6E2M3, ElementFormat::Float4E2M1, ElementFormat::E8M0};
    return all;
}

void encode_elements(const float* src, std::uint8_t* dst, std::size_t count, ElementFormat format,
                     Overflow overflow) {
    std::size_t i = 0;
    for (; i + kBlock <= count; i += kBlock)
        for (std::size_t j = 0; j < kBlock; ++j)
            dst[i + j] = static_cast<std::uint8_t>(encode_element(src[i + j], format, overflow));
    for (; i < count; ++i)
        dst[i] = static_cast<std::uint8_t>(encode_element(src[i], format, overflow));
}

void encode_elements_stochastic(const float* src, const std::uint32_t* random, std::uint8_t* dst,
                                std::size_t count, ElementFormat format, Overflow overflow) {
    for (std::size_t i = 0; i < count; ++i)
        dst[i] = static_cast<std::uint8_t>(
            encode_element_stochastic(src[i], format, random[i], overflow));
}

void decode_elements(const std::uint8_t* codes, float* dst, std::size_t count,
                     ElementFormat format) {
    // Every code of every element format is a float32 (E8M0's 2^-127 as a float32 subnormal).
    std::size_t i = 0;
    for (; i + kBlock <= count; i += kBlock)
        for (std::size_t j = 0; j < kBlock; ++j)
            dst[i + j] = static_cast<float>(decode_element(codes[i + j], format));
    for (; i < count; ++i) dst[i] = static_cast<float>(decode_element(codes[i], format));
}

} // namespace mantissa
