// The cuBLASLt plan cache's key and the fusion decision for one GEMM: which epilogue cuBLASLt can
// fuse and where the kernel epilogue must take over. Pure host logic, no CUDA type, so it is
// unit-tested on machines without a GPU (tests/tst_cuda_gemm_key.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/backend/backend.h"

namespace mantissa::cuda {

struct GemmKey {
    std::int64_t m = 0, n = 0, k = 0;
    bool transpose_a = false, transpose_b = false;
    DType ab_dtype = DType::Float32, c_dtype = DType::Float32;
    DType b_dtype = DType::Float32; // B's own dtype: FP8 GEMMs may mix e4m3 and e5m2 (else ab)
    bool has_bias = false;
    DType bias_dtype = DType::Float32;
    Activation epilogue = Activation::Linear;
    bool has_pre = false;
    DType pre_dtype = DType::Float32;
    bool accumulate = false;
    bool tf32 = false;
    // float32 A and B holding bfloat16 values only (GemmArgs::exact_in_bfloat16): cuBLASLt's
    // CUBLAS_COMPUTE_32F_FAST_16BF multiplies them on bfloat16 tensor cores, exactly.
    bool fast_bf16 = false;
    // Decode scales on 16/32-bit operands (uses_scaled_gemm: NVFP4's tensor scales): cuBLASLt
    // reads alpha = a_scale · b_scale (and beta = 0) from device memory in the workspace.
    bool scaled = false;
    bool allow_lt_epilogue = true; // false: the retry after cuBLASLt found no fused algorithm
    // NaN must reach C as the CPU engine's ReLU (x < 0 ? 0 : x) leaves it: no cuBLASLt RELU.
    bool propagate_nan = true;

    bool operator==(const GemmKey&) const = default;
};

struct GemmKeyHash {
    std::size_t operator()(const GemmKey& key) const;
};

// Builds the key of a call (shapes as the CPU engine reads them; validation is the caller's).
GemmKey gemm_key(const GemmArgs& args, bool tf32, bool propagate_nan = true);

// cuBLASLt epilogues this engine uses.
enum class LtEpilogue { Default, Bias, Relu, ReluBias, Gelu, GeluBias, GeluAux, GeluAuxBias };

struct GemmFusion {
    DType compute = DType::Float32;   // float64 for float64 operands, float32 otherwise
    DType lt_output = DType::Float32; // what cuBLASLt writes: C's dtype, or the accumulator's
    bool acc_in_workspace = false;    // cuBLASLt writes a float32/64 accumulator in the workspace
    LtEpilogue lt_epilogue = LtEpilogue::Default;
    bool kernel_epilogue = false; // gemm_epilogue.cu adds bias / activation / pre afterwards
    bool softmax_after = false;   // a row softmax runs last (softmax epilogue)
    std::size_t acc_bytes = 0;    // workspace for the accumulator (0 unless acc_in_workspace)
};

// The decision for a key: cuBLASLt's fused epilogues where they compute exactly the CPU engine's
// value (one rounding of act(AB + bias)); the kernel epilogue everywhere else.
GemmFusion gemm_fusion(const GemmKey& key);

// "relu+bias", "gelu_aux+bias", ...: for error messages and the self-test's table.
const char* lt_epilogue_name(LtEpilogue epilogue);
// cuBLASLt's own spelling without the prefix: "RELU_BIAS", "GELU_AUX_BIAS", "DEFAULT".
const char* lt_epilogue_enum_name(LtEpilogue epilogue);

// The workspace a GEMM needs before its plan exists: the accumulator of the fused decision or of
// the retry without cuBLASLt's epilogue, whichever is larger, plus cuBLASLt's scratch. Sized
// from gemm_fusion() alone, so compiling a model asks cuBLASLt nothing and a later fallback
// still fits.
std::size_t gemm_workspace_need(const GemmKey& key, std::size_t lt_scratch);
// Where a scaled GEMM keeps its device alpha and beta: the workspace's first bytes (kept
// 256-byte aligned for what follows).
inline constexpr std::size_t kGemmScalarBytes = 256;

// When cuBLASLt's heuristic found no algorithm: the OutOfMemory message when the operands (A, B,
// C and the accumulator) cannot all fit in `device_bytes` of device memory, naming the GEMM's size
// and what to reduce; nullopt when the size is possible (a real "no algorithm" device error).
std::optional<std::string> gemm_too_large(const GemmKey& key, std::size_t device_bytes,
                                          const std::string& device);

// "m x k · k x n float16 -> float16": the GEMM's size for messages.
std::string gemm_size_text(const GemmKey& key);

// What ran, for Backend::last_choice(): "cublasLt epilogue RELU_BIAS algo 23", with
// " + kernel epilogue relu (accumulator in workspace)" where gemm_epilogue.cu finishes it and
// " (fused algorithm unavailable)" after the retry without cuBLASLt's epilogue.
std::string gemm_choice_text(const GemmKey& key, const GemmFusion& fusion, int algo_id);

} // namespace mantissa::cuda
