// Tests of core/numeric/element_format and block_quant against an independent reference written in
// this file from the format definitions (OCP OFP8 §5.1, OCP MX v1.0 §5.3-§5.4.1 and §6.3): every
// code's value is sign x 2^(e - bias) x (1 + m / 2^M) built from integers, and rounding is an
// exhaustive nearest search whose comparisons are exact (a value is compared with the midpoint of
// two candidates, a dyadic rational that float64 holds exactly; quotients by a scale are compared
// as cross products, also exact). The reference shares no code with the engine.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "core/error.h"
#include "core/numeric/block_quant.h"
#include "core/numeric/element_codec.h"
#include "core/numeric/element_format.h"
#include "core/numeric/element_inspect.h"
#include "core/numeric/float_format.h"
#include "core/numeric/half.h"
#include "core/numeric/quant_math.h"
#include "core/numeric/quant_recipe.h"
#include "core/numeric/tensor_quant.h"
#include "tests/unit/check_throws.h"
#include "tests/unit/codec_sweep.h"
#include "tests/unit/files.h"
#include "tests/unit/format.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---------------------------------------------------------------- the reference (no engine code)
namespace ref {

struct Fmt {
    int width, E, M, bias;
    bool ieee_top; // E5M2: the all-ones exponent holds inf (m = 0) and NaN
    bool fn;       // E4M3: only S.1111.111 is NaN
    double max;    // from the issue / spec text, not computed
    int emax_elem; // MX §6.3
};

Fmt fmt(ElementFormat f) {
    switch (f) {
    case ElementFormat::Float8E4M3:
        return {8, 4, 3, 7, false, true, 448, 8};
    case ElementFormat::Float8E5M2:
        return {8, 5, 2, 15, true, false, 57344, 15};
    case ElementFormat::Float6E3M2:
        return {6, 3, 2, 3, false, false, 28, 4};
    case ElementFormat::Float6E2M3:
        return {6, 2, 3, 1, false, false, 7.5, 2};
    case ElementFormat::Float4E2M1:
        return {4, 2, 1, 1, false, false, 6, 2};
    case ElementFormat::E8M0:
        break;
    }
    return {8, 8, 0, 127, false, false, 0, 0};
}

enum class Kind { Finite, Inf, NaN };

Kind kind(const Fmt& f, std::uint32_t code) {
    const std::uint32_t e = (code >> f.M) & ((1u << f.E) - 1), m = code & ((1u << f.M) - 1);
    if (f.ieee_top && e == (1u << f.E) - 1) return m == 0 ? Kind::Inf : Kind::NaN;
    if (f.fn && e == (1u << f.E) - 1 && m == (1u << f.M) - 1) return Kind::NaN;
    return Kind::Finite;
}

// The definition: subnormal 2^(1 - bias) * m / 2^M, normal 2^(e - bias) * (2^M + m) / 2^M.
double value(const Fmt& f, std::uint32_t code) {
    const std::uint32_t sign = (code >> (f.width - 1)) & 1u;
    const int e = static_cast<int>((code >> f.M) & ((1u << f.E) - 1));
    const int m = static_cast<int>(code & ((1u << f.M) - 1));
    switch (kind(f, code)) {
    case Kind::Inf:
        return sign ? -kInf : kInf;
    case Kind::NaN:
        return kNaN;
    case Kind::Finite:
        break;
    }
    const double mag =
        e == 0 ? std::ldexp(m, 1 - f.bias - f.M) : std::ldexp((1 << f.M) + m, e - f.bias - f.M);
    return sign ? -mag : mag;
}

// Nearest finite code to a / d (d > 0; d = 1 for a plain value), ties to the even code, with
// saturation (the exhaustive search over finite values finds ±max beyond the range by itself).
// |a| < mid * d compares |a| / d with the midpoint exactly when mid * d is exact.
std::uint32_t nearest(const Fmt& f, double a, double d = 1.0) {
    const std::uint32_t sign = std::signbit(a) ? 1u << (f.width - 1) : 0u;
    const double A = std::fabs(a);
    bool have = false;
    std::uint32_t best = 0;
    for (std::uint32_t mag = 0; mag < (1u << (f.width - 1)); ++mag) {
        const std::uint32_t c = sign | mag;
        if (kind(f, c) != Kind::Finite) continue;
        if (!have) {
            best = c, have = true;
            continue;
        }
        const double vb = std::fabs(value(f, best)), vc = std::fabs(value(f, c));
        const double lo = std::min(vb, vc), hi = std::max(vb, vc);
        const double mid = (lo + hi) / 2 * d;
        const std::uint32_t lo_code = vb < vc ? best : c, hi_code = vb < vc ? c : best;
        if (A < mid)
            best = lo_code;
        else if (A > mid)
            best = hi_code;
        else
            best = (lo_code & 1u) == 0 ? lo_code : hi_code; // a tie: the even code
    }
    return best;
}

// Round to nearest with saturation; inf saturates; NaN per the format (FP6/FP4: +0, documented).
std::uint32_t encode(const Fmt& f, double x) {
    const std::uint32_t sign = std::signbit(x) ? 1u << (f.width - 1) : 0u;
    if (std::isnan(x)) {
        if (f.fn) return sign | ((1u << (f.width - 1)) - 1); // S.1111.111
        if (f.ieee_top) return sign | 0x7E;                  // a quiet NaN
        return 0;
    }
    if (std::isinf(x)) return nearest(f, x > 0 ? 1e300 : -1e300);
    return nearest(f, x);
}

// E8M0: 2^(e - 127), e = 0..254; 255 is NaN.
double e8m0_value(std::uint32_t e) {
    return e == 255 ? kNaN : std::ldexp(1.0, static_cast<int>(e) - 127);
}

// Nearest power of two by a scan: the largest e with 2^(e-127) <= x, then the midpoint with the
// next one (1.5 * 2^k, exact) decides; the midpoint goes up (the documented tie rule).
std::uint32_t e8m0_encode(double x) {
    if (std::isnan(x) || std::isinf(x) || (x < 0)) return 255;
    std::uint32_t e = 0;
    while (e < 254 && e8m0_value(e + 1) <= x) ++e;
    if (e < 254 && x >= (e8m0_value(e) + e8m0_value(e + 1)) / 2) ++e;
    return e;
}

struct Block {
    double scale = 0; // NaN for a NaN scale
    std::uint32_t scale_code = 0;
    std::vector<std::uint32_t> codes;
    std::vector<double> decoded;
    int clipped = 0, zeros = 0;
};

// MX, from MX §6.3 (floor) and the ceil rule's definition, with loops instead of logarithms.
Block mx(const std::vector<double>& v, ElementFormat ef, bool ceil_rule) {
    const Fmt f = fmt(ef);
    Block b;
    double amax = 0;
    bool special = false;
    for (double x : v) {
        special = special || !std::isfinite(x);
        if (std::isfinite(x)) amax = std::max(amax, std::fabs(x));
    }
    if (special) {
        b.scale = kNaN;
        b.scale_code = 0xFF;
        b.codes.assign(v.size(), 0);
        b.decoded.assign(v.size(), kNaN);
        return b;
    }
    int k = -127;
    if (amax > 0) {
        if (ceil_rule) {
            k = -400; // the smallest k with amax / 2^k <= max
            while (amax > std::ldexp(f.max, k)) ++k;
        } else {
            int e = 0; // floor(log2 amax)
            while (std::ldexp(1.0, e) > amax) --e;
            while (std::ldexp(1.0, e + 1) <= amax) ++e;
            k = e - f.emax_elem;
        }
        k = std::max(-127, std::min(127, k));
    }
    b.scale = std::ldexp(1.0, k);
    b.scale_code = static_cast<std::uint32_t>(k + 127);
    for (double x : v) {
        const std::uint32_t c = nearest(f, x, b.scale);
        b.codes.push_back(c);
        const double d = value(f, c) * b.scale;
        b.decoded.push_back(d);
        b.clipped += std::fabs(x) > f.max * b.scale ? 1 : 0;
        b.zeros += (x != 0 && d == 0) ? 1 : 0;
    }
    return b;
}

// The float32 nearest to amax / 2688, by comparing exact differences with the neighbours of the
// float64 quotient's float32 (2688 * c is exact; amax - 2688 * c is exact by Sterbenz).
float nv_global(double amax) {
    if (amax == 0) return 0.0f;
    float best = static_cast<float>(amax / 2688.0);
    for (int i = 0; i < 2; ++i) best = std::nextafter(best, 0.0f);
    float c = best;
    for (int i = 0; i < 5; ++i, c = std::nextafter(c, std::numeric_limits<float>::infinity())) {
        const double dc = std::fabs(amax - 2688.0 * c), db = std::fabs(amax - 2688.0 * best);
        const bool c_even = (std::bit_cast<std::uint32_t>(c) & 1u) == 0;
        if (dc < db || (dc == db && c_even)) best = c;
    }
    return best;
}

Block nvfp4(const std::vector<double>& v, float s_global) {
    const Fmt e4m3 = fmt(ElementFormat::Float8E4M3), e2m1 = fmt(ElementFormat::Float4E2M1);
    Block b;
    double amax = 0;
    for (double x : v) amax = std::max(amax, std::fabs(x));
    b.scale_code = amax == 0 ? 0 : nearest(e4m3, amax, 6.0 * s_global);
    b.scale = value(e4m3, b.scale_code);
    const double eff = b.scale * s_global;
    for (double x : v) {
        const std::uint32_t c = eff == 0 ? (std::signbit(x) ? 8u : 0u) : nearest(e2m1, x, eff);
        b.codes.push_back(c);
        const double d = value(e2m1, c) * eff;
        b.decoded.push_back(d);
        b.clipped += eff != 0 && std::fabs(x) > 6.0 * eff ? 1 : 0;
        b.zeros += (x != 0 && d == 0) ? 1 : 0;
    }
    return b;
}

} // namespace ref

// -------------------------------------------------------------------------------- helpers

bool same(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return a == b && std::signbit(a) == std::signbit(b);
}

const ElementFormat kSigned[] = {ElementFormat::Float8E4M3, ElementFormat::Float8E5M2,
                                 ElementFormat::Float6E3M2, ElementFormat::Float6E2M3,
                                 ElementFormat::Float4E2M1};

// Values that probe every rounding decision of a format: each finite value, each midpoint between
// neighbours (ties), the doubles either side of them, quarter points, and beyond the range.
std::vector<double> probes(ElementFormat ef) {
    const ref::Fmt f = ref::fmt(ef);
    std::vector<double> mags;
    for (std::uint32_t c = 0; c < (1u << (f.width - 1)); ++c)
        if (ref::kind(f, c) == ref::Kind::Finite) mags.push_back(ref::value(f, c));
    std::vector<double> out;
    for (std::size_t i = 0; i < mags.size(); ++i) {
        out.push_back(mags[i]);
        if (i + 1 < mags.size()) {
            const double lo = mags[i], hi = mags[i + 1], mid = (lo + hi) / 2;
            out.push_back(mid);
            out.push_back(std::nextafter(mid, 0.0));
            out.push_back(std::nextafter(mid, kInf));
            out.push_back(lo + (hi - lo) / 4);
            out.push_back(hi - (hi - lo) / 4);
        }
    }
    const double max = mags.back();
    for (double x : {max * 1.01, max * 1.5, max * 4, 1e30, std::nextafter(max, kInf)})
        out.push_back(x);
    const std::size_t n = out.size();
    for (std::size_t i = 0; i < n; ++i) out.push_back(-out[i]);
    return out;
}

} // namespace

class TestBlockQuant {
public:
    void formats_data() {
        add_column<ElementFormat>("format");
        for (ElementFormat f : kSigned) new_row(std::string(element_format_name(f)).c_str()) << f;
    }

    // Every code: the engine decodes it to the definition's value and encodes that value back to
    // the same code (both zeros included); NaN codes decode to NaN.
    void everyCodeRoundTrips_data() { formats_data(); }
    void everyCodeRoundTrips() {
        FETCH(ElementFormat, format);
        const ref::Fmt f = ref::fmt(format);
        int finite = 0;
        for (std::uint32_t c = 0; c < (1u << f.width); ++c) {
            const double want = ref::value(f, c);
            CHECK_MSG(same(decode_element(c, format), want),
                      ("code 0x" + unit::format("%llx", static_cast<unsigned long long>(c))));
            if (ref::kind(f, c) == ref::Kind::Finite) {
                ++finite;
                CHECK_EQ(encode_element(want, format), c);
                CHECK_EQ(encode_element_stochastic(want, format, 0xFFFFFFFFu), c); // exact: no step
            }
        }
        // 2^width codes less NaNs and infinities: E4M3 2 NaNs; E5M2 2 infs + 6 NaNs; FP6/FP4 none.
        const int expected = format == ElementFormat::Float8E4M3   ? 254
                             : format == ElementFormat::Float8E5M2 ? 248
                                                                   : (1 << f.width);
        CHECK_EQ(finite, expected);
    }

    void limits_data() {
        add_column<ElementFormat>("format");
        add_column<double>("max");
        add_column<double>("min_normal");
        add_column<double>("min_subnormal");
        add_column<int>("emax");
        new_row("e4m3") << ElementFormat::Float8E4M3 << 448.0 << 0x1p-6 << 0x1p-9 << 8;
        new_row("e5m2") << ElementFormat::Float8E5M2 << 57344.0 << 0x1p-14 << 0x1p-16 << 15;
        new_row("e3m2") << ElementFormat::Float6E3M2 << 28.0 << 0.25 << 0.0625 << 4;
        new_row("e2m3") << ElementFormat::Float6E2M3 << 7.5 << 1.0 << 0.125 << 2;
        new_row("e2m1") << ElementFormat::Float4E2M1 << 6.0 << 1.0 << 0.5 << 2;
        new_row("e8m0") << ElementFormat::E8M0 << 0x1p127 << 0x1p-127 << 0x1p-127 << 127;
    }
    void limits() {
        FETCH(ElementFormat, format);
        FETCH(double, max);
        FETCH(double, min_normal);
        FETCH(double, min_subnormal);
        FETCH(int, emax);
        const ElementSpec& s = element_spec(format);
        CHECK(s.max_finite == max);
        CHECK(s.min_normal == min_normal);
        CHECK(s.min_subnormal == min_subnormal);
        CHECK_EQ(s.emax, emax);
        CHECK_EQ(element_format_from_name(s.name), format);
    }

    // FP4 E2M1 holds exactly 0, 0.5, 1, 1.5, 2, 3, 4, 6 (MX §5.3.3), codes 0..7 in order.
    void fp4Values() {
        const double want[] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
        for (std::uint32_t c = 0; c < 8; ++c) {
            CHECK_EQ(decode_element(c, ElementFormat::Float4E2M1), want[c]);
            CHECK_EQ(decode_element(c | 8u, ElementFormat::Float4E2M1), -want[c]);
        }
    }

    // Nearest-even with saturation equals the exhaustive reference on every tie, its neighbours,
    // quarter points, out-of-range values and 20000 random doubles spanning the whole range.
    void roundingMatchesReference_data() { formats_data(); }
    void roundingMatchesReference() {
        FETCH(ElementFormat, format);
        const ref::Fmt f = ref::fmt(format);
        std::vector<double> xs = probes(format);
        std::mt19937_64 rng(1234);
        std::uniform_real_distribution<double> unit(1.0, 2.0);
        std::uniform_int_distribution<int> exp(1 - f.bias - f.M - 3, f.emax_elem + 2);
        for (int i = 0; i < 20000; ++i)
            xs.push_back((i & 1 ? -1 : 1) * std::ldexp(unit(rng), exp(rng)));
        for (double x : {0.0, -0.0, kInf, -kInf, kNaN, -kNaN}) xs.push_back(x);
        for (double x : xs)
            CHECK_MSG(
                encode_element(x, format) == ref::encode(f, x),
                ("x = " + unit::format("%.17g", double(x)) + " (" + unit::format("%a", double(x)) +
                 "): engine 0x" +
                 unit::format("%llx", static_cast<unsigned long long>(encode_element(x, format))) +
                 ", reference 0x" +
                 unit::format("%llx", static_cast<unsigned long long>(ref::encode(f, x)))));
    }

    // Hand-checked ties and saturation, the cases a reader would try first.
    void tiesAndSaturation() {
        const ElementFormat e2m1 = ElementFormat::Float4E2M1, e4m3 = ElementFormat::Float8E4M3;
        // E2M1: 1.25 ties between 1 (0x2, even) and 1.5 (0x3): 1; 1.75 -> 2 (0x4, even); 5 -> 4.
        CHECK_EQ(encode_element(1.25, e2m1), 0x2u);
        CHECK_EQ(encode_element(1.75, e2m1), 0x4u);
        CHECK_EQ(encode_element(5.0, e2m1), 0x6u);
        CHECK_EQ(encode_element(0.25, e2m1), 0x0u);  // half the subnormal 0.5: ties to 0
        CHECK_EQ(encode_element(-0.25, e2m1), 0x8u); // -0 keeps its sign
        CHECK_EQ(encode_element(7.0, e2m1), 0x7u);   // beyond 6: saturates (no inf)
        CHECK_EQ(encode_element(-kInf, e2m1), 0xFu);
        CHECK_EQ(encode_element(kNaN, e2m1), 0x0u);                       // no NaN: +0 (documented)
        CHECK_EQ(encode_element(29.0, ElementFormat::Float6E3M2), 0x1Fu); // 28
        CHECK_EQ(encode_element(7.75, ElementFormat::Float6E2M3), 0x1Fu); // 7.5
        // E4M3: max 448 = S.1111.110; the NaN is S.1111.111 and no value rounds to it.
        CHECK_EQ(encode_element(448.0, e4m3), 0x7Eu);
        CHECK_EQ(encode_element(500.0, e4m3), 0x7Eu);
        CHECK_EQ(encode_element(kNaN, e4m3), 0x7Fu);
        CHECK_EQ(encode_element(0x1p-10, e4m3), 0x0u);                // half of 2^-9: ties to 0
        CHECK_EQ(encode_element(0x1.8p-10, e4m3), 0x1u);              // 0.75 of 2^-9: up
        CHECK_EQ(encode_element(464.0, e4m3, Overflow::Ieee), 0x7Eu); // the tie goes to even 448
        CHECK_EQ(encode_element(465.0, e4m3, Overflow::Ieee), 0x7Fu); // non-saturating: NaN
        CHECK_EQ(encode_element(61440.0, ElementFormat::Float8E5M2, Overflow::Ieee), 0x7Cu);
        CHECK_EQ(encode_element(61440.0, ElementFormat::Float8E5M2), 0x7Bu);
    }

    // The FP8 element codecs agree bit for bit with the engine's storage codec (float_format) in
    // saturating mode, and with its IEEE mode, on every code and a sweep of values.
    void fp8AgreesWithStorageCodec() {
        for (auto [ef, dt] : {std::pair{ElementFormat::Float8E4M3, DType::Float8E4M3},
                              std::pair{ElementFormat::Float8E5M2, DType::Float8E5M2}}) {
            for (std::uint32_t c = 0; c < 256; ++c)
                CHECK(same(decode_element(c, ef), decode_bits(c, dt)));
            std::mt19937_64 rng(7);
            std::uniform_real_distribution<double> u(-70000, 70000);
            for (int i = 0; i < 20000; ++i) {
                const double x = i % 2 ? u(rng) : u(rng) * 1e-5;
                CHECK_EQ(encode_element(x, ef),
                         static_cast<std::uint32_t>(encode_bits(x, dt, Overflow::Saturate)));
                CHECK_EQ(encode_element(x, ef, Overflow::Ieee),
                         static_cast<std::uint32_t>(encode_bits(x, dt, Overflow::Ieee)));
            }
        }
    }

    // E8M0 (MX §5.4.1): 2^(e-127) for every e = 0..254, 0xFF NaN, no zero, no sign.
    void e8m0() {
        for (std::uint32_t e = 0; e < 256; ++e) {
            CHECK(same(decode_element(e, ElementFormat::E8M0), ref::e8m0_value(e)));
            if (e < 255) CHECK_EQ(encode_element(ref::e8m0_value(e), ElementFormat::E8M0), e);
        }
        CHECK_EQ(decode_element(0, ElementFormat::E8M0), 0x1p-127);
        CHECK_EQ(decode_element(254, ElementFormat::E8M0), 0x1p127);
        std::mt19937_64 rng(9);
        std::uniform_real_distribution<double> u(1.0, 2.0);
        std::uniform_int_distribution<int> ex(-140, 140);
        std::vector<double> xs = {0.0,       -0.0,     -1.0, kInf,       kNaN,
                                  1e300,     0x1p-200, 1.5,  0x1.8p-128, std::nextafter(1.5, 0.0),
                                  0x1.8p126, 0x1.8p127};
        for (int i = 0; i < 5000; ++i) xs.push_back(std::ldexp(u(rng), ex(rng)));
        for (double x : xs) {
            const std::uint32_t want = (x == 0) ? 0u : ref::e8m0_encode(x);
            CHECK_MSG(encode_element(x, ElementFormat::E8M0) == want,
                      ("x = " + unit::format("%a", double(x))));
        }
        CHECK_EQ(encode_element(1.5, ElementFormat::E8M0), 128u);                      // tie: up
        CHECK_EQ(encode_element(std::nextafter(1.5, 0.0), ElementFormat::E8M0), 127u); // below: 1
        CHECK_EQ(encode_element(-2.0, ElementFormat::E8M0), 255u);                     // no sign
        CHECK_EQ(encode_element(0.0, ElementFormat::E8M0), 0u); // no zero: clamps to 2^-127
        CHECK_EQ(inspect_element(0.0, ElementFormat::E8M0).outcome, ElementOutcome::ClampedToMin);
        CHECK_EQ(inspect_element(-2.0, ElementFormat::E8M0).outcome, ElementOutcome::NegativeToNaN);
    }

    // Stochastic rounding's expectation is the input, exactly: over all 2^k equally likely
    // random values (only the top k bits matter for an input on a 2^-k sub-grid of the quantum),
    // the decoded values sum to 2^k times the input. Also for subnormals and negatives.
    void stochasticExpectation_data() {
        add_column<ElementFormat>("format");
        add_column<double>("x");
        new_row("e2m1 1.25") << ElementFormat::Float4E2M1 << 1.25;
        new_row("e2m1 4.75") << ElementFormat::Float4E2M1 << 4.75;
        new_row("e2m1 -0.1015625") << ElementFormat::Float4E2M1 << -0.1015625; // sub-grid
        new_row("e2m1 5.9921875") << ElementFormat::Float4E2M1 << 5.9921875;
        new_row("e2m3 3.0390625") << ElementFormat::Float6E2M3 << 3.0390625;
        new_row("e3m2 0.05078125 (subnormal)") << ElementFormat::Float6E3M2 << 0.05078125;
        new_row("e4m3 1.0048828125") << ElementFormat::Float8E4M3 << 1.0048828125;
        new_row("e4m3 -3e-3 grid") << ElementFormat::Float8E4M3 << -0x1.89p-9;
        new_row("e5m2 1000.5") << ElementFormat::Float8E5M2 << 1000.5;
    }
    void stochasticExpectation() {
        FETCH(ElementFormat, format);
        FETCH(double, x);
        constexpr int k = 12;
        double sum = 0; // every term is a short dyadic: the sum is exact
        int up = 0;
        // random 0 never carries: the neighbour toward zero
        const double down = decode_element(encode_element_stochastic(x, format, 0), format);
        for (std::uint32_t t = 0; t < (1u << k); ++t) {
            const double d =
                decode_element(encode_element_stochastic(x, format, t << (32 - k)), format);
            sum += d;
            up += std::fabs(d) > std::fabs(down) ? 1 : 0;
        }
        CHECK_MSG(sum == std::ldexp(x, k), unit::format("%.17g", double(sum)));
        CHECK(up > 0 && up < (1 << k)); // it really rounds both ways
        // Reproducible: the same random value gives the same code.
        CHECK_EQ(encode_element_stochastic(x, format, 0x12345678u),
                 encode_element_stochastic(x, format, 0x12345678u));
    }

    // MX floor vs ceil on the case: amax = 500 in MXFP8 E4M3. floor: X = 2^(8 - 8) = 1,
    // 500 clips to 448; ceil: X = 2, 500 / 2 = 250 -> 256, nothing clips.
    void mxFloorClipsCeilDoesNot() {
        std::vector<double> v = {500, 1, -3.25, 0.001, 7, -448, 0.5, 100};
        BlockQuantConfig c;
        c.format = BlockFormat::MxFp8E4M3;
        const BlockQuantResult fl = quantize_blocks(v, c);
        CHECK_EQ(fl.blocks.size(), std::size_t(1));
        CHECK_EQ(fl.blocks[0].scale.code, std::uint8_t(0x7F));
        CHECK_EQ(fl.blocks[0].scale.value, 1.0);
        CHECK_EQ(fl.blocks[0].clipped, 1);
        CHECK(fl.decoded[0] == 448.0);
        CHECK_EQ(fl.codes[0], std::uint8_t(0x7E));
        c.rule = ScaleRule::Ceil;
        const BlockQuantResult ce = quantize_blocks(v, c);
        CHECK_EQ(ce.blocks[0].scale.code, std::uint8_t(0x80));
        CHECK_EQ(ce.blocks[0].scale.value, 2.0);
        CHECK_EQ(ce.blocks[0].clipped, 0);
        CHECK(ce.decoded[0] == 512.0);
        // The ceil rule's boundary: amax exactly max_elem * 2^k keeps X = 2^k.
        CHECK_EQ(mx_block_scale(448, ElementFormat::Float8E4M3, ScaleRule::Ceil).value, 1.0);
        CHECK_EQ(mx_block_scale(449, ElementFormat::Float8E4M3, ScaleRule::Ceil).value, 2.0);
        CHECK_EQ(mx_block_scale(6, ElementFormat::Float4E2M1, ScaleRule::Ceil).value, 1.0);
        CHECK_EQ(mx_block_scale(6, ElementFormat::Float4E2M1, ScaleRule::Floor).value, 1.0);
        CHECK_EQ(mx_block_scale(7.5, ElementFormat::Float6E2M3, ScaleRule::Ceil).value, 1.0);
        CHECK_EQ(mx_block_scale(8, ElementFormat::Float6E2M3, ScaleRule::Floor).value, 2.0);
        CHECK_EQ(mx_block_scale(57344, ElementFormat::Float8E5M2, ScaleRule::Floor).value, 1.0);
        CHECK_EQ(mx_block_scale(28, ElementFormat::Float6E3M2, ScaleRule::Floor).value, 1.0);
        for (bool ceil_rule : {false, true}) {
            const ref::Block r = ref::mx(v, ElementFormat::Float8E4M3, ceil_rule);
            const BlockQuantResult& e = ceil_rule ? ce : fl;
            CHECK(same(e.blocks[0].scale.value, r.scale));
            for (std::size_t i = 0; i < v.size(); ++i) {
                CHECK_EQ(std::uint32_t(e.codes[i]), r.codes[i]);
                CHECK(same(e.decoded[i], r.decoded[i]));
            }
        }
    }

    // Every MX format and both rules against the reference on random blocks (wide dynamic range,
    // so elements underflow to zero too), including a short last block.
    void mxMatchesReference_data() {
        add_column<BlockFormat>("format");
        for (BlockFormat f : block_formats())
            if (f != BlockFormat::NvFp4) new_row(std::string(block_format_name(f)).c_str()) << f;
    }
    void mxMatchesReference() {
        FETCH(BlockFormat, format);
        const ElementFormat ef = block_format_spec(format).element;
        std::mt19937_64 rng(42);
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        std::uniform_int_distribution<int> ex(-30, 30);
        std::vector<double> v;
        for (int i = 0; i < 32 * 40 + 7; ++i) {
            // Scale each block's values by a block-wide power so blocks differ in magnitude.
            const int block_exp = static_cast<int>((i / 32) % 9) * 7 - 30;
            v.push_back(static_cast<float>(std::ldexp(u(rng), block_exp + ex(rng) / 4)));
        }
        for (ScaleRule rule : {ScaleRule::Floor, ScaleRule::Ceil}) {
            BlockQuantConfig c;
            c.format = format;
            c.rule = rule;
            const BlockQuantResult r = quantize_blocks(v, c);
            CHECK_EQ(r.blocks.size(), std::size_t(41));
            CHECK_EQ(r.blocks.back().count, std::size_t(7));
            std::size_t clipped = 0;
            for (const BlockReport& b : r.blocks) {
                const std::vector<double> part(v.begin() + b.begin, v.begin() + b.begin + b.count);
                const ref::Block want = ref::mx(part, ef, rule == ScaleRule::Ceil);
                CHECK(same(b.scale.value, want.scale));
                CHECK_EQ(std::uint32_t(b.scale.code), want.scale_code);
                CHECK_EQ(b.clipped, want.clipped);
                CHECK_EQ(b.zeros, want.zeros);
                for (std::size_t i = 0; i < b.count; ++i) {
                    CHECK_EQ(std::uint32_t(r.codes[b.begin + i]), want.codes[i]);
                    CHECK(same(r.decoded[b.begin + i], want.decoded[i]));
                }
                clipped += static_cast<std::size_t>(b.clipped);
            }
            CHECK_EQ(r.clipped, clipped);
            if (rule == ScaleRule::Ceil) CHECK_EQ(clipped, std::size_t(0));
        }
    }

    // All-zero, NaN and inf blocks; a block with a subnormal-only tail that flushes to zero.
    void specialBlocks() {
        BlockQuantConfig c;
        c.format = BlockFormat::MxFp4;
        std::vector<double> zeros(32, 0.0);
        zeros[3] = -0.0;
        const BlockQuantResult z = quantize_blocks(zeros, c);
        CHECK_EQ(z.blocks[0].scale.code, std::uint8_t(0x00)); // 2^-127: E8M0 has no zero
        CHECK_EQ(z.blocks[0].zeros, 0);
        CHECK_EQ(z.blocks[0].clipped, 0);
        CHECK_EQ(z.codes[3], std::uint8_t(0x8)); // -0 stays -0
        CHECK(same(z.decoded[3], -0.0));

        std::vector<double> v(40, 1.0);
        v[5] = kNaN;
        v[35] = -kInf;
        const BlockQuantResult n = quantize_blocks(v, c);
        CHECK_EQ(n.blocks.size(), std::size_t(2));
        for (const BlockReport& b : n.blocks) {
            CHECK_EQ(b.scale.code, std::uint8_t(0xFF));
            CHECK(std::isnan(b.scale.value));
        }
        for (double d : n.decoded) CHECK(std::isnan(d));

        // amax 6 -> X = 1 in E2M1; 0.2 and 1e-30 are below half of 0.5: flushed to zero.
        const BlockQuantResult f =
            quantize_blocks(std::vector<double>{6, 0.2, 1e-30, 0.25, 0.3}, c);
        CHECK_EQ(f.blocks[0].scale.value, 1.0);
        CHECK_EQ(f.blocks[0].zeros, 3); // 0.2, 1e-30 and the tie 0.25
        CHECK(f.decoded[4] == 0.5);

        // A scale below E8M0's range clamps to 2^-127, and the elements underflow.
        const BlockQuantResult t =
            quantize_blocks(std::vector<double>{0x1p-140, -0x1p-141}, BlockQuantConfig{});
        CHECK_EQ(t.blocks[0].scale.code, std::uint8_t(0x00));
        CHECK_EQ(t.blocks[0].zeros, 2); // 2^-140 / 2^-127 = 2^-13, below half of E4M3's 2^-9
        const ref::Block rt = ref::mx({0x1p-140, -0x1p-141}, ElementFormat::Float8E4M3, false);
        CHECK_EQ(std::uint32_t(t.codes[0]), rt.codes[0]);
        CHECK_EQ(t.blocks[0].zeros, rt.zeros);
    }

    // NVFP4 on a hand-computed example. amax_tensor = 2688 = 448 * 6, so s_global = 1.
    // Block 0 (amax 2688): s_block = 2688 / 6 = 448 (E4M3 0x7E); 560 / 448 = 1.25 ties to 1.
    // Block 1 (amax 2.4): s_block = 0.4 -> E4M3 0.40625 (0x2D, 1.101b * 2^-2); 2.4 / 0.40625 =
    // 5.91 -> 6; 1 / 0.40625 = 2.46 -> 2; -0.3 / 0.40625 = -0.738 -> -0.5.
    void nvfp4HandExample() {
        std::vector<double> v = {2688, 1344, 224, 100, -896, 560, 0,   0,   0,   0,
                                 0,    0,    0,   0,   0,    0,   2.4, 1.0, -0.3};
        BlockQuantConfig c;
        c.format = BlockFormat::NvFp4;
        const BlockQuantResult r = quantize_blocks(v, c);
        CHECK_EQ(r.global_scale, 1.0f);
        CHECK_EQ(r.blocks.size(), std::size_t(2));
        CHECK_EQ(r.blocks[0].scale.code, std::uint8_t(0x7E));
        CHECK_EQ(r.blocks[0].scale.value, 448.0);
        const std::uint8_t codes0[] = {0x7, 0x5, 0x1, 0x0, 0xC, 0x2};
        const double dec0[] = {2688, 1344, 224, 0, -896, 448};
        for (int i = 0; i < 6; ++i) {
            CHECK_EQ(r.codes[i], codes0[i]);
            CHECK(r.decoded[i] == dec0[i]);
        }
        CHECK_EQ(r.blocks[0].zeros, 1); // 100 / 448 = 0.22 < 0.25
        CHECK_EQ(r.blocks[1].scale.code, std::uint8_t(0x2D));
        CHECK_EQ(r.blocks[1].scale.value, 0.40625);
        CHECK_EQ(r.codes[16], std::uint8_t(0x7));
        CHECK_EQ(r.codes[17], std::uint8_t(0x4));
        CHECK_EQ(r.codes[18], std::uint8_t(0x9));
        CHECK(r.decoded[16] == 2.4375);
        CHECK(r.decoded[17] == 0.8125);
        CHECK(r.decoded[18] == -0.203125);
        CHECK_THROWS(Error,
                     resolve_block_quant({BlockFormat::NvFp4, ScaleRule::Floor, 0, false, 0}));
    }

    // NVFP4 against the reference: global scale, block scales and elements, on random tensors
    // whose global scale is not a round number.
    void nvfp4MatchesReference() {
        std::mt19937_64 rng(3);
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        for (int trial = 0; trial < 20; ++trial) {
            std::vector<double> v;
            const int spread = trial % 5 * 3;
            for (int i = 0; i < 16 * 12 + 5; ++i)
                v.push_back(static_cast<float>(std::ldexp(u(rng), (i / 16) % (spread + 1) - 3)));
            BlockQuantConfig c;
            c.format = BlockFormat::NvFp4;
            const BlockQuantResult r = quantize_blocks(v, c);
            double amax = 0;
            for (double x : v) amax = std::max(amax, std::fabs(x));
            CHECK_MSG(r.global_scale == ref::nv_global(amax),
                      unit::format("amax %a: engine %a, reference %a", amax, double(r.global_scale),
                                   double(ref::nv_global(amax))));
            for (const BlockReport& b : r.blocks) {
                const std::vector<double> part(v.begin() + b.begin, v.begin() + b.begin + b.count);
                const ref::Block want = ref::nvfp4(part, r.global_scale);
                CHECK_EQ(std::uint32_t(b.scale.code), want.scale_code);
                CHECK_EQ(b.clipped, want.clipped);
                CHECK_EQ(b.zeros, want.zeros);
                for (std::size_t i = 0; i < b.count; ++i) {
                    CHECK_EQ(std::uint32_t(r.codes[b.begin + i]), want.codes[i]);
                    CHECK(same(r.decoded[b.begin + i], want.decoded[i]));
                }
            }
        }
        // Ties in the global scale: amax = 2688 * (1 + 2^-24) lies halfway between the float32s
        // 1 and 1 + 2^-23: to even, 1.
        CHECK(nvfp4_global_scale(2688.0 * (1 + 0x1p-24)) == 1.0f);
        CHECK(nvfp4_global_scale(2688.0 * (1 + 3 * 0x1p-24)) == 1.0f + 0x1p-22f);
        CHECK_EQ(nvfp4_global_scale(0.0), 0.0f);
    }

    // 2D 16 x 16 tiles: each tile's scale is the reference's over its 256 values, and
    // quantising the transpose gives the transposed codes (the row- and column-wise copies agree).
    void nvfp4TwoDimensional() {
        const std::size_t rows = 40, cols = 24; // partial tiles on both edges
        std::mt19937_64 rng(11);
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        std::vector<double> w(rows * cols), wt(rows * cols);
        for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t j = 0; j < cols; ++j) {
                const double x = static_cast<float>(std::ldexp(u(rng), int((i / 16 + j / 16) % 3)));
                w[i * cols + j] = x;
                wt[j * rows + i] = x;
            }
        BlockQuantConfig c;
        c.format = BlockFormat::NvFp4;
        const BlockQuantResult r = quantize_blocks_2d(w, rows, cols, c);
        const BlockQuantResult rt = quantize_blocks_2d(wt, cols, rows, c);
        CHECK_EQ(r.blocks.size(), std::size_t(3 * 2));
        CHECK_EQ(r.global_scale, rt.global_scale);
        for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t j = 0; j < cols; ++j) {
                CHECK_EQ(r.codes[i * cols + j], rt.codes[j * rows + i]);
                CHECK(same(r.decoded[i * cols + j], rt.decoded[j * rows + i]));
            }
        for (const BlockReport& b : r.blocks) {
            std::vector<double> tile;
            for (std::size_t i = 0; i < b.rows; ++i)
                for (std::size_t j = 0; j < b.cols; ++j)
                    tile.push_back(w[(b.row + i) * cols + b.col + j]);
            const ref::Block want = ref::nvfp4(tile, r.global_scale);
            CHECK_EQ(std::uint32_t(b.scale.code), want.scale_code);
            std::size_t k = 0;
            for (std::size_t i = 0; i < b.rows; ++i)
                for (std::size_t j = 0; j < b.cols; ++j, ++k)
                    CHECK_EQ(std::uint32_t(r.codes[(b.row + i) * cols + b.col + j]), want.codes[k]);
        }
    }

    // The in-place float32 path gives the report path's decoded values, and stochastic rounding
    // is reproducible from its seed.
    void fakeQuantizeAndStochasticBlocks() {
        std::mt19937_64 rng(5);
        std::normal_distribution<float> g(0.0f, 0.02f);
        std::vector<float> data(1000);
        for (float& x : data) x = g(rng);
        const std::vector<double> as_double(data.begin(), data.end());
        for (BlockFormat f : block_formats()) {
            BlockQuantConfig c;
            c.format = f;
            const BlockQuantResult r = quantize_blocks(as_double, c);
            std::vector<float> q = data;
            const BlockQuantStats s = fake_quantize(q, c);
            CHECK_EQ(s.blocks, r.blocks.size());
            CHECK_EQ(s.zeros, r.zeros);
            CHECK_EQ(s.global_scale, r.global_scale);
            for (std::size_t i = 0; i < q.size(); ++i) CHECK(same(q[i], float(r.decoded[i])));

            c.stochastic = true;
            c.seed = 99;
            const BlockQuantResult s1 = quantize_blocks(as_double, c),
                                   s2 = quantize_blocks(as_double, c);
            CHECK_EQ(s1.codes, s2.codes);
            c.seed = 100;
            CHECK(quantize_blocks(as_double, c).codes != s1.codes);
            CHECK(s1.codes != r.codes);
        }
    }

    // The training path (fake_quantize, fake_quantize_blocks, fake_quantize_tensor: the fast
    // kernels) against the report path (quantize_blocks / quantize_blocks_2d: the straightforward
    // spec kernel) bit for bit, decoded values and counts, over every block format and rule, both
    // rounding modes, odd sizes (short and partial edge blocks), ties, subnormals, saturation,
    // zero blocks and NaN / inf.
    static std::vector<float> fast_path_values(std::size_t n, std::uint64_t seed) {
        std::mt19937_64 rng(seed);
        std::uniform_int_distribution<int> kind(0, 9), mant(-64, 64), expo(-30, 12);
        std::normal_distribution<float> g(0.0f, 1.0f);
        // Block maxima of 6 * 2^k put the E2M1 / E2M3 midpoints (k = 0: 0.25, 0.75, 1.25, ...)
        // and the FP8 ones on a grid the dyadic values below hit exactly: ties.
        std::vector<float> v(n);
        for (std::size_t i = 0; i < n; ++i) {
            switch (kind(rng)) {
            case 0:
                v[i] = 6.0f;
                break;
            case 1:
                v[i] = static_cast<float>(mant(rng)) / 16.0f; // ties at every MX scale near 1
                break;
            case 2:
                v[i] = std::ldexp(static_cast<float>(mant(rng)), expo(rng));
                break;
            case 3:
                v[i] = std::ldexp(g(rng), -140); // float32 subnormals
                break;
            case 4:
                v[i] = i % 2 ? 0.0f : -0.0f;
                break;
            case 5:
                v[i] = g(rng) * 3e36f; // far past every format: scales near E8M0's top
                break;
            default:
                v[i] = std::ldexp(g(rng), expo(rng));
            }
        }
        return v;
    }
    static bool same_bits(const std::vector<float>& fast, const std::vector<double>& spec) {
        for (std::size_t i = 0; i < fast.size(); ++i)
            if (std::bit_cast<std::uint32_t>(fast[i]) !=
                std::bit_cast<std::uint32_t>(static_cast<float>(spec[i])))
                return false;
        return true;
    }
    void fastPathMatchesReference() {
        const float inf = std::numeric_limits<float>::infinity();
        std::vector<std::vector<float>> inputs = {fast_path_values(3001, 1),
                                                  fast_path_values(37 * 45, 2)};
        std::vector<float> special = fast_path_values(37 * 45, 3);
        for (std::size_t i = 0; i < 64; ++i) special[i] = 0.0f; // all-zero blocks
        special[100] = std::numeric_limits<float>::quiet_NaN(); // a NaN block
        special[700] = -inf;                                    // an inf block
        inputs.push_back(special);
        std::vector<float> tiny(1000); // NVFP4 block scales that underflow E4M3 to zero
        for (std::size_t i = 0; i < tiny.size(); ++i) tiny[i] = i == 0 ? 1e30f : 1e-10f * g1(i);
        inputs.push_back(tiny);
        // Exact ties under NVFP4 too: a tensor amax of 2688 makes the global scale 1, and blocks
        // topped by 6 get the block scale 1, so k / 16 hits every E2M1 midpoint.
        std::vector<float> ties = fast_path_values(3001, 4);
        for (std::size_t i = 0; i < ties.size(); ++i)
            ties[i] = i == 0 ? 2688.0f
                             : (i % 16 == 0 ? 6.0f : static_cast<float>(int(i % 129) - 64) / 16);
        inputs.push_back(ties);
        int compared = 0;
        for (const std::vector<float>& data : inputs)
            for (BlockFormat f : block_formats())
                for (ScaleRule rule : {ScaleRule::Floor, ScaleRule::Ceil, ScaleRule::Amax}) {
                    if (!supports_scale_rule(f, rule)) continue;
                    for (bool stochastic : {false, true}) {
                        BlockQuantConfig c;
                        c.format = f;
                        c.rule = rule;
                        c.stochastic = stochastic;
                        c.seed = 1234;
                        const std::vector<double> wide(data.begin(), data.end());
                        // 1D over the flat span (the last block short).
                        const BlockQuantResult r = quantize_blocks(wide, c);
                        std::vector<float> q = data;
                        const BlockQuantStats s = fake_quantize(q, c);
                        CHECK(same_bits(q, r.decoded));
                        CHECK_EQ(s.clipped, r.clipped);
                        CHECK_EQ(s.zeros, r.zeros);
                        CHECK_EQ(s.blocks, r.blocks.size());
                        CHECK(same(s.global_scale, r.global_scale));
                        // 2D tiles of a 37 x 45 (or 1 x n) matrix, partial at both edges.
                        const std::size_t rows = data.size() == 37 * 45 ? 37 : 1;
                        const std::size_t cols = data.size() / rows;
                        const int tile = block_format_spec(f).tensor_scale ? 16 : 32;
                        const BlockQuantResult r2 = quantize_blocks_2d(wide, rows, cols, c, tile);
                        std::vector<float> q2 = data;
                        double top = -1;
                        const BlockQuantStats s2 =
                            fake_quantize_blocks(q2, rows, cols, c, tile, tile, &top);
                        CHECK(same_bits(q2, r2.decoded));
                        CHECK_EQ(s2.clipped, r2.clipped);
                        CHECK_EQ(s2.zeros, r2.zeros);
                        CHECK_EQ(s2.blocks, r2.blocks.size());
                        double want = 0;
                        for (const BlockReport& b : r2.blocks) {
                            const double sc =
                                b.scale.value *
                                (block_format_spec(f).tensor_scale ? r2.global_scale : 1.0f);
                            if (sc > want || std::isnan(sc)) want = sc;
                        }
                        CHECK(same(top, want));
                        compared += 2;
                    }
                }
        CHECK_EQ(compared, 5 * 2 * 2 * (5 * 2 + 1));

        // Per-tensor FP8 (current scaling): the formula written out with the scalar codec.
        for (ElementFormat e : {ElementFormat::Float8E4M3, ElementFormat::Float8E5M2})
            for (const std::vector<float>& data : inputs) {
                QuantSpec spec;
                spec.scaling = QuantScaling::Current;
                spec.element = e;
                std::vector<float> q = data;
                const QuantTensorStats st = fake_quantize_tensor(q, 1, q.size(), spec, {}, 0, true);
                double amax = 0;
                bool nan = false;
                for (float v : data) {
                    nan = nan || std::isnan(v);
                    amax = std::max(amax, std::fabs(double(v)));
                }
                CHECK(same(st.amax, nan ? kNaN : amax));
                const double max_elem = element_spec(e).max_finite;
                float scale = 1.0f;
                if (!nan && amax > 0 && std::isfinite(amax))
                    scale = static_cast<float>(max_elem) / static_cast<float>(amax);
                const float inv = 1.0f / scale;
                std::size_t clipped = 0, zeros = 0;
                bool all = true;
                for (std::size_t i = 0; i < data.size(); ++i) {
                    const double x = double(data[i]) * double(scale);
                    const double d = decode_element(encode_element(x, e), e) * double(inv);
                    clipped += std::fabs(x) > max_elem * (1.0 + 0x1p-22) ? 1 : 0;
                    zeros += (data[i] != 0 && !std::isnan(data[i]) && d == 0) ? 1 : 0;
                    all = all && std::bit_cast<std::uint32_t>(q[i]) ==
                                     std::bit_cast<std::uint32_t>(static_cast<float>(d));
                }
                CHECK(all);
                CHECK_EQ(st.clipped, clipped);
                CHECK_EQ(st.zeros, zeros);
            }
    }
    static float g1(std::size_t i) {
        return static_cast<float>(int(i * 2654435761u % 2001) - 1000);
    }

    // The span loops give the scalar codec's codes and values, element by element.
    void spanLoopsMatchScalar_data() { formats_data(); }
    void spanLoopsMatchScalar() {
        FETCH(ElementFormat, format);
        std::vector<float> src;
        for (double x : probes(format)) src.push_back(static_cast<float>(x));
        src.push_back(std::numeric_limits<float>::quiet_NaN());
        std::vector<std::uint8_t> codes(src.size()), sr(src.size());
        std::vector<std::uint32_t> random(src.size());
        for (std::size_t i = 0; i < src.size(); ++i) random[i] = rounding_random(17, i);
        encode_elements(src.data(), codes.data(), src.size(), format);
        encode_elements_stochastic(src.data(), random.data(), sr.data(), src.size(), format);
        std::vector<float> back(src.size());
        decode_elements(codes.data(), back.data(), codes.size(), format);
        for (std::size_t i = 0; i < src.size(); ++i) {
            CHECK_EQ(std::uint32_t(codes[i]), encode_element(src[i], format));
            CHECK_EQ(std::uint32_t(sr[i]), encode_element_stochastic(src[i], format, random[i]));
            CHECK(same(back[i], decode_element(codes[i], format)));
        }
    }

    // Bad input names the field.
    void badInputNamesTheField() {
        auto message = [](auto fn) {
            try {
                fn();
            } catch (const Error& e) {
                return e.kind() == ErrorKind::InvalidArgument ? std::string(e.what())
                                                              : std::string();
            }
            return std::string();
        };
        CHECK(message([] {
                  resolve_block_quant({BlockFormat::MxFp4, {}, 24, false, 0});
              }).starts_with("block_size: 24"));
        CHECK(message([] {
                  resolve_block_quant({BlockFormat::NvFp4, ScaleRule::Ceil, 0, false, 0});
              }).starts_with("scale_rule: nvfp4"));
        CHECK(message([] {
                  resolve_block_quant({BlockFormat::MxFp6E2M3, ScaleRule::Amax, 0, false, 0});
              }).starts_with("scale_rule: mxfp6_e2m3"));
        CHECK(message([] { block_format_from_name("mxfp5"); }).starts_with("format: "));
        CHECK(message([] { scale_rule_from_name("round"); }).starts_with("scale_rule: "));
        CHECK(message([] { element_format_from_name("float5", "dtype"); }).starts_with("dtype: "));
        CHECK(message([] {
                  quantize_blocks_2d(std::vector<double>(9, 1.0), 3, 3, BlockQuantConfig{}, 3);
              }).starts_with("tile: 3"));
        BlockQuantConfig ok;
        ok.block_size = 64;
        CHECK_EQ(resolve_block_quant(ok).block_size, 64);
        CHECK_EQ(block_format_spec(BlockFormat::NvFp4).bits_per_element, 4.5);
        CHECK_EQ(block_format_spec(BlockFormat::MxFp6E3M2).bits_per_element, 6.25);
    }

    // The branch-free codecs of the vectorised loops (element_codec.h) against the scalar spec
    // functions, on every code, the midpoints between neighbours and a step either side (ties),
    // the subnormal ranges and far beyond the largest value.
    template <ElementFormat F>
    static int codec_mismatches(const std::vector<double>& xs) {
        int bad = 0;
        std::uint32_t r = 12345;
        for (double x : xs) {
            const double want = decode_element(encode_element(x, F), F);
            const double got = element_codec::round_to_element<F>(x);
            bad += std::bit_cast<std::uint64_t>(got) != std::bit_cast<std::uint64_t>(want);
            // The code itself (per-tensor FP8 into codes), signed zeros included.
            bad += element_codec::round_to_code<F>(x) != encode_element(x, F);
            const auto xf = static_cast<float>(x);
            if (static_cast<double>(xf) == x && std::isfinite(xf)) {
                const auto wantf = static_cast<float>(decode_element(encode_element(x, F), F));
                bad += std::bit_cast<std::uint32_t>(element_codec::round_to_element<F>(xf)) !=
                       std::bit_cast<std::uint32_t>(wantf);
            }
            r = r * 1664525u + 1013904223u;
            const std::uint32_t sign_bit = 1u << (element_spec(F).width - 1);
            const std::uint32_t code = encode_element_stochastic(x, F, r);
            bad += element_codec::stochastic_magnitude<F>(x, r) != (code & (sign_bit - 1));
            bad += element_codec::stochastic_magnitude_halves<F>(x, r) !=
                   element_codec::stochastic_magnitude<F>(x, r);
        }
        return bad;
    }

    // The CUDA kernels' 32-bit stochastic rounding (stochastic_magnitude_halves) against the
    // general one on random finite magnitudes from far below the subnormals to far beyond the
    // largest value, each with several random draws (0 and 2^32 - 1 included).
    template <ElementFormat F>
    static int stochastic_halves_mismatches() {
        std::mt19937_64 rng(29);
        int bad = 0;
        for (int i = 0; i < 200000; ++i) {
            const int exponent = static_cast<int>(rng() % 1200) - 1100; // 2^-1100 … 2^99
            const double x = std::ldexp(1.0 + static_cast<double>(rng() >> 11) * 0x1p-53, exponent);
            for (std::uint32_t r : {0u, 0xFFFFFFFFu, static_cast<std::uint32_t>(rng()),
                                    static_cast<std::uint32_t>(rng())})
                bad += element_codec::stochastic_magnitude_halves<F>(x, r) !=
                       element_codec::stochastic_magnitude<F>(x, r);
        }
        return bad;
    }
    void stochasticHalvesMatchTheGeneralForm() {
        CHECK_EQ(stochastic_halves_mismatches<ElementFormat::Float4E2M1>(), 0);
        CHECK_EQ(stochastic_halves_mismatches<ElementFormat::Float6E3M2>(), 0);
        CHECK_EQ(stochastic_halves_mismatches<ElementFormat::Float6E2M3>(), 0);
        CHECK_EQ(stochastic_halves_mismatches<ElementFormat::Float8E4M3>(), 0);
        CHECK_EQ(stochastic_halves_mismatches<ElementFormat::Float8E5M2>(), 0);
    }
    void branchFreeCodecsMatchScalar() {
        CHECK_EQ(
            codec_mismatches<ElementFormat::Float8E4M3>(codec_sweep<ElementFormat::Float8E4M3>()),
            0);
        CHECK_EQ(
            codec_mismatches<ElementFormat::Float8E5M2>(codec_sweep<ElementFormat::Float8E5M2>()),
            0);
        CHECK_EQ(
            codec_mismatches<ElementFormat::Float6E3M2>(codec_sweep<ElementFormat::Float6E3M2>()),
            0);
        CHECK_EQ(
            codec_mismatches<ElementFormat::Float6E2M3>(codec_sweep<ElementFormat::Float6E2M3>()),
            0);
        CHECK_EQ(
            codec_mismatches<ElementFormat::Float4E2M1>(codec_sweep<ElementFormat::Float4E2M1>()),
            0);
    }

    // round_product_to_code (the CUDA engine's 32-bit codes) against round_to_code on the exact
    // float64 product: values on and around every code and midpoint divided by scales whose
    // products are inexact in float32 (so the fma's error term decides the near-ties), random
    // values and scales over the whole range (subnormal products, saturation, float32 overflow),
    // and signed zeros.
    template <ElementFormat F>
    static int product_code_mismatches() {
        int bad = 0;
        auto check = [&bad](float v, float scale) {
            if (!std::isfinite(v) || !std::isfinite(scale)) return;
            const double x = static_cast<double>(v) * static_cast<double>(scale);
            const std::uint32_t want = element_codec::round_to_code<F>(x);
            bad += element_codec::round_product_to_code<F>(v, scale) != want;
            // The CUDA route: the odd-rounded float32, then float32 -> FP8 to nearest (here the
            // float64 codec on it; on the GPU the hardware conversion, checked by the op cases).
            const float odd = element_codec::product_round_to_odd(v, scale);
            if (std::isfinite(odd))
                bad += element_codec::round_to_code<F>(static_cast<double>(odd)) != want;
        };
        const float scales[] = {1.0f,           3.0f,   0.1f,  7.3e-3f, 1.0f / 3.0f,
                                448.0f / 13.7f, 1e-30f, 1e30f, 2.5e20f, std::nextafter(1.0f, 2.0f)};
        for (const double x : codec_sweep<F>()) {
            for (const float scale : scales) {
                const auto v = static_cast<float>(x / static_cast<double>(scale));
                constexpr float kInfF = std::numeric_limits<float>::infinity();
                for (float w : {v, std::nextafter(v, kInfF), std::nextafter(v, -kInfF)})
                    check(w, scale);
            }
        }
        std::mt19937_64 rng(11);
        std::uniform_int_distribution<std::uint32_t> bits;
        for (int i = 0; i < 200000; ++i)
            check(std::bit_cast<float>(bits(rng)), std::bit_cast<float>(bits(rng) & 0x7FFFFFFFu));
        for (float v : {0.0f, -0.0f, 1e-45f, -1e-45f, 3e38f, -3e38f})
            check(v, 1e10f), check(v, 1.0f);
        return bad;
    }
    template <ElementFormat F>
    static int decode_mismatches() {
        int bad = 0;
        for (std::uint32_t c = 0; c < 256; ++c) {
            const double want = decode_element(c, F);
            if (!std::isfinite(want)) continue; // NaN and inf codes: never produced saturating
            bad += std::bit_cast<std::uint32_t>(element_codec::decode_code<F>(c)) !=
                   std::bit_cast<std::uint32_t>(static_cast<float>(want));
        }
        return bad;
    }
    void productCodesMatchFloat64Route() {
        CHECK_EQ(decode_mismatches<ElementFormat::Float8E4M3>(), 0);
        CHECK_EQ(decode_mismatches<ElementFormat::Float8E5M2>(), 0);
        CHECK_EQ(product_code_mismatches<ElementFormat::Float8E4M3>(), 0);
        CHECK_EQ(product_code_mismatches<ElementFormat::Float8E5M2>(), 0);
    }

    // The training kernels split a tensor over the OpenMP threads: the bits and the counts are
    // the same with 1 and 2 threads (blocks are independent, counts integer sums, stochastic
    // rounding keyed by the element's index), and the MX weights' column blocks (n x 1, a path of
    // their own) match the reference block by block.
    struct Quantised {
        std::vector<float> data;
        std::size_t blocks = 0, clipped = 0, zeros = 0;
        double scale = 0;
        bool operator==(const Quantised& o) const {
            if (blocks != o.blocks || clipped != o.clipped || zeros != o.zeros) return false;
            if (std::bit_cast<std::uint64_t>(scale) != std::bit_cast<std::uint64_t>(o.scale))
                return false;
            for (std::size_t i = 0; i < data.size(); ++i)
                if (std::bit_cast<std::uint32_t>(data[i]) !=
                    std::bit_cast<std::uint32_t>(o.data[i]))
                    return false;
            return data.size() == o.data.size();
        }
    };
    static Quantised run_blocks(const std::vector<float>& in, std::size_t rows, std::size_t cols,
                                const BlockQuantConfig& c, int br, int bc, int threads) {
        set_threads(threads);
        Quantised q{in};
        const BlockQuantStats s = fake_quantize_blocks(q.data, rows, cols, c, br, bc, &q.scale);
        q.blocks = s.blocks;
        q.clipped = s.clipped;
        q.zeros = s.zeros;
        return q;
    }
    static Quantised run_tensor(const std::vector<float>& in, std::size_t rows, std::size_t cols,
                                const QuantSpec& spec, int threads) {
        set_threads(threads);
        Quantised q{in};
        std::vector<float> state(quant_state_floats(spec));
        const QuantTensorStats s = fake_quantize_tensor(q.data, rows, cols, spec, state, 3, true);
        q.blocks = s.blocks;
        q.clipped = s.clipped;
        q.zeros = s.zeros;
        q.scale = s.scale;
        return q;
    }
    static void set_threads(int n) {
#if defined(_OPENMP)
        omp_set_num_threads(n);
#else
        (void)n;
#endif
    }
    static bool same_value(double a, double b) {
        return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
    }
    // n x 1 blocks under stochastic rounding, written out with the public scale functions and
    // the scalar codec: element (r, c) draws rounding_random(seed, r * cols + c).
    static std::vector<float> stochastic_columns(const std::vector<float>& in, std::size_t rows,
                                                 std::size_t cols, const BlockQuantConfig& c, int n,
                                                 std::size_t& clipped, std::size_t& zeros) {
        const BlockFormatSpec& spec = block_format_spec(c.format);
        const ElementFormat elem = spec.element;
        const double max_elem = element_spec(elem).max_finite;
        auto amax_of = [](const std::vector<double>& v) {
            double a = 0;
            for (double x : v) {
                if (std::isnan(x)) return kNaN;
                a = std::max(a, std::fabs(x));
            }
            return a;
        };
        const float gs =
            spec.tensor_scale
                ? nvfp4_global_scale(amax_of(std::vector<double>(in.begin(), in.end())))
                : 1.0f;
        std::vector<float> out(in.size());
        const auto bn = static_cast<std::size_t>(n);
        for (std::size_t r0 = 0; r0 < rows; r0 += bn)
            for (std::size_t col = 0; col < cols; ++col) {
                std::vector<double> seg;
                for (std::size_t r = r0; r < std::min(rows, r0 + bn); ++r)
                    seg.push_back(in[r * cols + col]);
                const double amax = amax_of(seg);
                const double eff =
                    spec.tensor_scale
                        ? nvfp4_block_scale(amax, gs).value * static_cast<double>(gs)
                        : mx_block_scale(amax, elem, c.rule.value_or(spec.default_rule)).value;
                for (std::size_t k = 0; k < seg.size(); ++k) {
                    const std::size_t at = (r0 + k) * cols + col;
                    const double v = seg[k];
                    double decoded;
                    if (std::isnan(eff)) {
                        decoded = kNaN;
                    } else if (eff == 0) {
                        decoded = std::signbit(v) ? -0.0 : 0.0;
                        zeros += v != 0 ? 1 : 0;
                    } else {
                        const std::uint32_t code =
                            encode_element_stochastic(v / eff, elem, rounding_random(c.seed, at));
                        decoded = decode_element(code, elem) * eff;
                        clipped += std::fabs(v) > max_elem * eff ? 1 : 0;
                        zeros += (v != 0 && decoded == 0) ? 1 : 0;
                    }
                    out[at] = static_cast<float>(decoded);
                }
            }
        return out;
    }
    void threadCountIndependent() {
#if defined(_OPENMP)
        const int before = omp_get_max_threads();
#endif
        const std::size_t rows = 96, cols = 400; // 38400 values: large enough to be split
        std::vector<float> in = fast_path_values(rows * cols, 11);
        for (std::size_t i = 0; i < 40; ++i) in[5 * cols + i] = 0.0f; // a zero block or two
        std::vector<float> with_nan = in;
        with_nan[70 * cols + 33] = std::numeric_limits<float>::quiet_NaN(); // one NaN block
        int compared = 0, columns = 0;
        for (const std::vector<float>* data : {&in, &with_nan})
            for (BlockFormat f : block_formats())
                for (ScaleRule rule : {ScaleRule::Floor, ScaleRule::Ceil, ScaleRule::Amax}) {
                    if (!supports_scale_rule(f, rule)) continue;
                    for (bool stochastic : {false, true}) {
                        BlockQuantConfig c;
                        c.format = f;
                        c.rule = rule;
                        c.stochastic = stochastic;
                        c.seed = 99;
                        const int n = block_format_spec(f).block_size;
                        for (auto [br, bc] :
                             {std::pair{1, n}, std::pair{n, 1}, std::pair{16, 16}}) {
                            const Quantised one = run_blocks(*data, rows, cols, c, br, bc, 1);
                            const Quantised two = run_blocks(*data, rows, cols, c, br, bc, 2);
                            CHECK(one == two);
                            ++compared;
                            if (bc != 1) continue;
                            // n x 1 blocks (their own paths): nearest rounding equals the 1 x n
                            // blocks of the transpose (checked against the reference above);
                            // stochastic rounding the formula, element by element.
                            if (!stochastic) {
                                std::vector<float> t(rows * cols);
                                for (std::size_t r = 0; r < rows; ++r)
                                    for (std::size_t k = 0; k < cols; ++k)
                                        t[k * rows + r] = (*data)[r * cols + k];
                                const Quantised tq = run_blocks(t, cols, rows, c, 1, n, 2);
                                bool same = true;
                                for (std::size_t r = 0; r < rows; ++r)
                                    for (std::size_t k = 0; k < cols; ++k)
                                        same =
                                            same &&
                                            std::bit_cast<std::uint32_t>(one.data[r * cols + k]) ==
                                                std::bit_cast<std::uint32_t>(tq.data[k * rows + r]);
                                CHECK(same);
                                CHECK_EQ(one.clipped, tq.clipped);
                                CHECK_EQ(one.zeros, tq.zeros);
                                CHECK_EQ(one.blocks, tq.blocks);
                                CHECK(same_value(one.scale, tq.scale));
                            } else {
                                std::size_t clipped = 0, zeros = 0;
                                const std::vector<float> want =
                                    stochastic_columns(*data, rows, cols, c, n, clipped, zeros);
                                bool same = true;
                                for (std::size_t i = 0; i < want.size(); ++i)
                                    same = same && std::bit_cast<std::uint32_t>(one.data[i]) ==
                                                       std::bit_cast<std::uint32_t>(want[i]);
                                CHECK(same);
                                CHECK_EQ(one.clipped, clipped);
                                CHECK_EQ(one.zeros, zeros);
                            }
                            ++columns;
                        }
                    }
                }
        CHECK_EQ(compared, 2 * 2 * 3 * (5 * 2 + 1));
        CHECK_EQ(columns, 2 * (5 * 2 + 1) * 2);
        // Per-tensor FP8: current and delayed scaling, E4M3 and E5M2.
        for (const std::vector<float>* data : {&in, &with_nan})
            for (QuantScaling scaling : {QuantScaling::Current, QuantScaling::Delayed})
                for (ElementFormat e : {ElementFormat::Float8E4M3, ElementFormat::Float8E5M2}) {
                    QuantSpec spec;
                    spec.scaling = scaling;
                    spec.element = e;
                    CHECK(run_tensor(*data, rows, cols, spec, 1) ==
                          run_tensor(*data, rows, cols, spec, 2));
                }
#if defined(_OPENMP)
        omp_set_num_threads(before);
#endif
    }

    // n x 1 blocks quantised along the rows (no transposed copy), on the shapes and values that
    // take its edge cases: a partial last band, a run of columns past the first 256, all-zero
    // and all -0 columns (a zero NVFP4 scale), a column of tiny values whose NVFP4 scale rounds
    // to zero, and an inf (a NaN scale). Nearest rounding equals the transpose's 1 x n blocks,
    // stochastic rounding the formula, with 1 and 2 threads alike.
    void columnBlocksAlongRows() {
#if defined(_OPENMP)
        const int before = omp_get_max_threads();
#endif
        const std::size_t rows = 37, cols = 300;
        std::vector<float> in = fast_path_values(rows * cols, 23);
        for (std::size_t r = 0; r < rows; ++r) {
            in[r * cols + 7] = 0.0f;
            in[r * cols + 270] = -0.0f;
            in[r * cols + 12] = r < 16 ? 1e-30f : in[r * cols + 12];
            in[r * cols + 290] = r < 32 ? 3e-38f * static_cast<float>(r) : in[r * cols + 290];
        }
        std::vector<float> with_inf = in;
        with_inf[20 * cols + 100] = std::numeric_limits<float>::infinity();
        int checked = 0;
        for (const std::vector<float>* data : {&in, &with_inf})
            for (BlockFormat f : {BlockFormat::NvFp4, BlockFormat::MxFp4, BlockFormat::MxFp8E4M3})
                for (bool stochastic : {false, true}) {
                    BlockQuantConfig c;
                    c.format = f;
                    c.stochastic = stochastic;
                    c.seed = 5;
                    const int n = block_format_spec(f).block_size;
                    const Quantised one = run_blocks(*data, rows, cols, c, n, 1, 1);
                    CHECK(one == run_blocks(*data, rows, cols, c, n, 1, 2));
                    if (!stochastic) {
                        std::vector<float> t(rows * cols);
                        for (std::size_t r = 0; r < rows; ++r)
                            for (std::size_t k = 0; k < cols; ++k)
                                t[k * rows + r] = (*data)[r * cols + k];
                        const Quantised tq = run_blocks(t, cols, rows, c, 1, n, 1);
                        bool same = true;
                        for (std::size_t r = 0; r < rows; ++r)
                            for (std::size_t k = 0; k < cols; ++k)
                                same =
                                    same && std::bit_cast<std::uint32_t>(one.data[r * cols + k]) ==
                                                std::bit_cast<std::uint32_t>(tq.data[k * rows + r]);
                        CHECK(same);
                        CHECK_EQ(one.clipped, tq.clipped);
                        CHECK_EQ(one.zeros, tq.zeros);
                        CHECK_EQ(one.blocks, tq.blocks);
                        CHECK(same_value(one.scale, tq.scale));
                    } else {
                        std::size_t clipped = 0, zeros = 0;
                        const std::vector<float> want =
                            stochastic_columns(*data, rows, cols, c, n, clipped, zeros);
                        bool same = true;
                        for (std::size_t i = 0; i < want.size(); ++i)
                            same = same && std::bit_cast<std::uint32_t>(one.data[i]) ==
                                               std::bit_cast<std::uint32_t>(want[i]);
                        CHECK(same);
                        CHECK_EQ(one.clipped, clipped);
                        CHECK_EQ(one.zeros, zeros);
                    }
                    ++checked;
                }
        CHECK_EQ(checked, 2 * 3 * 2);
#if defined(_OPENMP)
        omp_set_num_threads(before);
#endif
    }

    // NVFP4 block scales at and beside every E4M3 midpoint (the scale's own ties): a tensor
    // amax of 2688 makes the global scale 1, so a block topped by 6 x a midpoint ties exactly.
    // The training kernels' scale (a midpoint table) equals the reference's quotient rounding.
    void nvfp4ScaleTies() {
        std::vector<float> data(16 * (1 + 3 * 126), 0.0f);
        data[0] = 2688.0f;
        std::size_t at = 16;
        for (std::uint32_t j = 0; j < 126; ++j) {
            const double mid = (decode_element(j, ElementFormat::Float8E4M3) +
                                decode_element(j + 1, ElementFormat::Float8E4M3)) /
                               2 * 6;
            const auto f = static_cast<float>(mid);
            CHECK(static_cast<double>(f) == mid);
            for (float v : {f, std::nextafter(f, 0.0f), std::nextafter(f, 1e9f)}) {
                data[at] = v;
                data[at + 5] = -v / 3;
                at += 16;
            }
        }
        for (bool stochastic : {false, true}) {
            BlockQuantConfig c;
            c.format = BlockFormat::NvFp4;
            c.stochastic = stochastic;
            c.seed = 3;
            const BlockQuantResult r =
                quantize_blocks(std::vector<double>(data.begin(), data.end()), c);
            CHECK_EQ(r.global_scale, 1.0f);
            std::vector<float> q = data;
            const BlockQuantStats s = fake_quantize(q, c);
            CHECK(same_bits(q, r.decoded));
            CHECK_EQ(s.clipped, r.clipped);
            CHECK_EQ(s.zeros, r.zeros);
            std::vector<float> q2 = data;
            fake_quantize_blocks(q2, 1, data.size(), c, 1, 16);
            CHECK(same_bits(q2, r.decoded));
        }
    }

    // fake_quantize_tensor hands its amax to fake_quantize_blocks (NVFP4's global scale skips a
    // pass): the same bits, counts and scale as fake_quantize_blocks finding it itself, also
    // with a NaN (whose amax the blocks then find again).
    void nvfp4TensorPassesItsAmax() {
        const std::size_t rows = 40, cols = 48;
        std::vector<float> in = fast_path_values(rows * cols, 31);
        std::vector<float> with_nan = in;
        with_nan[77] = std::numeric_limits<float>::quiet_NaN();
        for (const std::vector<float>* data : {&in, &with_nan})
            for (auto [br, bc] : {std::pair{1, 16}, std::pair{16, 1}}) {
                QuantSpec spec;
                spec.scaling = QuantScaling::Block;
                spec.block.format = BlockFormat::NvFp4;
                spec.block.stochastic = br == 16;
                spec.block.seed = 8;
                spec.block_rows = br;
                spec.block_cols = bc;
                std::vector<float> a = *data;
                const QuantTensorStats st = fake_quantize_tensor(a, rows, cols, spec, {}, 2, true);
                BlockQuantConfig c = spec.block;
                c.seed = quant_math::step_seed(spec.block.seed, 2);
                std::vector<float> b = *data;
                double top = -1;
                const BlockQuantStats s = fake_quantize_blocks(b, rows, cols, c, br, bc, &top);
                bool same_data = true;
                for (std::size_t i = 0; i < a.size(); ++i)
                    same_data = same_data && std::bit_cast<std::uint32_t>(a[i]) ==
                                                 std::bit_cast<std::uint32_t>(b[i]);
                CHECK(same_data);
                CHECK_EQ(st.clipped, s.clipped);
                CHECK_EQ(st.zeros, s.zeros);
                CHECK_EQ(st.blocks, s.blocks);
                CHECK(same_value(st.scale, top));
            }
    }

    // NVFP4 with its tensor scale left to the GEMM (BlockQuantConfig::tensor_scale_in_gemm, a
    // Dense layer's copies): every value is a bfloat16 value, and times nvfp4_gemm_scale(global)
    // in float64 it is exactly the reference's decoded value (code · block scale · global), so
    // the usual float32 copy is that product rounded once. Along rows, in 16x16 tiles, down
    // columns, stochastic, with a NaN (factor 1, every value NaN) and all zeros (factor 1).
    void nvfp4TensorScaleInGemm() {
        const std::size_t rows = 48, cols = 48;
        const std::vector<float> base = fast_path_values(rows * cols, 41);
        std::vector<float> with_nan = base;
        with_nan[100] = std::numeric_limits<float>::quiet_NaN();
        const std::vector<float> zeros(rows * cols, 0.0f);
        struct Shape2 {
            int br, bc;
            bool stochastic;
        };
        const std::vector<float>* inputs[] = {&base, &with_nan, &zeros};
        for (const std::vector<float>* data : inputs)
            for (const Shape2 sh :
                 {Shape2{1, 16, false}, Shape2{16, 16, false}, Shape2{16, 1, false},
                  Shape2{1, 16, true}, Shape2{16, 1, true}}) {
                BlockQuantConfig off;
                off.format = BlockFormat::NvFp4;
                off.stochastic = sh.stochastic;
                off.seed = 21;
                BlockQuantConfig on = off;
                on.tensor_scale_in_gemm = true;
                std::vector<float> usual = *data, apart = *data;
                const BlockQuantStats su =
                    fake_quantize_blocks(usual, rows, cols, off, sh.br, sh.bc);
                const BlockQuantStats sa =
                    fake_quantize_blocks(apart, rows, cols, on, sh.br, sh.bc);
                CHECK(same_value(su.global_scale, sa.global_scale));
                CHECK_EQ(su.clipped, sa.clipped);
                CHECK_EQ(su.zeros, sa.zeros);
                const float factor = nvfp4_gemm_scale(sa.global_scale);
                CHECK(factor > 0);
                if (!(sa.global_scale > 0)) CHECK_EQ(factor, 1.0f);
                // The reference's decoded values for the deterministic row blocks and tiles.
                std::vector<double> want;
                if (!sh.stochastic && sh.bc == 16) {
                    const std::vector<double> wide(data->begin(), data->end());
                    want = sh.br == 1 ? quantize_blocks(wide, off).decoded
                                      : quantize_blocks_2d(wide, rows, cols, off, 16).decoded;
                }
                const auto same_or_nan = [](double x, double y) {
                    return (std::isnan(x) && std::isnan(y)) || same_value(x, y);
                };
                bool bf16_values = true, usual_is_rounded = true, matches_reference = true;
                for (std::size_t i = 0; i < apart.size(); ++i) {
                    const float v = apart[i];
                    const float narrowed = bfloat16_bits_to_float(float_to_bfloat16_bits(v));
                    bf16_values = bf16_values && (std::isnan(v) || same_value(narrowed, v));
                    const double product = static_cast<double>(v) * factor;
                    usual_is_rounded =
                        usual_is_rounded && same_or_nan(static_cast<float>(product), usual[i]);
                    if (!want.empty())
                        matches_reference = matches_reference && same_or_nan(product, want[i]);
                }
                CHECK_MSG(bf16_values,
                          "block " + std::to_string(sh.br) + "x" + std::to_string(sh.bc));
                CHECK_MSG(usual_is_rounded,
                          "block " + std::to_string(sh.br) + "x" + std::to_string(sh.bc));
                CHECK_MSG(matches_reference,
                          "block " + std::to_string(sh.br) + "x" + std::to_string(sh.bc));
                // fake_quantize_tensor reports the factor for the GEMM.
                QuantSpec spec;
                spec.scaling = QuantScaling::Block;
                spec.block = on;
                spec.block_rows = sh.br;
                spec.block_cols = sh.bc;
                CHECK(tensor_scale_in_gemm(spec) && decodes_exactly_in_bfloat16(spec));
                std::vector<float> t = *data;
                const QuantTensorStats st = fake_quantize_tensor(t, rows, cols, spec, {}, 0, true);
                CHECK(same_value(st.gemm_scale, factor));
            }
    }

    // The cast view of the new formats: classes and bit strings.
    void inspection() {
        const ElementInspection s = inspect_element(100.0, ElementFormat::Float4E2M1);
        CHECK_EQ(s.stored, 6.0);
        CHECK_EQ(s.outcome, ElementOutcome::Saturated);
        CHECK_EQ(element_bit_string(s.code, ElementFormat::Float4E2M1), std::string("0|11|1"));
        CHECK_EQ(element_hex_string(s.code, ElementFormat::Float4E2M1), std::string("0x7"));
        CHECK_EQ(inspect_element(0.0625, ElementFormat::Float6E3M2).outcome,
                 ElementOutcome::Subnormal);
        CHECK_EQ(inspect_element(0.01, ElementFormat::Float6E3M2).outcome,
                 ElementOutcome::UnderflowToZero);
        CHECK_EQ(inspect_element(kNaN, ElementFormat::Float6E2M3).outcome,
                 ElementOutcome::NaNToZero);
        CHECK_EQ(element_bit_string(127, ElementFormat::E8M0), std::string("01111111"));
        CHECK_EQ(element_bit_string(0x1F, ElementFormat::Float6E2M3), std::string("0|11|111"));
    }
};

MANTISSA_TEST_MAIN(TestBlockQuant, everyCodeRoundTrips, limits, fp4Values, roundingMatchesReference,
                   tiesAndSaturation, fp8AgreesWithStorageCodec, e8m0, stochasticExpectation,
                   mxFloorClipsCeilDoesNot, mxMatchesReference, specialBlocks, nvfp4HandExample,
                   nvfp4MatchesReference, nvfp4TwoDimensional, fakeQuantizeAndStochasticBlocks,
                   fastPathMatchesReference, spanLoopsMatchScalar, badInputNamesTheField,
                   inspection, branchFreeCodecsMatchScalar, stochasticHalvesMatchTheGeneralForm,
                   productCodesMatchFloat64Route, threadCountIndependent, columnBlocksAlongRows,
                   nvfp4ScaleTies, nvfp4TensorPassesItsAmax, nvfp4TensorScaleInGemm)
