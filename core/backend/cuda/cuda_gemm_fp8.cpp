// FP8 GEMM on cuBLASLt (issue 18): float8 codes with per-tensor decode scales given as device
// pointers (CUBLASLT_MATMUL_DESC_A/B_SCALE_POINTER), float32 compute and scale type, fast
// accumulation off, D in float32 or bfloat16. cuBLASLt's FP8 kernels run on compute capability
// 8.9+ and take only the "TN" layout (fp8_gemm.h maps it onto GemmArgs). A bias in C's dtype,
// alone or before a ReLU, goes to cuBLASLt's FP8 epilogue (lt_fp8_epilogue_fits); any other
// epilogue (GELU's stored pre-activation, a bias of another dtype) is not handed to cuBLASLt (its
// FP8 epilogues restrict the bias and aux dtypes): D is then a float32 accumulator at the start
// of the workspace, and gemm_epilogue.cu adds the bias, writes the pre-activation and rounds
// act(·) once into C, as the CPU engine does.
// Ran on H100s and an H200 (2026-11-27/28): it matches the CPU engine's decode-and-multiply
// (cpu_gemm.cpp) to a few units of 2^-13, Hopper's FP8 accumulator (op_cases.cpp's tolerance).
// Sizes that miss cuBLASLt's multiples of 16 are padded with zero codes here (fp8_gemm_layout),
// and a bias (+ ReLU) goes to cuBLASLt's own FP8 epilogue where it has one: both written
// 2026-11-29, not yet run on a GPU.
#include <memory>
#include <string>

#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/cuda_state.h"
#include "core/backend/cuda/pad_matrix.cuh"
#include "core/backend/fp8_gemm.h"
#include "core/error.h"

namespace mantissa {

namespace {

cudaDataType_t fp8_type(DType dtype) {
    return dtype == DType::Float8E5M2 ? CUDA_R_8F_E5M2 : CUDA_R_8F_E4M3;
}

cudaDataType_t out_type(DType dtype) {
    return dtype == DType::BFloat16 ? CUDA_R_16BF : CUDA_R_32F;
}

// cuBLASLt's A is our B, its B our A (row-major C = A·Bᵀ is column-major Cᵀ = B·Aᵀ), so our
// B's scale goes to its A_SCALE_POINTER and our A's to its B_SCALE_POINTER. nullptr means 1.
void set_scales(cublasLtMatmulDesc_t desc, const GemmArgs& args) {
    const void* lt_a_scale = args.b_scale ? args.b_scale->data : nullptr;
    const void* lt_b_scale = args.a_scale ? args.a_scale->data : nullptr;
    MANTISSA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                                         &lt_a_scale, sizeof lt_a_scale));
    MANTISSA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                                                         &lt_b_scale, sizeof lt_b_scale));
}

// Whether cuBLASLt's own FP8 epilogue may finish this call: a bias in C's dtype (Transformer
// Engine's FP8 GEMMs add theirs the same way), then nothing or a ReLU where NaN need not
// propagate (gemm_key.cpp's rule for cuBLASLt's RELU), on an unpadded C and with no
// pre-activation to store. It computes act(a_scale · b_scale · A·B + bias) in float32 and rounds
// once into C, as gemm_epilogue.cu does from the accumulator.
bool lt_fp8_epilogue_fits(const GemmArgs& args, const cuda::GemmKey& key,
                          const cuda::Fp8GemmLayout& l) {
    return !l.pad_c && args.bias && !args.pre_activation && key.bias_dtype == key.c_dtype &&
           (args.epilogue == Activation::Linear ||
            (args.epilogue == Activation::Relu && !key.propagate_nan));
}

// Describes the FP8 matmul of `args` into `p` and asks the heuristic; `fused`: with cuBLASLt's
// BIAS / RELU_BIAS epilogue writing C. False when cuBLASLt has no algorithm for it (any status
// but success: a fused attempt then falls back to the accumulator).
bool build_fp8_plan(cublasLtHandle_t lt, const cuda::GemmKey& key, const GemmArgs& args,
                    const cuda::Fp8GemmLayout& l, bool fused, std::size_t lt_limit,
                    cuda::GemmPlan& p) {
    p.fusion.compute = DType::Float32;
    p.fusion.lt_output = args.c->dtype;
    MANTISSA_CUBLAS_CHECK(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    // The TN layout (check_fp8_gemm_tn): cuBLASLt's A (our B, stored (n, k) row-major = (k, n)
    // column-major) transposed, its B (our A, (m, k) row-major = (k, m) column-major) not.
    const cublasOperation_t op_a = CUBLAS_OP_T, op_b = CUBLAS_OP_N;
    MANTISSA_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a));
    MANTISSA_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b));
    // Fast accumulation off: cuBLASLt promotes the tensor cores' partial sums (13-bit mantissa on
    // Hopper) into float32 as it goes, closer to the CPU engine's float32 sum than fast mode.
    const std::int8_t fast_accum = 0;
    MANTISSA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                                                         &fast_accum, sizeof fast_accum));
    set_scales(p.desc, args);
    if (fused) {
        p.fusion.lt_epilogue =
            args.epilogue == Activation::Relu ? cuda::LtEpilogue::ReluBias : cuda::LtEpilogue::Bias;
        const cublasLtEpilogue_t epilogue = args.epilogue == Activation::Relu
                                                ? CUBLASLT_EPILOGUE_RELU_BIAS
                                                : CUBLASLT_EPILOGUE_BIAS;
        const cudaDataType_t bias_type = out_type(key.bias_dtype);
        const void* bias = args.bias->data; // set before the heuristic: it reads the alignment
        if (cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                           sizeof epilogue) != CUBLAS_STATUS_SUCCESS ||
            cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type,
                                           sizeof bias_type) != CUBLAS_STATUS_SUCCESS ||
            cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                           sizeof bias) != CUBLAS_STATUS_SUCCESS)
            return false;
    }
    // The sizes cuBLASLt multiplies: the call's, or padded to its multiples of 16.
    const auto m = static_cast<std::uint64_t>(l.lt_m);
    const auto n = static_cast<std::uint64_t>(l.lt_n);
    const auto k = static_cast<std::uint64_t>(l.lt_k);
    MANTISSA_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p.a, fp8_type(key.b_dtype), k, n, k));
    MANTISSA_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p.b, fp8_type(key.ab_dtype), k, m, k));
    // C and D share a layout: cuBLASLt's FP8 table pairs a float32 D with a float32 C and a
    // bfloat16 D with a bfloat16 C (beta is 0, so C is never read). With a kernel epilogue or
    // padded sizes, D is the float32 accumulator.
    const bool accumulator = !fused && l.acc_bytes > 0;
    const DType d_dtype = accumulator ? DType::Float32 : key.c_dtype;
    MANTISSA_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p.d, out_type(d_dtype), n, m, n));
    p.fusion.kernel_epilogue = accumulator;
    p.fusion.acc_in_workspace = accumulator;
    p.fusion.acc_bytes = accumulator ? l.acc_bytes : 0;

    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t status =
        cuda::best_lt_algo(lt, p.desc, p.a, p.b, p.d, lt_limit, result, found);
    if (status != CUBLAS_STATUS_SUCCESS || found == 0) {
        if (fused || status == CUBLAS_STATUS_NOT_SUPPORTED || found == 0) return false;
        MANTISSA_CUBLAS_CHECK(status);
    }
    p.algo = result.algo;
    p.lt_workspace = result.workspaceSize;
    std::int32_t id = -1;
    std::size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&p.algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id,
                                             &written) == CUBLAS_STATUS_SUCCESS)
        p.algo_id = id;
    return true;
}

} // namespace

bool CudaBackend::supports_fp8_gemm() const {
    return m_impl->fp8_gemm;
}

cuda::GemmPlan& CudaBackend::Impl::fp8_gemm_plan(const GemmArgs& args) {
    check_fp8_gemm_tn(args);
    if (!fp8_gemm)
        throw Error(ErrorKind::InvalidArgument,
                    "gemm (FP8): cuBLASLt's FP8 matmul needs compute capability 8.9 or higher; " +
                        info.name + " has " + std::to_string(compute_capability / 10) + "." +
                        std::to_string(compute_capability % 10) +
                        " (the plan's fake-quantised float32 GEMMs run there instead)");
    cuda::GemmKey key = cuda::gemm_key(args, false, propagate_nan);
    if (auto it = gemms.find(key); it != gemms.end()) return *it->second;
    const cuda::Fp8GemmLayout l = cuda::fp8_gemm_layout(args);
    const std::size_t lt_limit =
        args.workspace.bytes > l.fixed_bytes ? args.workspace.bytes - l.fixed_bytes : 0;
    // cuBLASLt's own epilogue where it fits (issue 26: the kernel epilogue re-read a float32
    // accumulator of every forward GEMM, 0.19 ms of a seed-mlp step on an H100); else, or when
    // its heuristic offers none, the accumulator and gemm_epilogue.cu, which the workspace holds
    // room for either way (fp8_gemm_layout).
    auto plan = std::make_unique<cuda::GemmPlan>();
    bool fused = lt_fp8_epilogue_fits(args, key, l) &&
                 build_fp8_plan(lt, key, args, l, true, lt_limit, *plan);
    if (!fused) {
        plan = std::make_unique<cuda::GemmPlan>();
        if (!build_fp8_plan(lt, key, args, l, false, lt_limit, *plan))
            throw Error(ErrorKind::Device, "cuBLASLt has no FP8 algorithm for gemm " +
                                               cuda::gemm_size_text(key) + " on " + info.name);
    }
    cuda::GemmPlan& p = *plan;
    p.choice =
        "cublasLt fp8 " + std::string(dtype_name(key.ab_dtype)) + " x " +
        std::string(dtype_name(key.b_dtype)) +
        (fused ? std::string(" epilogue ") + cuda::lt_epilogue_enum_name(p.fusion.lt_epilogue)
               : std::string()) +
        " algo " + std::to_string(p.algo_id) +
        (l.pad_a || l.pad_b || l.pad_c ? " (padded to multiples of 16)" : "") +
        (p.fusion.kernel_epilogue ? " + kernel epilogue" : "");
    gemms.emplace(key, std::move(plan));
    return p;
}

void CudaBackend::Impl::fp8_gemm_run(const GemmArgs& args) {
    cuda::GemmPlan& plan = fp8_gemm_plan(args);
    const cuda::Fp8GemmLayout l = cuda::fp8_gemm_layout(args);
    const std::size_t need = l.fixed_bytes + plan.lt_workspace;
    if (args.workspace.bytes < need || (need > 0 && !args.workspace.data))
        throw Error(ErrorKind::Internal, "gemm (FP8): needs " + std::to_string(need) +
                                             " workspace bytes, got " +
                                             std::to_string(args.workspace.bytes) +
                                             " (size it with gemm_workspace_bytes)");
    last_choice = plan.choice;
    set_scales(plan.desc, args); // this call's scale tensors (the plan may come from the cache)
    if (plan.fusion.lt_epilogue != cuda::LtEpilogue::Default) {
        const void* bias = args.bias->data;
        MANTISSA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
            plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    }
    const float alpha = 1.0f, beta = 0.0f;
    auto* ws = static_cast<unsigned char*>(args.workspace.data);
    // Operands whose sizes miss cuBLASLt's multiples of 16, copied with zeros around them.
    const void* a = args.a->data;
    const void* b = args.b->data;
    if (l.pad_a) {
        cuda::launch_pad_matrix(a, 1, l.m, l.k, ws + l.a_offset, l.lt_m, l.lt_k, stream);
        a = ws + l.a_offset;
    }
    if (l.pad_b) {
        cuda::launch_pad_matrix(b, 1, l.n, l.k, ws + l.b_offset, l.lt_n, l.lt_k, stream);
        b = ws + l.b_offset;
    }
    void* d = plan.fusion.acc_in_workspace ? static_cast<void*>(ws) : args.c->data;
    void* lt_ws = ws ? ws + l.fixed_bytes : nullptr;
    MANTISSA_CUBLAS_CHECK(cublasLtMatmul(lt, plan.desc, &alpha, b, plan.a, a, plan.b, &beta, d,
                                         plan.d, d, plan.d, &plan.algo, lt_ws,
                                         args.workspace.bytes - l.fixed_bytes, stream));
    if (!plan.fusion.kernel_epilogue) return;
    // act(acc + bias) rounded once into C, the pre-activation alongside (gemm_epilogue.cu); a
    // padded accumulator's rows are lt_n wide, of which C takes the first n.
    cuda::EpilogueArgs e = cuda::epilogue_args(args, d, DType::Float32);
    if (l.pad_c) e.acc_row_stride = l.lt_n;
    cuda::launch_gemm_epilogue(e, stream);
}

} // namespace mantissa
