// OpenMP pragmas for the quantisation kernels' loops, spelled once: element loops vectorised
// (`omp simd`), loops over a large tensor split over the threads. Without OpenMP they vanish and
// the loops run in order on one thread, with the same results (every reduction here is an
// integer sum or maximum, so neither the lane nor the thread count changes it).
#pragma once

#if defined(_OPENMP)
#define MANTISSA_PRAGMA(x) _Pragma(#x)
#define MANTISSA_SIMD MANTISSA_PRAGMA(omp simd)
#define MANTISSA_SIMD_SUM(a, b) MANTISSA_PRAGMA(omp simd reduction(+ : a, b))
#define MANTISSA_SIMD_MAX(a) MANTISSA_PRAGMA(omp simd reduction(max : a))
#define MANTISSA_OMP_FOR_MAX(a, cond)                                                              \
    MANTISSA_PRAGMA(omp parallel for simd schedule(static) reduction(max : a) if (cond))
#define MANTISSA_OMP_FOR_SUM_RUNS(a, b, cond)                                                      \
    MANTISSA_PRAGMA(omp parallel for schedule(static) reduction(+ : a, b) if (cond))
#define MANTISSA_OMP_FOR_TOTALS(a, b, c, d, cond)                                                  \
    MANTISSA_PRAGMA(omp parallel for schedule(static) reduction(+ : a, b, c)                       \
                        reduction(max : d) if (cond))
#else
#define MANTISSA_SIMD
#define MANTISSA_SIMD_SUM(a, b)
#define MANTISSA_SIMD_MAX(a)
#define MANTISSA_OMP_FOR_MAX(a, cond)
#define MANTISSA_OMP_FOR_SUM_RUNS(a, b, cond)
#define MANTISSA_OMP_FOR_TOTALS(a, b, c, d, cond)
#endif

#include <cstdint>

namespace mantissa::simd {

// Elements in a tensor before its quantisation is worth splitting over the threads.
inline constexpr std::int64_t kParallelMin = std::int64_t{1} << 14;

} // namespace mantissa::simd
