// core/numeric/quant_math.h, the quantisers' arithmetic shared with the CUDA kernels: written on
// integer bits (no std::ilogb / ldexp / nextafter, which nvcc's device code lacks), it must give
// the bits the <cmath> formulations (the CPU engine's code before the move, kept here as the
// reference) give over sweeps that reach subnormals, the clamps, overflow, inf and NaN.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/hd_bits.h"
#include "core/numeric/element_format.h"
#include "core/numeric/quant_math.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;

namespace qm = mantissa::quant_math;

// Compile-time: the shared functions are constexpr (so nvcc may call them from device code).
static_assert(qm::element_emax(ElementFormat::Float8E4M3) == 8);
static_assert(qm::element_emax(ElementFormat::Float8E5M2) == 15);
static_assert(qm::element_max(ElementFormat::Float4E2M1) == 6.0);
static_assert(qm::mx_scale_code(500.0, ElementFormat::Float8E4M3, false) == 127); // X = 1: clips
static_assert(qm::mx_scale_code(500.0, ElementFormat::Float8E4M3, true) == 128);  // X = 2
static_assert(hd::bit_width(0) == 0 && hd::bit_width(1) == 1 && hd::bit_width(~0ull) == 64);

namespace {

const ElementFormat kSigned[] = {ElementFormat::Float8E4M3, ElementFormat::Float8E5M2,
                                 ElementFormat::Float6E3M2, ElementFormat::Float6E2M3,
                                 ElementFormat::Float4E2M1};

std::uint32_t bits(float x) {
    return std::bit_cast<std::uint32_t>(x);
}

// Magnitudes from float64 subnormals to overflow, ties and near-ties of every binade, and the
// non-finite values.
std::vector<double> sweep() {
    std::vector<double> v = {0.0,
                             std::numeric_limits<double>::denorm_min(),
                             std::numeric_limits<double>::min(),
                             std::numeric_limits<double>::max(),
                             std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::quiet_NaN(),
                             static_cast<double>(std::numeric_limits<float>::denorm_min()),
                             static_cast<double>(std::numeric_limits<float>::max()),
                             500.0,
                             448.0,
                             57344.0,
                             2688.0};
    for (int e = -1074; e <= 1023; e += 7)
        for (double m : {1.0, 1.5, 1.75, 1.0 + 0x1p-23, 2.0 - 0x1p-52, 1.2345678}) {
            const double x = std::ldexp(m, e);
            if (std::isfinite(x)) v.push_back(x);
        }
    std::uint64_t s = 7;
    for (int i = 0; i < 4000; ++i) { // random float32 magnitudes (what training sees)
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        const auto f = std::bit_cast<float>(static_cast<std::uint32_t>(s >> 33) & 0x7F7FFFFFu);
        v.push_back(static_cast<double>(f));
    }
    return v;
}

std::uint32_t mx_scale_code_cmath(double amax, ElementFormat element, bool ceil) {
    if (!std::isfinite(amax)) return 0xFF;
    int k = -127;
    if (amax > 0) {
        const ElementSpec& e = element_spec(element);
        k = std::ilogb(amax) - e.emax;
        if (ceil && amax > std::ldexp(e.max_finite, k)) ++k;
        k = k < -127 ? -127 : (k > 127 ? 127 : k);
    }
    return static_cast<std::uint32_t>(k + 127);
}

float nvfp4_global_scale_cmath(double amax_tensor) {
    if (!std::isfinite(amax_tensor)) return std::numeric_limits<float>::quiet_NaN();
    if (amax_tensor == 0) return 0.0f;
    constexpr double d = 448.0 * 6.0;
    float s = static_cast<float>(amax_tensor / d);
    for (int step = 0; step < 2; ++step) {
        const float down = std::nextafter(s, 0.0f);
        const float up = std::nextafter(s, std::numeric_limits<float>::infinity());
        const bool even = (std::bit_cast<std::uint32_t>(s) & 1u) == 0;
        const double lo = (static_cast<double>(s) + down) / 2 * d;
        const double hi = (static_cast<double>(s) + up) / 2 * d;
        if (s > 0 && (amax_tensor < lo || (amax_tensor == lo && !even)))
            s = down;
        else if (std::isfinite(up) && (amax_tensor > hi || (amax_tensor == hi && !even)))
            s = up;
        else
            break;
    }
    return s > 0 ? s : std::numeric_limits<float>::denorm_min();
}

float scale_for_cmath(double amax, double max_elem, int margin, float previous) {
    if (!(amax > 0) || !std::isfinite(amax)) return previous;
    const float s = static_cast<float>(max_elem) / static_cast<float>(amax);
    return std::ldexp(s, -margin);
}

} // namespace

class TestQuantMath {
public:
    void elementFactsMatchTheSpecTable() {
        for (ElementFormat f : kSigned) {
            CHECK(qm::element_max(f) == element_spec(f).max_finite);
            CHECK_EQ(qm::element_emax(f), element_spec(f).emax);
        }
    }

    void mxScaleMatchesTheCmathRule() {
        int checked = 0;
        for (double a : sweep())
            for (ElementFormat f : kSigned)
                for (bool ceil : {false, true}) {
                    const std::uint32_t got = qm::mx_scale_code(a, f, ceil);
                    const std::uint32_t want = mx_scale_code_cmath(a, f, ceil);
                    CHECK_MSG(got == want, std::to_string(a).c_str());
                    ++checked;
                }
        CHECK(checked > 40000);
    }

    // core/hd_bits.h replaces std::bit_width in the shared arithmetic (nvcc folds the standard one
    // on 64 bits to 0 in device code): it must be std::bit_width's value everywhere.
    void bitWidthMatchesStd() {
        std::vector<std::uint64_t> values;
        for (std::uint64_t v = 0; v < (1u << 16); ++v) values.push_back(v);
        for (int k = 0; k < 64; ++k) {
            const std::uint64_t p = 1ull << k;
            for (std::uint64_t v : {p - 1, p, p + 1, p | (p >> 1), p | 1u}) values.push_back(v);
            values.push_back(~0ull >> k);
        }
        std::uint64_t seed = 12345;
        for (int i = 0; i < 100000; ++i) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            values.push_back(seed >> (i % 64)); // every width, not only the top bits
        }
        for (std::uint64_t v : values)
            CHECK_MSG(hd::bit_width(v) == static_cast<int>(std::bit_width(v)),
                      std::to_string(v).c_str());
    }

    void ilogbMatchesCmath() {
        for (double a : sweep())
            if (a > 0 && std::isfinite(a)) CHECK_EQ(qm::ilogb_of(a), std::ilogb(a));
    }

    void nvfp4GlobalScaleMatchesNextafterRule() {
        for (double a : sweep()) {
            if (a > 1e38) continue; // past float32 the quotient's conversion is undefined
            const float got = qm::nvfp4_global_scale(a), want = nvfp4_global_scale_cmath(a);
            CHECK_MSG(bits(got) == bits(want), std::to_string(a).c_str());
        }
    }

    void fp8ScaleMatchesLdexp() {
        for (double a : sweep())
            for (ElementFormat f : {ElementFormat::Float8E4M3, ElementFormat::Float8E5M2}) {
                if (a > 1e38) continue; // past float32 the amax's conversion is undefined
                for (int margin : {0, 1, 3, 40, 150, 2000}) {
                    const double max = element_spec(f).max_finite;
                    const float got = qm::fp8_scale_for(a, max, margin, 0.25f);
                    const float want = scale_for_cmath(a, max, margin, 0.25f);
                    CHECK_MSG(bits(got) == bits(want), std::to_string(a).c_str());
                }
            }
    }

    // The ring against a plain reading of TE's rule: the next scale comes from the max of the
    // last history_len amaxes (or the latest alone), and the counter wraps without drifting.
    void delayedRecordKeepsTheRing() {
        for (bool most_recent : {false, true}) {
            const std::size_t len = 3;
            std::vector<float> state(2 + len, 0.0f);
            std::vector<double> seen;
            float scale = 1.0f;
            for (int step = 0; step < 20; ++step) {
                const double amax = 1.0 + static_cast<double>((step * 7) % 11);
                qm::delayed_record(state.data(), len, amax, 448.0, 1, most_recent, scale);
                seen.push_back(amax);
                double want_amax = amax;
                if (!most_recent)
                    for (std::size_t i = seen.size() > len ? seen.size() - len : 0; i < seen.size();
                         ++i)
                        want_amax = std::max(want_amax, seen[i]);
                const float want = scale_for_cmath(want_amax, 448.0, 1, scale);
                CHECK(bits(state[0]) == bits(want));
                CHECK(state[1] >= 1.0f && state[1] < 2.0f * len);
                scale = state[0];
            }
        }
    }

    // The per-value cast against the formula with the spec codec.
    void castElementIsTheFormula() {
        const float scale = 448.0f / 3.7f, scale_inv = 1.0f / scale;
        for (double a : sweep()) {
            const auto v = static_cast<float>(a > 1e30 ? 1e30 : a);
            for (float x : {v, -v}) {
                const qm::CastResult r =
                    qm::cast_element(x, scale, scale_inv, ElementFormat::Float8E4M3, 448.0);
                const double s = static_cast<double>(x) * static_cast<double>(scale);
                const double want = decode_element(encode_element(s, ElementFormat::Float8E4M3),
                                                   ElementFormat::Float8E4M3) *
                                    static_cast<double>(scale_inv);
                CHECK(bits(r.value) == bits(static_cast<float>(want)) ||
                      (std::isnan(r.value) && std::isnan(want)));
                CHECK(r.clipped == (std::fabs(s) > 448.0 * (1.0 + 0x1p-22)));
            }
        }
    }
};

MANTISSA_TEST_MAIN(TestQuantMath, elementFactsMatchTheSpecTable, mxScaleMatchesTheCmathRule,
                   bitWidthMatchesStd, ilogbMatchesCmath, nvfp4GlobalScaleMatchesNextafterRule,
                   fp8ScaleMatchesLdexp, delayedRecordKeepsTheRing, castElementIsTheFormula)
