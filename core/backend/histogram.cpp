// The reference binning of the exponent histogram (core/backend/histogram.h).
// frexp gives the exact binary exponent, so subnormals and powers of two land exactly.
#include "core/backend/histogram.h"

#include <algorithm>
#include <cmath>

namespace mantissa {

int histogram_bin(double x) {
    if (x == 0.0) return kHistogramZeroBin;
    if (!std::isfinite(x)) return kHistogramNonFiniteBin;
    int exponent = 0;
    std::frexp(x, &exponent); // |x| = m * 2^exponent, m in [0.5, 1): floor(log2|x|) = exponent - 1
    int e = std::clamp(exponent - 1, kHistogramMinExp, kHistogramMaxExp);
    return 1 + (e - kHistogramMinExp);
}

} // namespace mantissa
