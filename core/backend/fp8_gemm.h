// The FP8 GEMM contract every engine shares (GemmArgs with float8 operands and per-tensor decode
// scales, issue 18): which dtypes, scales and epilogues are accepted, and the layout rule
// cuBLASLt's FP8 kernels add on the CUDA engine; and the same decode scales on 16- or 32-bit
// operands (NVFP4's tensor scale, applied after the sum). CUDA-free, so the rules are tested on
// the CPU.
#pragma once

#include "core/backend/backend.h"

namespace mantissa {

bool is_fp8(DType dtype);
// Whether an FP8 call has an epilogue (bias, pre-activation or activation) after the product:
// the CUDA engine then has cuBLASLt write a float32 accumulator and gemm_epilogue.cu finish it.
bool fp8_gemm_has_epilogue(const GemmArgs& args);
// Whether a call takes the FP8 path: a float8 operand.
bool uses_fp8_gemm(const GemmArgs& args);
// Whether a call scales 16- or 32-bit operands' product: a decode scale and no float8 operand.
// NVFP4 copies whose tensor scale is left to the GEMM (BlockQuantConfig::tensor_scale_in_gemm)
// take it: C = act((a_scale · b_scale) · (A · B) + bias), the scales multiplied in float32 first,
// then the float32 product, as the FP8 path and cuBLASLt's alpha do.
bool uses_scaled_gemm(const GemmArgs& args);
// Throws Error(InvalidArgument) naming the rule: A and B share a float32, float16 or bfloat16
// dtype, each scale a one-element float32 tensor, no accumulation (C += would be scaled too).
void check_scaled_gemm(const GemmArgs& args);

// A convolution pass with tensor scales (Conv2dArgs::a_scale, b_scale): throws
// Error(InvalidArgument) naming `op` and the rule: each scale a one-element float32 tensor, and
// no bias gradient in the same call (it sums dy as stored, without dy's scale).
void check_scaled_conv(const Conv2dArgs& args, const Tensor* dbias, const char* op);
// Whether a convolution pass has a tensor scale.
bool uses_scaled_conv(const Conv2dArgs& args);

// Throws Error(InvalidArgument) naming the op and the rule: A and B both float8 (e4m3 · e4m3,
// e4m3 · e5m2 or e5m2 · e4m3: cuBLASLt has no e5m2 · e5m2 kernel), C float32 or bfloat16, each
// scale a one-element float32 tensor; bias, pre_activation and an elementwise epilogue are
// applied after the scales (cuBLASLt's order: act(a_scale · b_scale · A·B + bias)); no softmax
// epilogue and no accumulation.
void check_fp8_gemm(const GemmArgs& args);

// cuBLASLt's FP8 layout rule on top (cublasLtMatmul: "A must be transposed and B non-transposed
// (the TN format)"). The CUDA engine hands cuBLASLt row-major C = A·B as column-major
// Cᵀ = Bᵀ·Aᵀ, so TN is GemmArgs' transpose_a = false, transpose_b = true:
// C (m, n) = A (m, k) · B (n, k)ᵀ, both operands contiguous along k. Any m, n, k: cuBLASLt's
// other rule (sizes in multiples of 16) is the CUDA engine's to meet, by copying an operand
// whose sizes miss it into a zero-padded one (zeros add nothing to a sum: the same C).
void check_fp8_gemm_tn(const GemmArgs& args);

// quantize_fp8's arguments (Fp8QuantArgs), checked alike by every engine: throws
// Error(Internal) naming the tensor and the rule (a plan that passes bind never fails here).
// Returns the (rows, cols) view the codes are written over.
struct Fp8QuantShape {
    std::int64_t rows = 0, cols = 0;
};
Fp8QuantShape check_quantize_fp8(const Fp8QuantArgs& args);

} // namespace mantissa
