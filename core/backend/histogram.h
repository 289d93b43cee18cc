// The exponent histogram the teaching lab draws: counts of floor(log2|x|) per power of two.
// Shared by every backend so a device computes it in place and only 130 counters reach the host.
#pragma once

#include <cstdint>

namespace mantissa {

// Layout of the int32 `counts` tensor of Backend::exponent_histogram, shape (kHistogramBins):
//   bin 0                      exact zeros (including -0)
//   bin 1 + (e - kHistogramMinExp), e = floor(log2|x|) clamped to [kHistogramMinExp,
//   kHistogramMaxExp]
//                              (values below 2^kHistogramMinExp land in bin 1, above
//                              2^kHistogramMaxExp in the last finite bin)
//   bin kHistogramBins - 1     inf and NaN
// The range covers float16's subnormals (2^-24) and its overflow (2^16) with room either side,
// and every loss scale a dynamic scaler reaches; values are taken as stored (loss-scaled).
inline constexpr int kHistogramMinExp = -80;
inline constexpr int kHistogramMaxExp = 47;
inline constexpr int kHistogramExpBins = kHistogramMaxExp - kHistogramMinExp + 1; // 128
inline constexpr int kHistogramBins = kHistogramExpBins + 2;                      // 130
inline constexpr int kHistogramZeroBin = 0;
inline constexpr int kHistogramNonFiniteBin = kHistogramBins - 1;

// The bin of a double value (the reference both engines agree with).
int histogram_bin(double x);

} // namespace mantissa
