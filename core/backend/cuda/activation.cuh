// activation forward/backward: relu, gelu (tanh form), tanh, sigmoid, linear elementwise, and
// softmax over the last axis; float32 math (float64 when a float64 tensor takes part).
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "core/backend/activation.h"
#include "core/numeric/dtype.h"

namespace mantissa::cuda {

struct DevTensor { // a tensor as kernels see it: memory and storage dtype
    const void* data = nullptr;
    DType dtype = DType::Float32;
};

// y = act(x); for softmax, rows of `cols` elements.
void launch_activation_forward(Activation act, DevTensor x, void* y, DType y_dtype,
                               std::int64_t count, std::int64_t cols, bool f64,
                               cudaStream_t stream);
// dx = dy * act'(.) from y (relu, tanh, sigmoid, softmax) or x (gelu); dx may alias dy except
// for softmax.
void launch_activation_backward(Activation act, DevTensor x, DevTensor y, DevTensor dy, void* dx,
                                DType dx_dtype, std::int64_t count, std::int64_t cols, bool f64,
                                cudaStream_t stream);

} // namespace mantissa::cuda
