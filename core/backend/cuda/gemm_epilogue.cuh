// The GEMM/convolution epilogue where cuBLASLt or cuDNN cannot fuse it (float64, tanh, sigmoid,
// a pre-activation output, mixed dtypes): out = act(acc + bias), pre = acc + bias, rounded once;
// with tensor scales (a quantised convolution's, issue 26), acc · (a_scale · b_scale) first.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "core/backend/activation.h"
#include "core/numeric/dtype.h"

namespace mantissa::cuda {

struct EpilogueArgs {
    const void* acc = nullptr; // (rows, cols): the product, in acc_dtype (may be `out` itself)
    DType acc_dtype = DType::Float32;
    std::int64_t rows = 0, cols = 0;
    // acc's elements per row when it is wider than out (0: cols): the FP8 GEMM's accumulator
    // padded to cuBLASLt's multiples of 16, of which the first `cols` columns are the product.
    std::int64_t acc_row_stride = 0;
    // Optional device float32 scalars multiplying acc before the bias, their product formed
    // first in the compute type (Conv2dArgs::a_scale, b_scale); nullptr: 1.
    const float* a_scale = nullptr;
    const float* b_scale = nullptr;
    const void* bias = nullptr; // optional (cols)
    DType bias_dtype = DType::Float32;
    Activation act = Activation::Linear; // elementwise only (softmax runs as a separate op)
    void* pre = nullptr;                 // optional (rows, cols): the value before act
    DType pre_dtype = DType::Float32;
    void* out = nullptr; // (rows, cols)
    DType out_dtype = DType::Float32;
    bool f64 = false; // compute in double
};

void launch_gemm_epilogue(const EpilogueArgs& args, cudaStream_t stream);

// A scaled GEMM's device alpha and beta (cuBLASLt's CUBLASLT_POINTER_MODE_DEVICE): out[0] =
// a_scale · b_scale rounded once to float32 (a missing scale is 1), out[1] = 0. One thread, so a
// captured step holds it like any launch.
void launch_gemm_scalars(const float* a_scale, const float* b_scale, float* out,
                         cudaStream_t stream);

} // namespace mantissa::cuda
