// Values that exercise an element format's rounding: every code's value and its float64
// neighbours, every midpoint between adjacent codes of one sign and its neighbours, random values
// over the whole range (subnormal results, saturation), signed zeros and extremes. Shared by the
// suites that check a fast codec against the reference one (tst_block_quant, tst_cuda_shortcuts).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/numeric/element_format.h"

namespace mantissa::unit {

template <ElementFormat F>
std::vector<double> codec_sweep() {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    std::vector<double> xs;
    const std::uint32_t n = 1u << element_spec(F).width;
    for (std::uint32_t c = 0; c < n; ++c) {
        const double v = decode_element(c, F), w = decode_element((c + 1) % n, F);
        if (!std::isfinite(v)) continue;
        for (double x : {v, std::nextafter(v, kInf), std::nextafter(v, -kInf)}) xs.push_back(x);
        if (std::isfinite(w) && std::signbit(v) == std::signbit(w)) {
            const double mid = (v + w) / 2;
            for (double x : {mid, std::nextafter(mid, kInf), std::nextafter(mid, -kInf)})
                xs.push_back(x);
        }
    }
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<int> expo(-160, 30);
    std::uniform_real_distribution<double> u(-2.0, 2.0);
    for (int i = 0; i < 20000; ++i) xs.push_back(std::ldexp(u(rng), expo(rng)));
    for (double x : {0.0, -0.0, 1e300, -1e300, 4.9e-324, 1e-310}) xs.push_back(x);
    return xs;
}

} // namespace mantissa::unit
