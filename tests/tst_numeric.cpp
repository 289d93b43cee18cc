// Tests of core/numeric's float formats: every 16- and 8-bit pattern, ties, subnormals, overflow,
// checked against a reference rounding written here from the format definitions, not the code.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/error.h"
#include "core/numeric/convert.h"
#include "core/numeric/float_format.h"
#include "core/numeric/half.h"
#include "tests/unit/check_throws.h"
#include "tests/unit/files.h"
#include "tests/unit/format.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;

namespace {

// ---------------------------------------------------------------------------------------------
// The independent reference: a format's non-negative values listed in bit-pattern order straight
// from its definition, and nearest-even rounding as a search over that list with exact compares.
struct Reference {
    std::vector<double> values; // values[pattern] for patterns 0 .. max_finite, plus one more:
                                // the "virtual" next value (max + ulp), i.e. the overflow pattern
    std::uint64_t inf_or_nan;   // the pattern after max (inf, or e4m3's NaN)
    int width;

    Reference(int exponent_bits, int mantissa_bits, int bias, bool e4m3_style, int total_bits)
        : width(total_bits) {
        const int fields = 1 << exponent_bits, fracs = 1 << mantissa_bits;
        for (int e = 0; e < fields; ++e) {
            for (int f = 0; f < fracs; ++f) {
                const bool top = e == fields - 1;
                if (top && (!e4m3_style || f == fracs - 1)) break;
                // value = 0.f * 2^(1-bias) for subnormals, 1.f * 2^(e-bias) for normals
                const double v = e == 0 ? std::ldexp(f, 1 - bias - mantissa_bits)
                                        : std::ldexp(fracs + f, e - bias - mantissa_bits);
                values.push_back(v);
            }
        }
        inf_or_nan = values.size();
        const double ulp = values.back() - values[values.size() - 2];
        values.push_back(values.back() + ulp); // what rounding up from max would give
    }

    std::uint64_t max_bits() const { return inf_or_nan - 1; }

    // The pattern nearest to x (finite or inf, not NaN), ties to the even pattern.
    std::uint64_t encode(double x, bool saturate = false) const {
        const std::uint64_t sign = std::signbit(x) ? (1ull << (width - 1)) : 0;
        const double ax = std::fabs(x);
        const std::uint64_t overflow = saturate ? max_bits() : inf_or_nan;
        if (std::isinf(ax)) return sign | (saturate && width == 8 ? max_bits() : inf_or_nan);
        if (ax >= values.back()) return sign | overflow;
        const auto it = std::upper_bound(values.begin(), values.end(), ax);
        const std::uint64_t hi = static_cast<std::uint64_t>(it - values.begin());
        const std::uint64_t lo = hi - 1;
        if (values[lo] == ax) return sign | lo;
        const double dlo = ax - values[lo], dhi = values[hi] - ax; // exact (Sterbenz) or decisive
        std::uint64_t pick = dlo < dhi ? lo : (dhi < dlo ? hi : (lo % 2 == 0 ? lo : hi));
        if (pick == inf_or_nan) pick = overflow;
        return sign | pick;
    }
};

const Reference& reference(DType dtype) {
    static const Reference f16(5, 10, 15, false, 16);
    static const Reference bf16(8, 7, 127, false, 16);
    static const Reference e4m3(4, 3, 7, true, 8);
    static const Reference e5m2(5, 2, 15, false, 8);
    switch (dtype) {
    case DType::BFloat16:
        return bf16;
    case DType::Float8E4M3:
        return e4m3;
    case DType::Float8E5M2:
        return e5m2;
    default:
        return f16;
    }
}

std::uint32_t f32_bits(float f) {
    return std::bit_cast<std::uint32_t>(f);
}
float f32_from(std::uint32_t b) {
    return std::bit_cast<float>(b);
}
bool same_bits(double a, double b) {
    return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}
std::string hex(std::uint64_t bits) {
    return "0x" + format("%llx", static_cast<unsigned long long>(bits));
}
// `value` in base 2, left-padded with zeros to `width` digits (never cut).
std::string binary(std::uint64_t value, int width) {
    std::string digits;
    do {
        digits.insert(digits.begin(), char('0' + (value & 1)));
        value >>= 1;
    } while (value != 0);
    if (static_cast<int>(digits.size()) < width)
        digits.insert(0, static_cast<std::size_t>(width) - digits.size(), '0');
    return digits;
}

const std::vector<DType> kNarrow = {DType::Float16, DType::BFloat16, DType::Float8E4M3,
                                    DType::Float8E5M2};

} // namespace

class TestNumeric {
public:
    void formatTable_data();
    void formatTable();
    void nonFloatDtypesAreRejected();

    void all16BitPatternsRoundTrip_data();
    void all16BitPatternsRoundTrip();
    void allFp8PatternsRoundTrip_data();
    void allFp8PatternsRoundTrip();
    void referenceListMatchesDecode_data();
    void referenceListMatchesDecode();

    void edges_data();
    void edges();
    void tiesAndNeighboursEveryInterval_data();
    void tiesAndNeighboursEveryInterval();
    void randomDoublesMatchReference_data();
    void randomDoublesMatchReference();
    void fastPathsAgreeWithEncodeSweep();
    void float32EncodeMatchesHardwareCast();

    void kerasGuideFacts();
    void fp8Facts_data();
    void fp8Facts();
    void singleRoundingFromDouble();
    void nanAndSignedZero_data();
    void nanAndSignedZero();
    void classifyAndSplit_data();
    void classifyAndSplit();

    void bulkConversionsMatchScalar_data();
    void bulkConversionsMatchScalar();
    void convertAnyToAny();
    void integerDtypes();
};

void TestNumeric::formatTable_data() {
    add_column<DType>("dtype");
    add_column<double>("max");
    add_column<double>("minNormal");
    add_column<double>("minSubnormal");
    add_column<double>("epsilon");
    add_column<int>("mantissaBits");
    add_column<bool>("hasInf");
    new_row("float64") << DType::Float64 << std::numeric_limits<double>::max()
                       << std::numeric_limits<double>::min()
                       << std::numeric_limits<double>::denorm_min()
                       << std::numeric_limits<double>::epsilon() << 52 << true;
    new_row("float32") << DType::Float32 << double(std::numeric_limits<float>::max())
                       << double(std::numeric_limits<float>::min())
                       << double(std::numeric_limits<float>::denorm_min())
                       << double(std::numeric_limits<float>::epsilon()) << 23 << true;
    new_row("float16") << DType::Float16 << 65504.0 << std::ldexp(1.0, -14) << std::ldexp(1.0, -24)
                       << std::ldexp(1.0, -10) << 10 << true;
    new_row("bfloat16") << DType::BFloat16 << std::ldexp(255.0, 120) << std::ldexp(1.0, -126)
                        << std::ldexp(1.0, -133) << std::ldexp(1.0, -7) << 7 << true;
    new_row("e4m3") << DType::Float8E4M3 << 448.0 << std::ldexp(1.0, -6) << std::ldexp(1.0, -9)
                    << 0.125 << 3 << false;
    new_row("e5m2") << DType::Float8E5M2 << 57344.0 << std::ldexp(1.0, -14) << std::ldexp(1.0, -16)
                    << 0.25 << 2 << true;
}

void TestNumeric::formatTable() {
    FETCH(DType, dtype);
    FETCH(double, max);
    FETCH(double, minNormal);
    FETCH(double, minSubnormal);
    FETCH(double, epsilon);
    FETCH(int, mantissaBits);
    FETCH(bool, hasInf);
    const FloatFormat& f = float_format(dtype);
    CHECK_EQ(f.dtype, dtype);
    CHECK_EQ(f.max_finite, max);
    CHECK_EQ(f.min_normal, minNormal);
    CHECK_EQ(f.min_subnormal, minSubnormal);
    CHECK_EQ(f.epsilon, epsilon);
    CHECK_EQ(f.mantissa_bits, mantissaBits);
    CHECK_EQ(f.has_infinity, hasInf);
    CHECK_EQ(f.exponent_bits + f.mantissa_bits + 1, int(dtype_size(dtype) * 8));
    // max_finite and min_subnormal are themselves representable and survive a round trip.
    CHECK_EQ(round_to_dtype(max, dtype), max);
    CHECK_EQ(round_to_dtype(minSubnormal, dtype), minSubnormal);
}

void TestNumeric::nonFloatDtypesAreRejected() {
    for (DType d : {DType::UInt8, DType::Int32}) {
        try {
            float_format(d);
            FAIL_TEST("float_format accepted an integer dtype");
        } catch (const Error& e) {
            CHECK_EQ(e.kind(), ErrorKind::InvalidArgument);
            CHECK(contains(e.what(), dtype_name(d).data()));
        }
        float x = 1.5f;
        CHECK_THROWS(Error, round_in_place(&x, 1, d));
    }
}

void TestNumeric::all16BitPatternsRoundTrip_data() {
    add_column<DType>("dtype");
    new_row("float16") << DType::Float16;
    new_row("bfloat16") << DType::BFloat16;
}

void TestNumeric::all16BitPatternsRoundTrip() {
    FETCH(DType, dtype);
    const bool half = dtype == DType::Float16;
    for (std::uint32_t b = 0; b < 65536; ++b) {
        const auto bits = static_cast<std::uint16_t>(b);
        const float f = half ? half_bits_to_float(bits) : bfloat16_bits_to_float(bits);
        // fast path both ways
        const std::uint16_t back = half ? float_to_half_bits(f) : float_to_bfloat16_bits(f);
        if (back != bits) FAIL_TEST("fast round trip of " + hex(b) + " gave " + hex(back));
        // the reference encoder/decoder both ways
        const double d = decode_bits(b, dtype);
        const std::uint64_t enc = encode_bits(d, dtype);
        if (enc != b) FAIL_TEST("encode(decode(" + hex(b) + ")) gave " + hex(enc));
        // the two decoders agree bit for bit (NaN payloads included)
        const double widened = decode_bits(f32_bits(f), DType::Float32);
        if (!same_bits(widened, d)) FAIL_TEST("fast and reference decode differ at " + hex(b));
        // and encoding the float32 through the reference gives the fast path's answer
        if (encode_bits(widened, dtype) != back)
            FAIL_TEST("fast and reference encode differ at " + hex(b));
    }
}

void TestNumeric::allFp8PatternsRoundTrip_data() {
    add_column<DType>("dtype");
    new_row("e4m3") << DType::Float8E4M3;
    new_row("e5m2") << DType::Float8E5M2;
}

void TestNumeric::allFp8PatternsRoundTrip() {
    FETCH(DType, dtype);
    int nans = 0;
    for (std::uint64_t b = 0; b < 256; ++b) {
        const double d = decode_bits(b, dtype);
        CHECK_EQ(hex(encode_bits(d, dtype)), hex(b));
        // Saturating mode changes nothing but infinities (OCP: they clamp to max_finite).
        const std::uint64_t sat = encode_bits(d, dtype, Overflow::Saturate);
        CHECK_EQ(hex(sat), hex(std::isinf(d) ? (b & 0x80) | 0x7B : b));
        nans += std::isnan(d) ? 1 : 0;
        CHECK_EQ(classify_bits(b, dtype) == FloatClass::NaN, std::isnan(d));
    }
    // e4m3fn: S.1111.111 only; e5m2: exponent 31 with a nonzero fraction, 3 per sign.
    CHECK_EQ(nans, dtype == DType::Float8E4M3 ? 2 : 6);
}

void TestNumeric::referenceListMatchesDecode_data() {
    add_column<DType>("dtype");
    for (DType d : kNarrow) new_row(dtype_name(d).data()) << d;
}

void TestNumeric::referenceListMatchesDecode() {
    FETCH(DType, dtype);
    const Reference& ref = reference(dtype);
    CHECK_EQ(ref.max_bits(), encode_bits(float_format(dtype).max_finite, dtype));
    for (std::uint64_t b = 0; b <= ref.max_bits(); ++b) {
        if (decode_bits(b, dtype) != ref.values[b])
            FAIL_TEST("decode_bits(" + hex(b) + ") differs from the definition");
        const std::uint64_t neg = b | (1ull << (ref.width - 1));
        CHECK_EQ(decode_bits(neg, dtype), -ref.values[b]);
    }
}

// Named edge inputs, each checked against the reference for every narrow format, through
// encode_bits (double input) and, for 16-bit formats, through the float32 fast paths.
void TestNumeric::edges_data() {
    add_column<double>("x");
    const double h = std::ldexp(1.0, -24); // float16 min subnormal
    const auto row = [](const char* name, double x) { new_row(name) << x; };
    row("zero", 0.0);
    row("negative zero", -0.0);
    row("one", 1.0);
    row("f16 min subnormal", h);
    row("f16 half min subnormal (tie -> 0)", h / 2);
    row("f16 just above half min subnormal", std::nextafter(h / 2, 1.0));
    row("f16 just above half min subnormal (f32)", double(std::nextafter(float(h / 2), 1.0f)));
    row("f16 1.5 min subnormal (tie -> 2)", 1.5 * h);
    row("f16 2.5 min subnormal (tie -> 2)", 2.5 * h);
    row("f16 max subnormal", 1023 * h);
    row("f16 between max subnormal and min normal (tie -> even 0x400)", 1023.5 * h);
    row("f16 min normal", std::ldexp(1.0, -14));
    row("f16 max", 65504.0);
    row("f16 65519.99", 65519.99);
    row("f16 65519.99 (f32)", double(65519.99f));
    row("f16 overflow threshold 65520", 65520.0);
    row("f16 65536", 65536.0);
    row("1 + half ulp f16 (tie -> 1)", 1.0 + std::ldexp(1.0, -11));
    row("1 + 1.5 ulp f16 (tie -> 1+2ulp)", 1.0 + 3 * std::ldexp(1.0, -11));
    row("-(1 + half ulp f16)", -(1.0 + std::ldexp(1.0, -11)));
    row("1 + half ulp bf16 (tie -> 1)", 1.0 + std::ldexp(1.0, -8));
    row("1 + 1.5 ulp bf16 (tie -> up)", 1.0 + 3 * std::ldexp(1.0, -8));
    row("bf16 max", std::ldexp(255.0, 120));
    row("bf16 overflow tie", std::ldexp(511.0, 119));
    row("bf16 just below overflow tie", std::nextafter(std::ldexp(511.0, 119), 0.0));
    row("float32 max", double(std::numeric_limits<float>::max()));
    row("bf16 min subnormal", std::ldexp(1.0, -133));
    row("bf16 half min subnormal", std::ldexp(1.0, -134));
    row("e4m3 448", 448.0);
    row("e4m3 464 (tie -> 448)", 464.0);
    row("e4m3 465", 465.0);
    row("e4m3 min subnormal", std::ldexp(1.0, -9));
    row("e4m3 half min subnormal", std::ldexp(1.0, -10));
    row("e5m2 57344", 57344.0);
    row("e5m2 61440 (tie -> inf)", 61440.0);
    row("e5m2 61439", 61439.0);
    row("0.1", 0.1);
    row("-3.5", -3.5);
    row("1e-5", 1e-5);
    row("1e-10", 1e-10);
    row("double min subnormal", std::numeric_limits<double>::denorm_min());
    row("double max", std::numeric_limits<double>::max());
    row("inf", std::numeric_limits<double>::infinity());
    row("-inf", -std::numeric_limits<double>::infinity());
}

void TestNumeric::edges() {
    FETCH(double, x);
    for (DType d : kNarrow) {
        const Reference& ref = reference(d);
        for (bool sat : {false, true}) {
            const auto mode = sat ? Overflow::Saturate : Overflow::Ieee;
            const std::uint64_t want = ref.encode(x, sat);
            const std::uint64_t got = encode_bits(x, d, mode);
            if (got != want)
                FAIL_TEST(arg_text(dtype_name(d).data()) + arg_text(sat ? " (saturating)" : "") +
                          ": got " + hex(got) + ", reference " + hex(want));
        }
    }
    // The float32 fast paths, where x is a float32 value.
    if (double(float(x)) == x || std::isinf(x)) {
        const float f = float(x);
        CHECK_EQ(hex(float_to_half_bits(f)), hex(reference(DType::Float16).encode(x)));
        CHECK_EQ(hex(float_to_bfloat16_bits(f)), hex(reference(DType::BFloat16).encode(x)));
    }
}

// Every interval between neighbouring values: the midpoint (a tie) and its float32 and float64
// neighbours on either side, positive and negative; this crosses the subnormal range, min
// normal, every binade, and the overflow threshold (the last interval ends at the virtual max+ulp).
void TestNumeric::tiesAndNeighboursEveryInterval_data() {
    add_column<DType>("dtype");
    for (DType d : kNarrow) new_row(dtype_name(d).data()) << d;
}

void TestNumeric::tiesAndNeighboursEveryInterval() {
    FETCH(DType, dtype);
    const Reference& ref = reference(dtype);
    const bool sixteen = dtype == DType::Float16 || dtype == DType::BFloat16;
    std::size_t checked = 0;
    for (std::size_t i = 0; i + 1 < ref.values.size(); ++i) {
        const double mid = (ref.values[i] + ref.values[i + 1]) / 2; // exact
        const double inputs[] = {mid,
                                 std::nextafter(mid, 0.0),
                                 std::nextafter(mid, INFINITY),
                                 double(std::nextafter(float(mid), 0.0f)),
                                 double(std::nextafter(float(mid), INFINITY)),
                                 ref.values[i]};
        for (double v : inputs) {
            for (double x : {v, -v}) {
                const std::uint64_t want = ref.encode(x);
                const std::uint64_t got = encode_bits(x, dtype);
                if (got != want)
                    FAIL_TEST("x=" + format("%.17g", double(x)) + ": got " + hex(got) +
                              ", reference " + hex(want));
                if (sixteen && double(float(x)) == x) {
                    const std::uint16_t fast = dtype == DType::Float16
                                                   ? float_to_half_bits(float(x))
                                                   : float_to_bfloat16_bits(float(x));
                    if (fast != want)
                        FAIL_TEST("fast x=" + format("%.17g", double(x)) + ": got " + hex(fast) +
                                  ", reference " + hex(want));
                }
                ++checked;
            }
        }
    }
    CHECK(checked > 12 * (ref.values.size() - 1) - 1);
}

void TestNumeric::randomDoublesMatchReference_data() {
    add_column<DType>("dtype");
    for (DType d : kNarrow) new_row(dtype_name(d).data()) << d;
}

void TestNumeric::randomDoublesMatchReference() {
    FETCH(DType, dtype);
    const Reference& ref = reference(dtype);
    std::mt19937_64 rng(1234);
    const FloatFormat& f = float_format(dtype);
    // Exponents from well below min_subnormal to well above max, uniformly.
    const int lo = std::ilogb(f.min_subnormal) - 3, hi = std::ilogb(f.max_finite) + 3;
    std::uniform_int_distribution<int> exponent(lo, hi);
    std::uniform_real_distribution<double> mantissa(1.0, 2.0);
    for (int i = 0; i < 100000; ++i) {
        double x = std::ldexp(mantissa(rng), exponent(rng));
        if (rng() & 1) x = -x;
        const bool sat = (i % 3) == 0;
        const std::uint64_t want = ref.encode(x, sat);
        const std::uint64_t got = encode_bits(x, dtype, sat ? Overflow::Saturate : Overflow::Ieee);
        if (got != want)
            FAIL_TEST("x=" + format("%.17g", double(x)) + ": got " + hex(got) + ", reference " +
                      hex(want));
    }
}

// The fast float32 paths against the reference encoder over a wide sweep of float32 patterns
// (every 97th, so every exponent and many fractions, NaNs included) plus random ones.
void TestNumeric::fastPathsAgreeWithEncodeSweep() {
    const auto check = [](std::uint32_t b) {
        const float f = f32_from(b);
        const double d = decode_bits(b, DType::Float32); // exact, NaN payload kept
        const auto h = static_cast<std::uint16_t>(encode_bits(d, DType::Float16));
        const auto bf = static_cast<std::uint16_t>(encode_bits(d, DType::BFloat16));
        return float_to_half_bits(f) == h && float_to_bfloat16_bits(f) == bf;
    };
    std::uint64_t checked = 0;
    for (std::uint64_t b = 0; b <= 0xFFFFFFFFull; b += 97, ++checked)
        if (!check(static_cast<std::uint32_t>(b)))
            FAIL_TEST("fast path differs from encode_bits at float32 " + hex(b));
    std::mt19937 rng(42);
    for (int i = 0; i < 1000000; ++i, ++checked)
        if (const std::uint32_t b = rng(); !check(b))
            FAIL_TEST("fast path differs from encode_bits at float32 " + hex(b));
    CHECK(checked > 45000000);
}

void TestNumeric::float32EncodeMatchesHardwareCast() {
    // float32 is rounded by the same generic code; the hardware cast is an independent reference.
    std::mt19937_64 rng(7);
    for (int i = 0; i < 200000; ++i) {
        const double x = std::bit_cast<double>(rng());
        if (std::isnan(x)) continue;
        const auto want = f32_bits(static_cast<float>(x));
        const auto got = encode_bits(x, DType::Float32);
        if (got != want) FAIL_TEST("float32 encode differs at " + hex(f32_bits(float(x))));
    }
    CHECK_EQ(encode_bits(0.1, DType::Float64), std::bit_cast<std::uint64_t>(0.1));
    CHECK_EQ(decode_bits(std::bit_cast<std::uint64_t>(-2.5), DType::Float64), -2.5);
}

void TestNumeric::kerasGuideFacts() {
    const DType f16 = DType::Float16;
    // float16 overflows above 65504: 256 * 256 = 65536 -> inf.
    const double x = round_to_dtype(256.0, f16);
    CHECK_EQ(x, 256.0);
    CHECK_EQ(classify_bits(encode_bits(x * x, f16), f16), FloatClass::Infinity);
    CHECK_EQ(encode_bits(x * x, f16), std::uint64_t(0x7C00));
    CHECK_EQ(half_bits_to_float(float_to_half_bits(256.0f * 256.0f)), INFINITY);
    // ... and underflows below about 6e-8: (1e-5)^2 = 1e-10 -> 0.
    const double y = round_to_dtype(1e-5, f16);
    CHECK(y > 0);
    CHECK_EQ(classify_bits(encode_bits(y, f16), f16), FloatClass::Subnormal);
    CHECK_EQ(round_to_dtype(y * y, f16), 0.0);
    CHECK_EQ(float_format(f16).max_finite, 65504.0);
    CHECK_EQ(float_format(f16).min_subnormal, std::ldexp(1.0, -24));
    CHECK(std::fabs(float_format(f16).min_subnormal - 5.96e-8) < 0.01e-8);
    // bfloat16 keeps float32's range: 256^2 and 1e-10 are fine there.
    CHECK_EQ(round_to_dtype(65536.0, DType::BFloat16), 65536.0);
    CHECK(round_to_dtype(1e-10, DType::BFloat16) > 0);
}

void TestNumeric::fp8Facts_data() {
    add_column<DType>("dtype");
    add_column<double>("x");
    add_column<std::uint64_t>("ieee");
    add_column<std::uint64_t>("saturating");
    const double inf = std::numeric_limits<double>::infinity();
    new_row("e4m3 448") << DType::Float8E4M3 << 448.0 << 0x7Eull << 0x7Eull;
    new_row("e4m3 464 ties to 448") << DType::Float8E4M3 << 464.0 << 0x7Eull << 0x7Eull;
    new_row("e4m3 465 overflows") << DType::Float8E4M3 << 465.0 << 0x7Full << 0x7Eull;
    new_row("e4m3 -465") << DType::Float8E4M3 << -465.0 << 0xFFull << 0xFEull;
    new_row("e4m3 1e6") << DType::Float8E4M3 << 1e6 << 0x7Full << 0x7Eull;
    new_row("e4m3 inf") << DType::Float8E4M3 << inf << 0x7Full << 0x7Eull;
    new_row("e4m3 256 (exponent 15 is finite)") << DType::Float8E4M3 << 256.0 << 0x78ull << 0x78ull;
    new_row("e4m3 min subnormal") << DType::Float8E4M3 << std::ldexp(1.0, -9) << 0x01ull << 0x01ull;
    new_row("e5m2 57344") << DType::Float8E5M2 << 57344.0 << 0x7Bull << 0x7Bull;
    new_row("e5m2 61439") << DType::Float8E5M2 << 61439.0 << 0x7Bull << 0x7Bull;
    new_row("e5m2 61440 ties to inf") << DType::Float8E5M2 << 61440.0 << 0x7Cull << 0x7Bull;
    new_row("e5m2 -inf") << DType::Float8E5M2 << -inf << 0xFCull << 0xFBull;
    new_row("e5m2 min subnormal") << DType::Float8E5M2 << std::ldexp(1.0, -16) << 0x01ull
                                  << 0x01ull;
}

void TestNumeric::fp8Facts() {
    FETCH(DType, dtype);
    FETCH(double, x);
    FETCH(std::uint64_t, ieee);
    FETCH(std::uint64_t, saturating);
    CHECK_EQ(hex(encode_bits(x, dtype)), hex(ieee));
    CHECK_EQ(hex(encode_bits(x, dtype, Overflow::Saturate)), hex(saturating));
}

void TestNumeric::singleRoundingFromDouble() {
    // x = 1 + 2^-11 + 2^-30: just above the float16 tie between 1 and 1 + 2^-10, so one rounding
    // gives 1 + 2^-10. Through float32 first, the 2^-30 is lost, leaving an exact tie -> 1.0.
    const double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30);
    CHECK_EQ(hex(encode_bits(x, DType::Float16)), hex(0x3C01));
    CHECK_EQ(hex(float_to_half_bits(float(x))), hex(0x3C00)); // the double rounding
    CHECK_EQ(hex(reference(DType::Float16).encode(x)), hex(0x3C01));
    // Same for bfloat16 and e4m3.
    const double y = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30);
    CHECK_EQ(hex(encode_bits(y, DType::BFloat16)), hex(0x3F81));
    CHECK_EQ(hex(float_to_bfloat16_bits(float(y))), hex(0x3F80));
    const double z = 1.0 + std::ldexp(1.0, -4) + std::ldexp(1.0, -40);
    CHECK_EQ(hex(encode_bits(z, DType::Float8E4M3)), hex(0x39));
    // The bulk double path rounds once too.
    std::uint16_t out = 0;
    convert_from_double(&x, &out, DType::Float16, 1);
    CHECK_EQ(hex(out), hex(0x3C01));
}

void TestNumeric::nanAndSignedZero_data() {
    add_column<DType>("dtype");
    add_column<std::uint64_t>("zero");
    add_column<std::uint64_t>("negZero");
    add_column<std::uint64_t>("nan");
    add_column<std::uint64_t>("negNan");
    add_column<std::uint64_t>("inf");
    new_row("float32") << DType::Float32 << 0x0ull << 0x80000000ull << 0x7FC00000ull
                       << 0xFFC00000ull << 0x7F800000ull;
    new_row("float16") << DType::Float16 << 0x0ull << 0x8000ull << 0x7E00ull << 0xFE00ull
                       << 0x7C00ull;
    new_row("bfloat16") << DType::BFloat16 << 0x0ull << 0x8000ull << 0x7FC0ull << 0xFFC0ull
                        << 0x7F80ull;
    new_row("e4m3") << DType::Float8E4M3 << 0x0ull << 0x80ull << 0x7Full << 0xFFull
                    << 0x7Full; // no infinity: inf -> NaN
    new_row("e5m2") << DType::Float8E5M2 << 0x0ull << 0x80ull << 0x7Eull << 0xFEull << 0x7Cull;
}

void TestNumeric::nanAndSignedZero() {
    FETCH(DType, dtype);
    FETCH(std::uint64_t, zero);
    FETCH(std::uint64_t, negZero);
    FETCH(std::uint64_t, nan);
    FETCH(std::uint64_t, negNan);
    FETCH(std::uint64_t, inf);
    const double qnan = std::numeric_limits<double>::quiet_NaN();
    CHECK_EQ(hex(encode_bits(0.0, dtype)), hex(zero));
    CHECK_EQ(hex(encode_bits(-0.0, dtype)), hex(negZero));
    CHECK(std::signbit(round_to_dtype(-0.0, dtype)));
    CHECK(std::signbit(round_to_dtype(-1e-300, dtype))); // underflow keeps the sign
    CHECK_EQ(hex(encode_bits(qnan, dtype)), hex(nan));
    CHECK_EQ(hex(encode_bits(-qnan, dtype)), hex(negNan));
    CHECK_EQ(hex(encode_bits(INFINITY, dtype)), hex(inf));
    CHECK(std::isnan(round_to_dtype(qnan, dtype)));
    CHECK(std::signbit(round_to_dtype(-qnan, dtype)));
    // A signalling NaN whose kept payload vanishes becomes the quiet NaN, never inf.
    const double snan = std::bit_cast<double>(0x7FF0000000000001ull);
    CHECK_EQ(classify_bits(encode_bits(snan, dtype), dtype), FloatClass::NaN);
}

void TestNumeric::classifyAndSplit_data() {
    add_column<DType>("dtype");
    add_column<std::uint64_t>("bits");
    add_column<std::string>("cls");
    add_column<std::string>("fields"); // sign|exponent|mantissa in binary
    new_row("f16 max") << DType::Float16 << 0x7BFFull << "normal"
                       << "0|11110|1111111111";
    new_row("f16 inf") << DType::Float16 << 0x7C00ull << "inf"
                       << "0|11111|0000000000";
    new_row("f16 nan") << DType::Float16 << 0xFE00ull << "nan"
                       << "1|11111|1000000000";
    new_row("f16 sub") << DType::Float16 << 0x0001ull << "subnormal"
                       << "0|00000|0000000001";
    new_row("f16 -0") << DType::Float16 << 0x8000ull << "zero"
                      << "1|00000|0000000000";
    new_row("bf16 1") << DType::BFloat16 << 0x3F80ull << "normal"
                      << "0|01111111|0000000";
    new_row("e4m3 448") << DType::Float8E4M3 << 0x7Eull << "normal"
                        << "0|1111|110";
    new_row("e4m3 nan") << DType::Float8E4M3 << 0x7Full << "nan"
                        << "0|1111|111";
    new_row("e5m2 inf") << DType::Float8E5M2 << 0xFCull << "inf"
                        << "1|11111|00";
    new_row("e5m2 nan") << DType::Float8E5M2 << 0x7Dull << "nan"
                        << "0|11111|01";
    new_row("f32 1") << DType::Float32 << 0x3F800000ull << "normal"
                     << "0|01111111|00000000000000000000000";
    new_row("f64 sub") << DType::Float64 << 0x1ull << "subnormal"
                       << "0|00000000000|" + std::string(51, '0') + "1";
}

void TestNumeric::classifyAndSplit() {
    FETCH(DType, dtype);
    FETCH(std::uint64_t, bits);
    FETCH(std::string, cls);
    FETCH(std::string, fields);
    CHECK_EQ(std::string(float_class_name(classify_bits(bits, dtype))), cls);
    const FloatFormat& f = float_format(dtype);
    const BitFields s = split_bits(bits, dtype);
    const std::string got = arg_text(s.sign) + "|" + binary(s.exponent, f.exponent_bits) + "|" +
                            binary(s.mantissa, f.mantissa_bits);
    CHECK_EQ(got, fields);
}

// The bulk functions against the scalar reference on data with specials and an odd length
// (so the vectorised blocks and the scalar tail both run).
void TestNumeric::bulkConversionsMatchScalar_data() {
    add_column<DType>("dtype");
    for (DType d : floating_dtypes()) new_row(dtype_name(d).data()) << d;
}

void TestNumeric::bulkConversionsMatchScalar() {
    FETCH(DType, dtype);
    std::mt19937 rng(99);
    std::vector<float> src = {0.0f,     -0.0f,    INFINITY, -INFINITY, NAN,    -NAN,
                              65504.0f, 65520.0f, 448.0f,   464.0f,    465.0f, 57344.0f,
                              61440.0f, 1e-5f,    1e-10f,   0x1p-25f};
    std::uniform_int_distribution<int> e(-30, 20);
    std::normal_distribution<float> n(0.0f, 1.0f);
    while (src.size() < 64 * 41 + 37) src.push_back(std::ldexp(n(rng), e(rng)));
    const std::size_t count = src.size(), width = dtype_size(dtype);

    // float32 -> dtype
    std::vector<unsigned char> stored(count * width);
    convert_from_float(src.data(), stored.data(), dtype, count);
    const auto stored_bits = [&](std::size_t i) {
        std::uint64_t b = 0;
        std::memcpy(&b, stored.data() + i * width, width); // little-endian
        return b;
    };
    for (std::size_t i = 0; i < count; ++i) {
        const double x = decode_bits(f32_bits(src[i]), DType::Float32);
        if (stored_bits(i) != encode_bits(x, dtype))
            FAIL_TEST("convert_from_float at " + arg_text(i) + " (" + arg_text(src[i]) + ")");
    }
    // dtype -> float32 / float64
    std::vector<float> back(count);
    std::vector<double> back64(count);
    convert_to_float(stored.data(), dtype, back.data(), count);
    convert_to_double(stored.data(), dtype, back64.data(), count);
    for (std::size_t i = 0; i < count; ++i) {
        const double want = decode_bits(stored_bits(i), dtype);
        CHECK(same_bits(back64[i], want));
        if (std::isnan(want))
            CHECK(std::isnan(back[i]) && std::signbit(back[i]) == std::signbit(want));
        else
            CHECK_EQ(back[i], float(want)); // float64 -> float32 rounds; others exact
    }
    // round_in_place == decode(encode(x)) in float32
    std::vector<float> rounded = src;
    round_in_place(rounded.data(), count, dtype);
    for (std::size_t i = 0; i < count; ++i) {
        const double want =
            dtype == DType::Float64 ? double(src[i]) : round_to_dtype(src[i], dtype);
        if (std::isnan(want))
            CHECK(std::isnan(rounded[i]));
        else if (rounded[i] != float(want) || std::signbit(rounded[i]) != std::signbit(want))
            FAIL_TEST("round_in_place at " + arg_text(i) + ": " + arg_text(src[i]));
    }
    // float64 -> dtype rounds once
    std::vector<double> src64(count);
    for (std::size_t i = 0; i < count; ++i) src64[i] = double(src[i]) * (1.0 + 1e-12);
    convert_from_double(src64.data(), stored.data(), dtype, count);
    for (std::size_t i = 0; i < count; ++i)
        if (stored_bits(i) != encode_bits(src64[i], dtype))
            FAIL_TEST("convert_from_double at " + arg_text(i));
}

void TestNumeric::convertAnyToAny() {
    // Every 16-bit pattern float16 -> bfloat16 / e4m3 / float32 matches decode-then-encode.
    std::vector<std::uint16_t> all(65536);
    for (std::uint32_t b = 0; b < 65536; ++b) all[b] = static_cast<std::uint16_t>(b);
    for (DType to : {DType::BFloat16, DType::Float8E4M3, DType::Float8E5M2, DType::Float32,
                     DType::Float64, DType::Float16}) {
        const std::size_t width = dtype_size(to);
        std::vector<unsigned char> out(all.size() * width);
        convert(all.data(), DType::Float16, out.data(), to, all.size());
        for (std::uint32_t b = 0; b < 65536; ++b) {
            std::uint64_t got = 0;
            std::memcpy(&got, out.data() + b * width, width);
            const std::uint64_t want = encode_bits(decode_bits(b, DType::Float16), to);
            if (got != want)
                FAIL_TEST("float16 " + hex(b) + " -> " + arg_text(dtype_name(to).data()) +
                          ": got " + hex(got) + ", want " + hex(want));
        }
    }
}

void TestNumeric::integerDtypes() {
    const std::uint8_t pixels[] = {0, 1, 128, 255};
    float f[4];
    convert_to_float(pixels, DType::UInt8, f, 4);
    CHECK_EQ(f[3], 255.0f);
    const std::int32_t labels[] = {-7, 0, 9};
    double d[3];
    convert_to_double(labels, DType::Int32, d, 3);
    CHECK_EQ(d[0], -7.0);
    const float in[] = {-3.0f, 2.5f, 3.5f, 300.0f, NAN};
    std::uint8_t out[5];
    convert_from_float(in, out, DType::UInt8, 5);
    CHECK_EQ(int(out[0]), 0); // saturated
    CHECK_EQ(int(out[1]), 2); // ties to even
    CHECK_EQ(int(out[2]), 4);
    CHECK_EQ(int(out[3]), 255); // saturated
    CHECK_EQ(int(out[4]), 0);   // NaN
    std::uint16_t h[4];
    convert(pixels, DType::UInt8, h, DType::Float16, 4);
    CHECK_EQ(half_bits_to_float(h[3]), 255.0f);
}

MANTISSA_TEST_MAIN(TestNumeric, formatTable, nonFloatDtypesAreRejected, all16BitPatternsRoundTrip,
                   allFp8PatternsRoundTrip, referenceListMatchesDecode, edges,
                   tiesAndNeighboursEveryInterval, randomDoublesMatchReference,
                   fastPathsAgreeWithEncodeSweep, float32EncodeMatchesHardwareCast, kerasGuideFacts,
                   fp8Facts, singleRoundingFromDouble, nanAndSignedZero, classifyAndSplit,
                   bulkConversionsMatchScalar, convertAnyToAny, integerDtypes)
