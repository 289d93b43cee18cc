// One run of NVFP4's random Hadamard transform, (1/4)·H16·diag(s)·v, as both engines compute it:
// the signs applied in float64, the Sylvester butterfly (stages h = 1, 2, 4, 8, each a + b then
// a - b) in float64, and one rounding to float32 at the end. MANTISSA_HD, so the CUDA kernel
// (core/backend/cuda/hadamard.cu) runs this very sequence of exactly rounded float64 operations;
// the CPU's vectorised random_hadamard_rows (hadamard.cpp) runs the same operations in the same
// order, and tst_quant_train::hadamardRunMatchesRows checks the two agree bit for bit.
#pragma once

#include "core/host_device.h"

namespace mantissa::hadamard_math {

inline constexpr int kRun = 16;

// v[i] <- (1/4) · sum_j H16[i][j] · signs[j] · v[i], in place; v holds float32 values on entry.
MANTISSA_HD inline void random_hadamard_run(float (&v)[kRun], const float (&signs)[kRun]) {
    double w[kRun];
    for (int i = 0; i < kRun; ++i) w[i] = static_cast<double>(signs[i]) * static_cast<double>(v[i]);
    for (int h = 1; h < kRun; h *= 2)
        for (int i = 0; i < kRun; i += 2 * h)
            for (int k = i; k < i + h; ++k) {
                const double a = w[k], b = w[k + h];
                w[k] = a + b;
                w[k + h] = a - b;
            }
    for (int i = 0; i < kRun; ++i) v[i] = static_cast<float>(w[i] * 0.25);
}

} // namespace mantissa::hadamard_math
