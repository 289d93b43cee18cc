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

// 16-bit operands whose rows miss 16 bytes (a 10-unit layer's W and dY: rows of 20 bytes) leave
// cuBLASLt its "align2" kernels only, which ran seed-mlp's three 10-unit GEMMs at 3-4x their
// bytes' time (0.05 ms each of a 1.7 ms step, H200 profile of 2026-11-28). From kPadMinWork
// multiply-adds such an operand is copied into a zero-padded one whose rows are whole multiples of
// 8 elements, and a C whose rows miss them becomes a float32 accumulator of the padded width that
// the kernel epilogue rounds into C. Zeros along k add nothing to any sum; the padded rows and
// columns of the product are never read.
struct GemmPadding {
    std::int64_t lt_m = 0, lt_n = 0, lt_k = 0; // the sizes cuBLASLt multiplies
    bool pad_a = false, pad_b = false, pad_c = false;
    std::size_t a_bytes = 0, b_bytes = 0; // the padded copies of A and B (256-byte multiples)
    bool any() const { return pad_a || pad_b || pad_c; }
};
// Below this many multiply-adds a GEMM stays unpadded: there a launch's few microseconds, and
// padding adds up to two (the copy, the epilogue), weigh about what the aligned kernel saves. An
// estimate, not a measurement; it keeps every preset but seed-mlp unpadded (their 10-unit layers
// are 128 x 128 x 10) and lets the op-case table check the padded path at 256 x 2048 x 10.
inline constexpr std::int64_t kPadMinWork = std::int64_t{1} << 22;
// The padded copies and accumulator together stay under this: padding is for a skinny side (a
// 10-unit layer: a few hundred kilobytes a step), not a wide operand or a wide C, whose copy or
// float32 accumulator would grow the plan's workspace by a tensor's worth.
inline constexpr std::size_t kPadMaxBytes = std::size_t{64} << 20;

// The padding of a key: none unless both operands are float16 or bfloat16, C is not accumulated
// into, the epilogue is not softmax, the product reaches kPadMinWork, some operand's or C's rows
// miss a multiple of 8 elements, and what padding adds stays within kPadMaxBytes.
GemmPadding gemm_padding(const GemmKey& key);

struct GemmFusion {
    GemmPadding pad;                  // gemm_padding(key): the sizes cuBLASLt sees
    DType compute = DType::Float32;   // float64 for float64 operands, float32 otherwise
    DType lt_output = DType::Float32; // what cuBLASLt writes: C's dtype, or the accumulator's
    bool acc_in_workspace = false;    // cuBLASLt writes a float32/64 accumulator in the workspace
    LtEpilogue lt_epilogue = LtEpilogue::Default;
    bool kernel_epilogue = false; // gemm_epilogue.cu adds bias / activation / pre afterwards
    bool softmax_after = false;   // a row softmax runs last (softmax epilogue)
    std::size_t acc_bytes = 0;    // workspace for the accumulator (0 unless acc_in_workspace)
};

// The decision for a key: cuBLASLt's fused epilogues where they compute exactly the CPU engine's
// value (one rounding of act(AB + bias)); the kernel epilogue everywhere else, and always after a
// padded C (its float32 accumulator in the workspace).
GemmFusion gemm_fusion(const GemmKey& key);

// "relu+bias", "gelu_aux+bias", ...: for error messages and the self-test's table.
const char* lt_epilogue_name(LtEpilogue epilogue);
// cuBLASLt's own spelling without the prefix: "RELU_BIAS", "GELU_AUX_BIAS", "DEFAULT".
const char* lt_epilogue_enum_name(LtEpilogue epilogue);

// The workspace a GEMM needs before its plan exists: the accumulator of the fused decision or of
// the retry without cuBLASLt's epilogue, whichever is larger, the padded copies of A and B, plus
// cuBLASLt's scratch; laid out as [scalars][accumulator][padded A][padded B][scratch]. Sized
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
