// bias_grad: db(j) = sum over rows of dy(r, j), for Dense (batch, units) and for a convolution's
// NHWC output read as (batch*h*w, channels). Deterministic: a fixed summation order.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "core/backend/activation.h"
#include "core/numeric/dtype.h"

namespace mantissa::cuda {

// Bytes of device scratch for the per-chunk partial sums (one engine's, reused in stream order,
// allocated once so that a captured step allocates nothing).
inline constexpr std::size_t kBiasGradScratchBytes = std::size_t(1) << 20;

// `scratch`: kBiasGradScratchBytes on the device (null: the one-stage kernel).
void launch_bias_grad(const void* dy, DType dy_dtype, std::int64_t rows, std::int64_t cols,
                      void* db, DType db_dtype, bool f64, void* scratch, cudaStream_t stream);

// dZ = dY ⊙ act'(in) (`in` is the output y for ReLU, tanh and sigmoid, the pre-activation x for
// GELU; in, dY and dZ of one float32 / float16 / bfloat16 `dtype`, dZ may be dY) and db = its
// column sums, in one pass over the rows: dZ and db exactly as launch_activation_backward's fast
// path followed by launch_bias_grad compute them. False, with nothing launched, where it does not
// apply (another activation, rows not of whole 16-byte vectors, misaligned, too few rows for the
// chunked sums, or a float64 db).
bool launch_activation_bias_grad(Activation act, const void* in, const void* dy, void* dz,
                                 DType dtype, std::int64_t rows, std::int64_t cols, void* db,
                                 DType db_dtype, void* scratch, cudaStream_t stream);

// db(j) = the sum of column j of `partial` (chunks x cols float32 on the device), added in chunk
// order: the chunked bias gradient's second stage, for a pass that wrote its own partial sums
// (launch_relu_grad_fp8). db is float32, float16 or bfloat16.
void launch_bias_totals(const float* partial, std::int64_t chunks, std::int64_t cols, void* db,
                        DType db_dtype, cudaStream_t stream);

} // namespace mantissa::cuda
