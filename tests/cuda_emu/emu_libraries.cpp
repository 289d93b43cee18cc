// The kernel emulator's stand-ins for NVIDIA's libraries, so the CUDA engine's own code around
// them runs on the CPU:
// - cuBLASLt: a reference matmul for the calls the engine makes (column-major layouts,
//   TRANSA/TRANSB, alpha and beta from the host or the device, FP8 operands with their scale
//   pointers, the BIAS / RELU / GELU epilogues and GELU's aux output), summed in float64 and
//   rounded once into D. It checks what the engine passes it (layouts against the sizes, scale and
//   bias pointers set), not how cuBLASLt's kernels sum: the op table's GEMM tolerance covers that.
// - cuDNN: handles and descriptors, and no algorithm, so every convolution runs the engine's
//   direct kernels (conv2d_direct.cu) as it does where cuDNN refuses a pass.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cudnn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <vector>

namespace mantissa_emu {
void enqueue(cudaStream_t stream, std::function<void()> work); // emu_runtime.cpp
}

namespace {

struct FakeDesc {
    cublasComputeType_t compute;
    cudaDataType_t scale_type;
    cublasOperation_t trans_a = CUBLAS_OP_N, trans_b = CUBLAS_OP_N;
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    cublasLtPointerMode_t pointer_mode = CUBLASLT_POINTER_MODE_HOST;
    const void* bias = nullptr;
    cudaDataType_t bias_type = CUDA_R_32F;
    void* aux = nullptr;
    std::int64_t aux_ld = 0;
    cudaDataType_t aux_type = CUDA_R_32F;
    const float* a_scale = nullptr;
    const float* b_scale = nullptr;
};

struct FakeLayout {
    cudaDataType_t type;
    std::uint64_t rows, cols;
    std::int64_t ld;
};

FakeDesc* desc_of(cublasLtMatmulDesc_t d) {
    return reinterpret_cast<FakeDesc*>(d);
}
FakeLayout* layout_of(cublasLtMatrixLayout_t l) {
    return reinterpret_cast<FakeLayout*>(l);
}

double load(cudaDataType_t type, const void* base, std::size_t i) {
    switch (type) {
    case CUDA_R_64F:
        return static_cast<const double*>(base)[i];
    case CUDA_R_32F:
        return static_cast<const float*>(base)[i];
    case CUDA_R_16F:
        return __half2float(static_cast<const __half*>(base)[i]);
    case CUDA_R_16BF:
        return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
    case CUDA_R_8F_E4M3:
        return static_cast<float>(static_cast<const __nv_fp8_e4m3*>(base)[i]);
    case CUDA_R_8F_E5M2:
        return static_cast<float>(static_cast<const __nv_fp8_e5m2*>(base)[i]);
    default:
        throw std::runtime_error("cuda-emu cuBLASLt: a data type it does not load");
    }
}

// Rounds once from float64 into D's type; a float32-compute value is rounded to float32 first,
// as the tensor cores' float32 accumulator holds it.
void store(cudaDataType_t type, void* base, std::size_t i, double v, bool f64) {
    const float f = static_cast<float>(v);
    switch (type) {
    case CUDA_R_64F:
        static_cast<double*>(base)[i] = v;
        break;
    case CUDA_R_32F:
        static_cast<float*>(base)[i] = f;
        break;
    case CUDA_R_16F:
        static_cast<__half*>(base)[i] = f64 ? __double2half(v) : __float2half_rn(f);
        break;
    case CUDA_R_16BF:
        static_cast<__nv_bfloat16*>(base)[i] = f64 ? __double2bfloat16(v) : __float2bfloat16_rn(f);
        break;
    default:
        throw std::runtime_error("cuda-emu cuBLASLt: a data type it does not store");
    }
}

bool known(cudaDataType_t t) {
    return t == CUDA_R_64F || t == CUDA_R_32F || t == CUDA_R_16F || t == CUDA_R_16BF ||
           t == CUDA_R_8F_E4M3 || t == CUDA_R_8F_E5M2;
}

double gelu_tanh(double x) { // cuBLASLt's GELU: the tanh approximation
    return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

bool has_bias(cublasLtEpilogue_t e) {
    return e == CUBLASLT_EPILOGUE_BIAS || e == CUBLASLT_EPILOGUE_RELU_BIAS ||
           e == CUBLASLT_EPILOGUE_GELU_BIAS || e == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
}
bool has_aux(cublasLtEpilogue_t e) {
    return e == CUBLASLT_EPILOGUE_GELU_AUX || e == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
}

} // namespace

namespace {

// Whether the layouts describe one product: op(A) m x k, op(B) k x n, C and D m x n.
bool layouts_agree(const FakeDesc& f, const FakeLayout& la, const FakeLayout& lb,
                   const FakeLayout& lc, const FakeLayout& ld) {
    const std::uint64_t m = f.trans_a == CUBLAS_OP_N ? la.rows : la.cols;
    const std::uint64_t k = f.trans_a == CUBLAS_OP_N ? la.cols : la.rows;
    const std::uint64_t kb = f.trans_b == CUBLAS_OP_N ? lb.rows : lb.cols;
    const std::uint64_t n = f.trans_b == CUBLAS_OP_N ? lb.cols : lb.rows;
    if (k == kb && ld.rows == m && ld.cols == n && lc.rows == m && lc.cols == n) return true;
    std::fprintf(
        stderr, "cuda-emu cuBLASLt: layouts disagree (A %llux%llu, B %llux%llu, D %llux%llu)\n",
        (unsigned long long)la.rows, (unsigned long long)la.cols, (unsigned long long)lb.rows,
        (unsigned long long)lb.cols, (unsigned long long)ld.rows, (unsigned long long)ld.cols);
    return false;
}

double scalar(const void* p, bool f64) {
    return f64 ? *static_cast<const double*>(p) : *static_cast<const float*>(p);
}

// D = epilogue(alpha · scales · op(A)·op(B) + beta · C + bias), summed in float64, rounded once.
void matmul(const FakeDesc& f, const FakeLayout& la, const FakeLayout& lb, const FakeLayout& lc,
            const FakeLayout& ld, double al, double be, const void* A, const void* B, const void* C,
            void* D) {
    const std::uint64_t m = ld.rows, n = ld.cols;
    const std::uint64_t k = f.trans_a == CUBLAS_OP_N ? la.cols : la.rows;
    const bool f64 = f.scale_type == CUDA_R_64F;
    const bool fp8 = la.type == CUDA_R_8F_E4M3 || la.type == CUDA_R_8F_E5M2;
    const double scale =
        fp8 ? double(f.a_scale ? *f.a_scale : 1.0f) * double(f.b_scale ? *f.b_scale : 1.0f) : 1.0;
    // op(A) as m rows of k and op(B) as n rows of k, decoded once, so the sums run over
    // contiguous float64s.
    std::vector<double> a(m * k), b(n * k), out(m * n);
    for (std::uint64_t i = 0; i < m; ++i)
        for (std::uint64_t p = 0; p < k; ++p)
            a[i * k + p] =
                load(la.type, A, f.trans_a == CUBLAS_OP_N ? i + p * la.ld : p + i * la.ld);
    for (std::uint64_t j = 0; j < n; ++j)
        for (std::uint64_t p = 0; p < k; ++p)
            b[j * k + p] =
                load(lb.type, B, f.trans_b == CUBLAS_OP_N ? p + j * lb.ld : j + p * lb.ld);
    for (std::uint64_t j = 0; j < n; ++j)
        for (std::uint64_t i = 0; i < m; ++i) {
            const double* ai = &a[i * k];
            const double* bj = &b[j * k];
            double sum = 0;
            for (std::uint64_t p = 0; p < k; ++p) sum += ai[p] * bj[p];
            if (!f64) sum = static_cast<float>(sum);
            double v = al * scale * sum;
            if (!f64) v = static_cast<float>(v);
            if (be != 0) v += be * load(lc.type, C, i + j * lc.ld);
            if (has_bias(f.epilogue))
                v += load(f.bias_type, f.bias, i); // one bias per row of column-major D
            if (!f64) v = static_cast<float>(v);
            if (has_aux(f.epilogue))
                store(f.aux_type, f.aux, i + j * static_cast<std::size_t>(f.aux_ld), v, f64);
            switch (f.epilogue) {
            case CUBLASLT_EPILOGUE_RELU:
            case CUBLASLT_EPILOGUE_RELU_BIAS:
                v = v < 0 ? 0 : v; // NaN stays NaN, as the H100 and H200 gave it (op table)
                break;
            case CUBLASLT_EPILOGUE_GELU:
            case CUBLASLT_EPILOGUE_GELU_BIAS:
            case CUBLASLT_EPILOGUE_GELU_AUX:
            case CUBLASLT_EPILOGUE_GELU_AUX_BIAS:
                v = gelu_tanh(v);
                break;
            default:
                break;
            }
            out[i + j * m] = v;
        }
    for (std::uint64_t j = 0; j < n; ++j)
        for (std::uint64_t i = 0; i < m; ++i) store(ld.type, D, i + j * ld.ld, out[i + j * m], f64);
}

} // namespace

struct cublasLtContext {};
struct cudnnContext {};
struct cudnnTensorStruct {};
struct cudnnFilterStruct {};
struct cudnnConvolutionStruct {};

namespace {
// cuDNN's handle and descriptors hold nothing here: each is an empty object.
template <class T>
cudnnStatus_t make_object(T** out) {
    *out = new T;
    return CUDNN_STATUS_SUCCESS;
}
template <class T>
cudnnStatus_t free_object(T* object) {
    delete object;
    return CUDNN_STATUS_SUCCESS;
}
} // namespace

extern "C" {

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
    *handle = new cublasLtContext;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
    delete handle;
    return CUBLAS_STATUS_SUCCESS;
}
size_t cublasLtGetVersion(void) {
    return 130100;
}
const char* cublasLtGetStatusName(cublasStatus_t status) {
    return status == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS" : "CUBLAS_STATUS_(emulated)";
}
const char* cublasLtGetStatusString(cublasStatus_t status) {
    return status == CUBLAS_STATUS_SUCCESS ? "success" : "refused by the cuda-emu cuBLASLt";
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute,
                                        cudaDataType_t scale_type) {
    auto* d = new FakeDesc;
    d->compute = compute;
    d->scale_type = scale_type;
    *desc = reinterpret_cast<cublasLtMatmulDesc_t>(d);
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
    delete desc_of(desc);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                              cublasLtMatmulDescAttributes_t attr, const void* buf,
                                              size_t bytes) {
    FakeDesc& d = *desc_of(desc);
    const auto copy = [&](auto& field) {
        if (bytes != sizeof field) return CUBLAS_STATUS_INVALID_VALUE;
        std::memcpy(&field, buf, bytes);
        return CUBLAS_STATUS_SUCCESS;
    };
    switch (attr) {
    case CUBLASLT_MATMUL_DESC_TRANSA:
        return copy(d.trans_a);
    case CUBLASLT_MATMUL_DESC_TRANSB:
        return copy(d.trans_b);
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
        return copy(d.epilogue);
    case CUBLASLT_MATMUL_DESC_POINTER_MODE:
        return copy(d.pointer_mode);
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
        return copy(d.bias);
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
        return copy(d.bias_type);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER:
        return copy(d.aux);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD:
        return copy(d.aux_ld);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE:
        return copy(d.aux_type);
    case CUBLASLT_MATMUL_DESC_A_SCALE_POINTER:
        return copy(d.a_scale);
    case CUBLASLT_MATMUL_DESC_B_SCALE_POINTER:
        return copy(d.b_scale);
    case CUBLASLT_MATMUL_DESC_FAST_ACCUM:
        return bytes == 1 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    default:
        std::fprintf(stderr, "cuda-emu cuBLASLt: matmul attribute %d not emulated\n",
                     static_cast<int>(attr));
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld) {
    if (ld < static_cast<std::int64_t>(rows)) return CUBLAS_STATUS_INVALID_VALUE;
    *layout = reinterpret_cast<cublasLtMatrixLayout_t>(new FakeLayout{type, rows, cols, ld});
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
    delete layout_of(layout);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
    *pref = reinterpret_cast<cublasLtMatmulPreference_t>(new cublasLtMatmulPreferenceOpaque_t{});
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
    delete pref;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t,
                                                    cublasLtMatmulPreferenceAttributes_t,
                                                    const void*, size_t) {
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t desc,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                              cublasLtMatmulPreference_t, int requested,
                                              cublasLtMatmulHeuristicResult_t results[],
                                              int* returned) {
    *returned = 0;
    const FakeDesc& f = *desc_of(desc);
    const FakeLayout *la = layout_of(a), *lb = layout_of(b), *lc = layout_of(c), *ld = layout_of(d);
    if (!known(la->type) || !known(lb->type) || !known(lc->type) || !known(ld->type))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (ld->type == CUDA_R_8F_E4M3 || ld->type == CUDA_R_8F_E5M2) // no FP8 output emulated
        return CUBLAS_STATUS_NOT_SUPPORTED;
    // cuBLASLt's FP8 rules (its documentation's FP8 table): A transposed and B not (TN), not
    // E5M2 x E5M2, leading dimensions of whole 16 bytes.
    const bool fp8_a = la->type == CUDA_R_8F_E4M3 || la->type == CUDA_R_8F_E5M2;
    const bool fp8_b = lb->type == CUDA_R_8F_E4M3 || lb->type == CUDA_R_8F_E5M2;
    if (fp8_a || fp8_b) {
        if (!fp8_a || !fp8_b || f.trans_a != CUBLAS_OP_T || f.trans_b != CUBLAS_OP_N ||
            (la->type == CUDA_R_8F_E5M2 && lb->type == CUDA_R_8F_E5M2) || la->ld % 16 != 0 ||
            lb->ld % 16 != 0)
            return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    if (has_bias(f.epilogue) && f.bias == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    if (requested < 1) return CUBLAS_STATUS_INVALID_VALUE;
    results[0] = cublasLtMatmulHeuristicResult_t{};
    results[0].workspaceSize = 0;
    results[0].state = CUBLAS_STATUS_SUCCESS;
    results[0].wavesCount = 1.0f;
    *returned = 1;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute(const cublasLtMatmulAlgo_t*,
                                                    cublasLtMatmulAlgoConfigAttributes_t attr,
                                                    void* buf, size_t bytes, size_t* written) {
    if (attr != CUBLASLT_ALGO_CONFIG_ID || bytes != sizeof(std::int32_t))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    const std::int32_t id = 0; // "algo 0": the emulator's one reference algorithm
    std::memcpy(buf, &id, sizeof id);
    if (written) *written = sizeof id;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t desc, const void* alpha,
                              const void* A, cublasLtMatrixLayout_t a_desc, const void* B,
                              cublasLtMatrixLayout_t b_desc, const void* beta, const void* C,
                              cublasLtMatrixLayout_t c_desc, void* D, cublasLtMatrixLayout_t d_desc,
                              const cublasLtMatmulAlgo_t*, void*, size_t, cudaStream_t stream) {
    // What the call passes is read now, as cuBLASLt reads it (the descriptors, and alpha and
    // beta in host pointer mode); device pointers are read when the work runs, which in a
    // captured stream is each replay.
    const FakeDesc f = *desc_of(desc);
    const FakeLayout la = *layout_of(a_desc), lb = *layout_of(b_desc), lc = *layout_of(c_desc),
                     ld = *layout_of(d_desc);
    if (!layouts_agree(f, la, lb, lc, ld)) return CUBLAS_STATUS_INVALID_VALUE;
    if (has_aux(f.epilogue) && (f.aux == nullptr || f.aux_ld < static_cast<std::int64_t>(ld.rows)))
        return CUBLAS_STATUS_INVALID_VALUE;
    const bool f64 = f.scale_type == CUDA_R_64F;
    const bool host_scalars = f.pointer_mode == CUBLASLT_POINTER_MODE_HOST;
    const double host_alpha = host_scalars ? scalar(alpha, f64) : 0,
                 host_beta = host_scalars ? scalar(beta, f64) : 0;
    mantissa_emu::enqueue(stream, [=] {
        matmul(f, la, lb, lc, ld, host_scalars ? host_alpha : scalar(alpha, f64),
               host_scalars ? host_beta : scalar(beta, f64), A, B, C, D);
    });
    return CUBLAS_STATUS_SUCCESS;
}

// --- cuDNN: descriptors, and no algorithm ----------------------------------------------------

cudnnStatus_t cudnnCreate(cudnnHandle_t* handle) {
    return make_object(handle);
}
cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) {
    return free_object(handle);
}
cudnnStatus_t cudnnSetStream(cudnnHandle_t, cudaStream_t) {
    return CUDNN_STATUS_SUCCESS;
}
size_t cudnnGetVersion(void) {
    return 91400;
}
const char* cudnnGetErrorString(cudnnStatus_t status) {
    return status == CUDNN_STATUS_SUCCESS ? "CUDNN_STATUS_SUCCESS"
                                          : "CUDNN_STATUS_NOT_SUPPORTED (the cuda-emu cuDNN)";
}
cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* d) {
    return make_object(d);
}
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) {
    return free_object(d);
}
cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* d) {
    return make_object(d);
}
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d) {
    return free_object(d);
}
cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t* d) {
    return make_object(d);
}
cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d) {
    return free_object(d);
}
cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t, cudnnTensorFormat_t,
                                         cudnnDataType_t, int, int, int, int) {
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t, cudnnDataType_t,
                                         cudnnTensorFormat_t, int, int, int, int) {
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t, int, int, int, int, int,
                                              int, cudnnConvolutionMode_t, cudnnDataType_t) {
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t, cudnnMathType_t) {
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetConvolutionForwardAlgorithmMaxCount(cudnnHandle_t, int* count) {
    *count = 0;
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithmMaxCount(cudnnHandle_t, int* count) {
    *count = 0;
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(cudnnHandle_t, int* count) {
    *count = 0;
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t, const cudnnTensorDescriptor_t,
                                                     const cudnnFilterDescriptor_t,
                                                     const cudnnConvolutionDescriptor_t,
                                                     const cudnnTensorDescriptor_t, const int,
                                                     int* returned,
                                                     cudnnConvolutionFwdAlgoPerf_t*) {
    *returned = 0;
    return CUDNN_STATUS_NOT_SUPPORTED;
}
cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t, const cudnnFilterDescriptor_t, const cudnnTensorDescriptor_t,
    const cudnnConvolutionDescriptor_t, const cudnnTensorDescriptor_t, const int, int* returned,
    cudnnConvolutionBwdDataAlgoPerf_t*) {
    *returned = 0;
    return CUDNN_STATUS_NOT_SUPPORTED;
}
cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t, const cudnnTensorDescriptor_t, const cudnnTensorDescriptor_t,
    const cudnnConvolutionDescriptor_t, const cudnnFilterDescriptor_t, const int, int* returned,
    cudnnConvolutionBwdFilterAlgoPerf_t*) {
    *returned = 0;
    return CUDNN_STATUS_NOT_SUPPORTED;
}
cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t, const void*, const cudnnTensorDescriptor_t,
                                      const void*, const cudnnFilterDescriptor_t, const void*,
                                      const cudnnConvolutionDescriptor_t, cudnnConvolutionFwdAlgo_t,
                                      void*, size_t, const void*, const cudnnTensorDescriptor_t,
                                      void*) {
    return CUDNN_STATUS_NOT_SUPPORTED;
}
cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t, const void*,
                                           const cudnnFilterDescriptor_t, const void*,
                                           const cudnnTensorDescriptor_t, const void*,
                                           const cudnnConvolutionDescriptor_t,
                                           cudnnConvolutionBwdDataAlgo_t, void*, size_t,
                                           const void*, const cudnnTensorDescriptor_t, void*) {
    return CUDNN_STATUS_NOT_SUPPORTED;
}
cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t, const void*,
                                             const cudnnTensorDescriptor_t, const void*,
                                             const cudnnTensorDescriptor_t, const void*,
                                             const cudnnConvolutionDescriptor_t,
                                             cudnnConvolutionBwdFilterAlgo_t, void*, size_t,
                                             const void*, const cudnnFilterDescriptor_t, void*) {
    return CUDNN_STATUS_NOT_SUPPORTED;
}

} // extern "C"
