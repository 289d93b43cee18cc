// cast: converts a tensor to another dtype with one rounding to nearest-even (float64 and int32
// sources go through double, the rest through float, which holds them exactly).
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "core/numeric/dtype.h"

namespace mantissa::cuda {

void launch_cast(const void* src, DType from, void* dst, DType to, std::int64_t count,
                 cudaStream_t stream);

} // namespace mantissa::cuda
