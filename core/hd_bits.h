// Bit counting for MANTISSA_HD code (core/host_device.h): one plain definition both compilers
// build, because the standard one is not safe in CUDA device code. nvcc compiles libstdc++'s
// std::bit_width on a 64-bit unsigned long (it calls __builtin_clzl, which is no device builtin)
// to the constant 0 in a kernel, without a warning: the PTX shows it, and on the H100 of
// 2026-11-27 every subnormal element code decoded wrongly (bench/gpu/2026-11-27-h100-selftest.txt,
// the 72 fake_quantize failures). tests/check_hd_headers.py keeps such calls out of the shared
// headers; tst_quant_math checks this definition against std::bit_width on the host.
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace mantissa::hd {

// std::bit_width's value (the number of bits needed to hold x; 0 for 0) by a binary search on
// shifts: integer operations only, no builtin, the same in constant evaluation, on the host and
// in a kernel.
MANTISSA_HD constexpr int bit_width(std::uint64_t x) {
    int width = 0;
    for (int step = 32; step > 0; step >>= 1)
        if (x >> step) {
            x >>= step;
            width += step;
        }
    return width + (x != 0 ? 1 : 0);
}

} // namespace mantissa::hd
