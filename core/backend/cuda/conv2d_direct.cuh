// Direct convolution kernels (NHWC, HWIO) with the CPU engine's numerics: float32 accumulation
// (float64 for float64), bias and activation before one rounding. Used where cuDNN is not:
// float64, and paddings cuDNN's symmetric model cannot express.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "core/backend/activation.h"
#include "core/numeric/dtype.h"

namespace mantissa::cuda {

struct ConvGeom { // Conv2dArgs, as kernels see it
    std::int64_t batch = 0, in_h = 0, in_w = 0, in_c = 0;
    std::int64_t out_h = 0, out_w = 0, out_c = 0;
    std::int64_t kernel_h = 0, kernel_w = 0, stride_h = 1, stride_w = 1;
    std::int64_t pad_top = 0, pad_left = 0;
};

struct ConvIo {
    const void* a = nullptr; // forward: x; backward data: dy; backward filter: x
    DType a_dtype = DType::Float32;
    const void* b = nullptr; // forward: w; backward data: w; backward filter: dy
    DType b_dtype = DType::Float32;
    // Optional device float32 tensor scales multiplying the sum before the bias
    // (Conv2dArgs::a_scale, b_scale; their product formed first in the sum's type).
    const float* a_scale = nullptr;
    const float* b_scale = nullptr;
    const void* bias = nullptr; // forward only, optional
    DType bias_dtype = DType::Float32;
    Activation act = Activation::Linear;
    void* pre = nullptr; // forward only, optional
    DType pre_dtype = DType::Float32;
    void* out = nullptr; // y, dx or dw
    DType out_dtype = DType::Float32;
    bool f64 = false;
};

void launch_conv2d_direct_forward(const ConvGeom& g, const ConvIo& io, cudaStream_t stream);
void launch_conv2d_direct_backward_data(const ConvGeom& g, const ConvIo& io, cudaStream_t stream);
void launch_conv2d_direct_backward_filter(const ConvGeom& g, const ConvIo& io, cudaStream_t stream);

} // namespace mantissa::cuda
