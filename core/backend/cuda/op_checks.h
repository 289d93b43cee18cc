// The CUDA engine's argument checks, shared by its op files: a tensor named the way every error
// message names it, and an internal-error throw when a plan hands an op something it cannot take.
#pragma once

#include <string>

#include "core/error.h"
#include "core/numeric/dtype.h"
#include "core/tensor/tensor.h"

namespace mantissa::cuda_checks {

// "'dense_1/kernel' float32(784, 128)"
inline std::string describe(const Tensor& t) {
    return "'" + t.name + "' " + std::string(dtype_name(t.dtype)) + shape_str(t.shape);
}

inline void require(bool ok, const std::string& message) {
    if (!ok) throw Error(ErrorKind::Internal, message);
}

} // namespace mantissa::cuda_checks
