// exponent_histogram: adds the counts of floor(log2|x|) per power of two (histogram.h's bins)
// into an int32 counts tensor on the device; only the 130 counters ever reach the host.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "core/numeric/dtype.h"

namespace mantissa::cuda {

void launch_exponent_histogram(const void* x, DType dtype, std::int64_t count, std::int32_t* counts,
                               cudaStream_t stream);

} // namespace mantissa::cuda
