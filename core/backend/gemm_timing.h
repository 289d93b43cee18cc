// The wall time of a square matrix product on an engine: `mantissa-cli bench --gemm` reports its
// median, `mantissa-cli profile` takes its best as the device's FLOP/s roof. One place sets the
// product up (operands filled, the workspace the engine asks for), so the two measure the same.
#pragma once

#include <cstdint>
#include <vector>

#include "core/backend/backend.h"

namespace mantissa {

// C = A·B for n×n operands of `dtype`: one untimed call, then `repeats` calls, each synchronised
// and timed; their times in milliseconds, in order. Throws Error(OutOfMemory) as allocate() does.
std::vector<double> time_square_gemm(Backend& backend, DType dtype, std::int64_t n, int repeats);

} // namespace mantissa
