// GEMM on cuBLASLt: row-major C = A·B computed as column-major Cᵀ = Bᵀ·Aᵀ, one cached plan
// (descriptors + heuristic algorithm) per shape/dtype/epilogue, fused bias/ReLU/GELU epilogues
// where they give the CPU engine's single rounding, and gemm_epilogue.cu everywhere else. Decode
// scales on 16/32-bit operands (NVFP4's tensor scales) reach cuBLASLt as a device alpha. Large
// 16-bit GEMMs whose rows miss 16 bytes (a 10-unit layer) multiply zero-padded copies
// (gemm_key.h's gemm_padding; passes its op cases on an H200, 2026-11-30).
#include <string>

#include "core/backend/cuda/activation.cuh"
#include "core/backend/cuda/bias_grad.cuh"
#include "core/backend/cuda/cast.cuh"
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/cuda_state.h"
#include "core/backend/cuda/gemm_epilogue.cuh"
#include "core/backend/cuda/op_checks.h"
#include "core/backend/cuda/pad_matrix.cuh"
#include "core/backend/fp8_gemm.h"
#include "core/error.h"

namespace mantissa {

namespace {

using cuda::GemmFusion;
using cuda::GemmKey;
using cuda::GemmPlan;
using cuda::LtEpilogue;

// cuBLASLt's own scratch, beside the accumulator in the Plan's workspace. Hopper's fastest
// kernels ask for up to 32 MiB; 8 MiB keeps the workspace small and still lets the heuristic
// choose split-K kernels for the small GEMMs.
constexpr std::size_t kLtWorkspace = std::size_t{8} << 20;

using cuda_checks::describe;

void fail(const std::string& message) {
    throw Error(ErrorKind::Internal, message);
}

cudaDataType_t cuda_type(DType dtype) {
    switch (dtype) {
    case DType::Float64:
        return CUDA_R_64F;
    case DType::Float32:
        return CUDA_R_32F;
    case DType::Float16:
        return CUDA_R_16F;
    case DType::BFloat16:
        return CUDA_R_16BF;
    default:
        throw Error(
            ErrorKind::InvalidArgument,
            "gemm: the CUDA engine multiplies float64, float32, float16 and bfloat16, not " +
                std::string(dtype_name(dtype)) + "; use the CPU engine (--device cpu)");
    }
}

cublasLtEpilogue_t lt_epilogue(LtEpilogue e) {
    switch (e) {
    case LtEpilogue::Default:
        return CUBLASLT_EPILOGUE_DEFAULT;
    case LtEpilogue::Bias:
        return CUBLASLT_EPILOGUE_BIAS;
    case LtEpilogue::Relu:
        return CUBLASLT_EPILOGUE_RELU;
    case LtEpilogue::ReluBias:
        return CUBLASLT_EPILOGUE_RELU_BIAS;
    case LtEpilogue::Gelu:
        return CUBLASLT_EPILOGUE_GELU;
    case LtEpilogue::GeluBias:
        return CUBLASLT_EPILOGUE_GELU_BIAS;
    case LtEpilogue::GeluAux:
        return CUBLASLT_EPILOGUE_GELU_AUX;
    case LtEpilogue::GeluAuxBias:
        return CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
    }
    return CUBLASLT_EPILOGUE_DEFAULT;
}

bool has_bias(LtEpilogue e) {
    return e == LtEpilogue::Bias || e == LtEpilogue::ReluBias || e == LtEpilogue::GeluBias ||
           e == LtEpilogue::GeluAuxBias;
}

bool has_aux(LtEpilogue e) {
    return e == LtEpilogue::GeluAux || e == LtEpilogue::GeluAuxBias;
}

// Validation with the CPU engine's rules and messages (cpu_gemm.cpp's plan_gemm).
void check_args(const GemmArgs& args) {
    if (!args.a || !args.b || !args.c) fail("gemm: A, B and C must all be given");
    const Tensor& a = *args.a;
    const Tensor& b = *args.b;
    const Tensor& c = *args.c;
    if (a.dtype != b.dtype)
        fail("gemm: A " + describe(a) + " and B " + describe(b) + " must share a dtype");
    const std::int64_t m = args.transpose_a ? a.cols() : a.rows();
    const std::int64_t k = args.transpose_a ? a.rows() : a.cols();
    const std::int64_t kb = args.transpose_b ? b.cols() : b.rows();
    const std::int64_t n = args.transpose_b ? b.rows() : b.cols();
    const std::string sizes = "A " + describe(a) + (args.transpose_a ? "^T" : "") + " · B " +
                              describe(b) + (args.transpose_b ? "^T" : "") + " -> C " + describe(c);
    if (k != kb)
        fail("gemm: inner dimensions differ (" + std::to_string(k) + " vs " + std::to_string(kb) +
             "): " + sizes);
    if (c.rows() != m || c.cols() != n)
        fail("gemm: C must be (" + std::to_string(m) + ", " + std::to_string(n) + "): " + sizes);
    if (args.bias && args.bias->numel() != n)
        fail("gemm: bias " + describe(*args.bias) + " must have " + std::to_string(n) +
             " elements: " + sizes);
    if (args.pre_activation && args.pre_activation->numel() != m * n)
        fail("gemm: pre_activation " + describe(*args.pre_activation) + " must have " +
             std::to_string(m * n) + " elements: " + sizes);
    if (args.accumulate && (args.epilogue != Activation::Linear || args.pre_activation))
        fail("gemm: accumulate=true needs a linear epilogue and no pre_activation: " + sizes);
    const Tensor* operands[] = {args.a, args.c, args.bias, args.pre_activation};
    for (const Tensor* t : operands)
        if (t) cuda_type(t->dtype); // throws for float8 / integer tensors
}

// Creates descriptors and asks the heuristic; false when it has no algorithm for this plan.
// Runs at the first gemm() of a key, with that call's pointers: cublasLt.h says the heuristic
// "depend[s] on [BIAS_POINTER's / EPILOGUE_AUX_POINTER's] value to determine expected pointer
// alignment", so they are set before it asks (later calls use arena tensors, 256-byte aligned).
bool build_plan(cublasLtHandle_t lt, const GemmKey& key, const GemmArgs& args, GemmPlan& p) {
    p.fusion = cuda::gemm_fusion(key);
    const bool f64 = p.fusion.compute == DType::Float64;
    // MX operands hold bfloat16 values only: FAST_16BF converts them to bfloat16 exactly, and
    // their products and float32 sums are the float32 GEMM's (issue 26: MX ran on float32 SIMT
    // GEMMs, 23 ms of seed-mlp's 33 ms step on an H100). It wins over TF32, which is half as fast.
    const cublasComputeType_t compute = f64             ? CUBLAS_COMPUTE_64F
                                        : key.fast_bf16 ? CUBLAS_COMPUTE_32F_FAST_16BF
                                        : key.tf32      ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                        : CUBLAS_COMPUTE_32F;
    MANTISSA_CUBLAS_CHECK(
        cublasLtMatmulDescCreate(&p.desc, compute, f64 ? CUDA_R_64F : CUDA_R_32F));
    // cuBLASLt's A is our B, its B our A (column-major view of row-major storage).
    const cublasOperation_t op_a = key.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_b = key.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    MANTISSA_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a));
    MANTISSA_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b));
    if (key.scaled) {
        // NVFP4's tensor scales: alpha = a_scale · b_scale is known only on the device.
        const cublasLtPointerMode_t mode = CUBLASLT_POINTER_MODE_DEVICE;
        MANTISSA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
            p.desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &mode, sizeof mode));
    }
    const cublasLtEpilogue_t epilogue = lt_epilogue(p.fusion.lt_epilogue);
    MANTISSA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                                         &epilogue, sizeof epilogue));
    if (has_bias(p.fusion.lt_epilogue)) {
        const cudaDataType_t bias_type = cuda_type(key.bias_dtype);
        MANTISSA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
            p.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type));
        const void* bias = args.bias->data;
        MANTISSA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
            p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    }
    if (has_aux(p.fusion.lt_epilogue)) {
        const std::int64_t ld = key.n;
        MANTISSA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
            p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof ld));
        const cudaDataType_t aux_type = cuda_type(key.pre_dtype);
        MANTISSA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
            p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, &aux_type, sizeof aux_type));
        void* aux = args.pre_activation->data;
        MANTISSA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
            p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof aux));
    }
    // Row-major X (r, c) is column-major (c, r) with leading dimension c; the sizes are the
    // padded ones where gemm_padding() copies an operand (else the call's).
    const cudaDataType_t ab = cuda_type(key.ab_dtype);
    const auto m = static_cast<std::uint64_t>(p.fusion.pad.lt_m);
    const auto n = static_cast<std::uint64_t>(p.fusion.pad.lt_n);
    const auto k = static_cast<std::uint64_t>(p.fusion.pad.lt_k);
    const std::uint64_t b_rows = key.transpose_b ? k : n; // our B stored (k, n) or (n, k)
    const std::uint64_t b_cols = key.transpose_b ? n : k;
    const std::uint64_t a_rows = key.transpose_a ? m : k; // our A stored (m, k) or (k, m)
    const std::uint64_t a_cols = key.transpose_a ? k : m;
    MANTISSA_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p.a, ab, b_rows, b_cols, b_rows));
    MANTISSA_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p.b, ab, a_rows, a_cols, a_rows));
    MANTISSA_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p.d, cuda_type(p.fusion.lt_output), n, m, n));

    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t status =
        cuda::best_lt_algo(lt, p.desc, p.a, p.b, p.d, kLtWorkspace, result, found);
    if (status == CUBLAS_STATUS_NOT_SUPPORTED || found == 0) return false;
    MANTISSA_CUBLAS_CHECK(status);
    p.algo = result.algo;
    p.lt_workspace = result.workspaceSize;
    // The algorithm's id, for last_choice() (cublasLt.h: CUBLASLT_ALGO_CONFIG_ID, int32_t).
    std::int32_t id = -1;
    std::size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&p.algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id,
                                             &written) == CUBLAS_STATUS_SUCCESS)
        p.algo_id = id;
    return true;
}

} // namespace

namespace cuda {

GemmPlan::~GemmPlan() {
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (desc) cublasLtMatmulDescDestroy(desc);
}

} // namespace cuda

GemmPlan& CudaBackend::Impl::gemm_plan(const GemmArgs& args) {
    check_args(args);
    GemmKey key = cuda::gemm_key(args, tf32, propagate_nan);
    if (auto it = gemms.find(key); it != gemms.end()) return *it->second;
    auto plan = std::make_unique<GemmPlan>();
    if (!build_plan(lt, key, args, *plan)) {
        // No fused algorithm: the same product without cuBLASLt's epilogue, then the kernel
        // (gemm_workspace_need() reserved its accumulator).
        GemmKey plain = key;
        plain.allow_lt_epilogue = false;
        plan = std::make_unique<GemmPlan>();
        bool built = build_plan(lt, plain, args, *plan);
        if (!built && plain.fast_bf16) {
            // Not on bfloat16 tensor cores either: the float32 GEMM, as before MX had its path.
            plain.fast_bf16 = false;
            plan = std::make_unique<GemmPlan>();
            built = build_plan(lt, plain, args, *plan);
        }
        if (!built) {
            // An impossible size is the user's to fix (OutOfMemory says what to reduce); a
            // possible one is the engine's problem.
            if (auto too_large = cuda::gemm_too_large(key, info.memory_total, info.id))
                throw Error(ErrorKind::OutOfMemory, *too_large);
            throw Error(ErrorKind::Device, "cuBLASLt has no algorithm for gemm " +
                                               cuda::gemm_size_text(key) + " on " + info.name +
                                               "; use the CPU engine (--device cpu)");
        }
        plan->fell_back = true;
        plan->choice = cuda::gemm_choice_text(plain, plan->fusion, plan->algo_id);
    } else {
        plan->choice = cuda::gemm_choice_text(key, plan->fusion, plan->algo_id);
    }
    GemmPlan& out = *plan;
    gemms.emplace(key, std::move(plan));
    return out;
}

// From the fusion decision alone: compiling a model asks cuBLASLt nothing, so an impossible
// size fails at the arena's allocation as OutOfMemory, not in the heuristic.
std::size_t CudaBackend::gemm_workspace_bytes(const GemmArgs& args) const {
    if (uses_fp8_gemm(args)) {
        check_fp8_gemm_tn(args);
        // cuBLASLt writes C itself, or a float32 accumulator the epilogue kernel finishes; padded
        // operands where the sizes miss cuBLASLt's multiples of 16.
        return cuda::fp8_gemm_layout(args).fixed_bytes + kLtWorkspace;
    }
    check_args(args);
    if (uses_scaled_gemm(args)) check_scaled_gemm(args);
    return cuda::gemm_workspace_need(cuda::gemm_key(args, m_impl->tf32, m_impl->propagate_nan),
                                     kLtWorkspace);
}

void CudaBackend::gemm(const GemmArgs& args) {
    Impl& s = *m_impl;
    if (uses_fp8_gemm(args)) {
        s.fp8_gemm_run(args);
        return;
    }
    const bool scaled = uses_scaled_gemm(args);
    if (scaled) check_scaled_gemm(args);
    GemmPlan& plan = s.gemm_plan(args);
    const GemmFusion& f = plan.fusion;
    const Tensor& c = *args.c;
    const std::int64_t m = c.rows(), n = c.cols();
    // The workspace: [device alpha and beta, when scaled][accumulator][padded A][padded B]
    // [cuBLASLt's scratch].
    const cuda::GemmPadding& pad = f.pad;
    const std::size_t scalar_bytes = scaled ? cuda::kGemmScalarBytes : 0;
    const std::size_t fixed = scalar_bytes + f.acc_bytes + pad.a_bytes + pad.b_bytes;
    const std::size_t need = fixed + plan.lt_workspace;
    if (args.workspace.bytes < need || (need > 0 && !args.workspace.data))
        fail("gemm: needs " + std::to_string(need) + " workspace bytes, got " +
             std::to_string(args.workspace.bytes) + " (size it with gemm_workspace_bytes)");
    s.last_choice = plan.choice;
    auto* ws = static_cast<unsigned char*>(args.workspace.data);
    auto* scalars = scaled ? reinterpret_cast<float*>(ws) : nullptr;
    if (ws) ws += scalar_bytes;
    void* acc = f.acc_in_workspace ? ws : c.data; // what cuBLASLt writes
    unsigned char* padded_a = ws ? ws + f.acc_bytes : nullptr;
    unsigned char* padded_b = ws ? padded_a + pad.a_bytes : nullptr;
    void* lt_ws = ws ? padded_b + pad.b_bytes : nullptr;
    const std::size_t lt_ws_bytes = args.workspace.bytes - fixed;
    // Operands whose rows miss 16 bytes, copied with zeros around them (gemm_padding).
    const void* a_data = args.a->data;
    const void* b_data = args.b->data;
    if (pad.pad_a) {
        cuda::launch_pad_matrix(a_data, 2, args.a->rows(), args.a->cols(), padded_a,
                                args.transpose_a ? pad.lt_k : pad.lt_m,
                                args.transpose_a ? pad.lt_m : pad.lt_k, s.stream);
        a_data = padded_a;
    }
    if (pad.pad_b) {
        cuda::launch_pad_matrix(b_data, 2, args.b->rows(), args.b->cols(), padded_b,
                                args.transpose_b ? pad.lt_n : pad.lt_k,
                                args.transpose_b ? pad.lt_k : pad.lt_n, s.stream);
        b_data = padded_b;
    }

    if (args.accumulate && f.acc_in_workspace) // C += ...: start the accumulator from C
        cuda::launch_cast(c.data, c.dtype, acc, f.compute, m * n, s.stream);
    if (has_bias(f.lt_epilogue)) {
        const void* bias = args.bias->data;
        MANTISSA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
            plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    }
    if (has_aux(f.lt_epilogue)) {
        void* aux = args.pre_activation->data;
        MANTISSA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
            plan.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof aux));
    }
    const double alpha_d = 1.0, beta_d = args.accumulate ? 1.0 : 0.0;
    const float alpha_f = 1.0f, beta_f = args.accumulate ? 1.0f : 0.0f;
    const bool f64 = f.compute == DType::Float64;
    const void* alpha = f64 ? static_cast<const void*>(&alpha_d) : &alpha_f;
    const void* beta = f64 ? static_cast<const void*>(&beta_d) : &beta_f;
    if (scaled) { // float32 compute (check_scaled_gemm); accumulate is refused, so beta is 0
        // With beta in device memory cuBLASLt cannot know it is 0 when it picks its epilogue,
        // and a kernel that reads C then would turn a NaN left there (an overflowed step's dX,
        // the workspace's last use) into 0 · NaN = NaN: what it writes starts from zeros.
        MANTISSA_CUDA_CHECK(
            cudaMemsetAsync(acc, 0, f.acc_in_workspace ? f.acc_bytes : c.bytes(), s.stream));
        cuda::launch_gemm_scalars(
            static_cast<const float*>(args.a_scale ? args.a_scale->data : nullptr),
            static_cast<const float*>(args.b_scale ? args.b_scale->data : nullptr), scalars,
            s.stream);
        alpha = scalars;
        beta = scalars + 1;
    }
    MANTISSA_CUBLAS_CHECK(cublasLtMatmul(s.lt, plan.desc, alpha, b_data, plan.a, a_data, plan.b,
                                         beta, acc, plan.d, acc, plan.d, &plan.algo, lt_ws,
                                         lt_ws_bytes, s.stream));
    if (!f.kernel_epilogue) return;
    cuda::EpilogueArgs e = cuda::epilogue_args(args, acc, f.acc_in_workspace ? f.compute : c.dtype);
    e.f64 = f64;
    if (pad.pad_c) e.acc_row_stride = pad.lt_n; // the first m rows' first n columns are C
    if (!f.softmax_after) {
        cuda::launch_gemm_epilogue(e, s.stream);
        return;
    }
    // Softmax epilogue: bias (and pre) into the accumulator in place, then the row softmax
    // from the accumulator into C, rounded once.
    e.act = Activation::Linear;
    e.out = acc;
    e.out_dtype = e.acc_dtype;
    cuda::launch_gemm_epilogue(e, s.stream);
    cuda::launch_activation_forward(Activation::Softmax, {acc, e.acc_dtype}, c.data, c.dtype, m * n,
                                    n, f64, s.stream);
}

void CudaBackend::activation_backward_bias_grad(Activation act, const Tensor& x, const Tensor& y,
                                                const Tensor& dy, Tensor& dx, Tensor& db) {
    // One kernel where the derivative's input (y, or x for GELU), dY and dZ share a 16-bit or
    // float32 dtype and shape (the Dense layers of every policy but float64);
    // launch_activation_bias_grad declines the rest.
    const Tensor& in = act == Activation::Gelu ? x : y;
    const std::int64_t cols = db.numel();
    const bool fits = in.dtype == dy.dtype && dx.dtype == dy.dtype && in.numel() == dy.numel() &&
                      dx.numel() == dy.numel() && cols > 0 && dy.numel() % cols == 0 &&
                      is_floating(db.dtype) && in.data && dy.data && dx.data && db.data;
    if (fits && cuda::launch_activation_bias_grad(act, in.data, dy.data, dx.data, dy.dtype,
                                                  dy.numel() / cols, cols, db.data, db.dtype,
                                                  m_impl->bias_scratch, m_impl->stream))
        return;
    activation_backward(act, x, y, dy, dx);
    bias_grad(dx, db);
}

void CudaBackend::bias_grad(const Tensor& dy, Tensor& db) {
    const std::int64_t cols = db.numel();
    if (!is_floating(dy.dtype) || !is_floating(db.dtype) || cols <= 0 || dy.numel() % cols != 0)
        fail("bias_grad: dy " + describe(dy) + " does not fit db " + describe(db));
    const bool f64 = dy.dtype == DType::Float64 || db.dtype == DType::Float64;
    cuda::launch_bias_grad(dy.data, dy.dtype, dy.numel() / cols, cols, db.data, db.dtype, f64,
                           m_impl->bias_scratch, m_impl->stream);
}

} // namespace mantissa
