// The dropout keep-mask as a pure function of (seed, element index): a counter-based hash.
// Shared by the CPU engine and (later) the CUDA kernel, so both drop exactly the same elements.
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace mantissa {

// splitmix64's finaliser (Steele, Lea, Flood 2014): a bijection that mixes every input bit.
MANTISSA_HD inline std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// A 53-bit integer uniform in [0, 2^53) for element `index` under `seed`; u = bits * 2^-53.
MANTISSA_HD inline std::uint64_t dropout_bits(std::uint64_t seed, std::uint64_t index) {
    return splitmix64(seed ^ (index * 0x9E3779B97F4A7C15ull)) >> 11;
}

// The integer threshold equivalent to "keep if u >= rate" (u = bits * 2^-53), so the test is exact
// integer arithmetic on every device: rate * 2^53 is exact in double, its ceiling too.
MANTISSA_HD inline std::uint64_t dropout_threshold(double rate) {
    if (!(rate > 0.0)) return 0; // keep everything (also for NaN, which callers reject earlier)
    if (rate >= 1.0) return std::uint64_t(1) << 53;  // drop everything
    const double scaled = rate * 9007199254740992.0; // 2^53
    std::uint64_t t = static_cast<std::uint64_t>(scaled);
    if (static_cast<double>(t) < scaled) ++t; // ceil
    return t;
}

// True when element `index` survives: u >= rate.
MANTISSA_HD inline bool dropout_keep(std::uint64_t seed, std::uint64_t index,
                                     std::uint64_t threshold) {
    return dropout_bits(seed, index) >= threshold;
}

} // namespace mantissa
