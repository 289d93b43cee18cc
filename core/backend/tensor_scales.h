// The factor a product with tensor scales multiplies its float sums by (Conv2dArgs::a_scale,
// b_scale; NVFP4's tensor scales left out of the copies): 1 · a · b formed in the sums' type T,
// a missing scale being 1. One definition for the CPU convolution and the CUDA kernels, so every
// engine forms the same factor.
#pragma once

#include "core/host_device.h"

namespace mantissa {

template <class T>
MANTISSA_HD inline T tensor_scale_product(const float* a_scale, const float* b_scale) {
    T scale = T(1);
    if (a_scale) scale *= T(*a_scale);
    if (b_scale) scale *= T(*b_scale);
    return scale;
}

} // namespace mantissa
