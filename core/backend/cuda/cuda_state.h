// CudaBackend::Impl: the CUDA state behind the pimpl (stream, cuBLASLt and cuDNN handles, the
// plan caches, the pinned readout ring). Private to core/backend/cuda; it names CUDA types.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "core/backend/cuda/conv_algo.h"
#include "core/backend/cuda/conv_key.h"
#include "core/backend/cuda/cuda_backend.h"
#include "core/backend/cuda/gemm_epilogue.cuh"
#include "core/backend/cuda/gemm_key.h"
#include "core/backend/fp8_gemm.h"

namespace mantissa {

namespace cuda {

// One cached cuBLASLt plan: descriptors, layouts and the heuristic's algorithm for a GemmKey.
struct GemmPlan {
    GemmFusion fusion;
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr; // cuBLASLt's A (our B), B, D
    cublasLtMatmulAlgo_t algo{};
    std::size_t lt_workspace = 0; // what the chosen algorithm needs
    int algo_id = -1;             // CUBLASLT_ALGO_CONFIG_ID, for last_choice()
    bool fell_back = false;       // the fused epilogue had no algorithm: the plain retry
    std::string choice;           // gemm_choice_text(), what last_choice() reports
    GemmPlan() = default;
    GemmPlan(const GemmPlan&) = delete;
    GemmPlan& operator=(const GemmPlan&) = delete;
    ~GemmPlan();
};

// One pass of a convolution (fwd, bwd data or bwd filter): its descriptor and the algorithms it
// may run, in the heuristic's order. `next` moves on when one fails at execution
// (conv_status_tries_next); past the end, the pass runs the direct kernel for good.
struct ConvPassPlan {
    cudnnConvolutionDescriptor_t desc = nullptr;
    std::vector<ConvAlgoPerf> algos;
    std::size_t next = 0;
    const ConvAlgoPerf* current() const { return next < algos.size() ? &algos[next] : nullptr; }
};

// One cached cuDNN plan for a convolution shape and dtype. Each pass falls back on its own: a
// forward pass on cuDNN may pair with a backward-filter pass on the direct kernel.
struct ConvPlan {
    cudnnTensorDescriptor_t x = nullptr, y = nullptr;
    cudnnFilterDescriptor_t w = nullptr;
    ConvPassPlan fwd, bwd_data, bwd_filter;
    std::size_t cudnn_workspace = 0; // the largest need of any algorithm any pass may fall to
    std::size_t filter_bytes = 0;    // one KRSC copy of the filter (256-byte aligned)
    bool any_cudnn() const { return fwd.current() || bwd_data.current() || bwd_filter.current(); }
    ConvPlan() = default;
    ConvPlan(const ConvPlan&) = delete;
    ConvPlan& operator=(const ConvPlan&) = delete;
    ~ConvPlan();
};

// An FP8 GEMM's workspace, from its (checked) arguments: cuBLASLt's FP8 kernels take sizes in
// multiples of 16, so an operand whose sizes miss them is copied into a zero-padded one, and a
// product whose m or n misses them goes to a padded float32 accumulator whose first n columns
// the epilogue kernel reads. Laid out as [accumulator][padded A][padded B][cuBLASLt's scratch],
// each part 256-byte aligned.
struct Fp8GemmLayout {
    std::int64_t m = 0, n = 0, k = 0; // the call's sizes: C (m, n) = A (m, k) · B (n, k)ᵀ
    std::int64_t lt_m = 0, lt_n = 0, lt_k = 0; // the sizes cuBLASLt multiplies (padded)
    bool pad_a = false, pad_b = false, pad_c = false;
    std::size_t acc_bytes = 0; // float32 (lt_m, lt_n) for an epilogue or a padded C; else 0
    std::size_t a_offset = 0, b_offset = 0;
    std::size_t fixed_bytes = 0; // the parts before cuBLASLt's scratch
};

inline Fp8GemmLayout fp8_gemm_layout(const GemmArgs& args) {
    auto up16 = [](std::int64_t v) { return (v + 15) / 16 * 16; };
    auto aligned = [](std::size_t bytes) { return (bytes + 255) / 256 * 256; };
    Fp8GemmLayout l;
    l.m = args.a->rows();
    l.k = args.a->cols();
    l.n = args.b->rows();
    l.lt_m = up16(l.m);
    l.lt_n = up16(l.n);
    l.lt_k = up16(l.k);
    l.pad_a = l.lt_m != l.m || l.lt_k != l.k;
    l.pad_b = l.lt_n != l.n || l.lt_k != l.k;
    l.pad_c = l.lt_m != l.m || l.lt_n != l.n;
    if (l.pad_c || fp8_gemm_has_epilogue(args))
        l.acc_bytes = aligned(static_cast<std::size_t>(l.lt_m * l.lt_n) * sizeof(float));
    l.a_offset = l.acc_bytes;
    l.b_offset = l.a_offset + (l.pad_a ? aligned(static_cast<std::size_t>(l.lt_m * l.lt_k)) : 0);
    l.fixed_bytes = l.b_offset + (l.pad_b ? aligned(static_cast<std::size_t>(l.lt_n * l.lt_k)) : 0);
    return l;
}

// gemm_epilogue.cu's arguments for a GEMM's bias, pre-activation and activation over the
// accumulator `acc` (acc_dtype, rows of C's width) cuBLASLt wrote: out = C, act = the GEMM's
// epilogue.
inline EpilogueArgs epilogue_args(const GemmArgs& args, const void* acc, DType acc_dtype) {
    EpilogueArgs e;
    e.acc = acc;
    e.acc_dtype = acc_dtype;
    e.rows = args.c->rows();
    e.cols = args.c->cols();
    if (args.bias) {
        e.bias = args.bias->data;
        e.bias_dtype = args.bias->dtype;
    }
    if (args.pre_activation) {
        e.pre = args.pre_activation->data;
        e.pre_dtype = args.pre_activation->dtype;
    }
    e.act = args.epilogue;
    e.out = args.c->data;
    e.out_dtype = args.c->dtype;
    return e;
}

// cuBLASLt's best algorithm for a described matmul within `workspace_limit` bytes: the status of
// the query (CUBLAS_STATUS_NOT_SUPPORTED or `found` 0: none), shared by the GEMM paths.
inline cublasStatus_t best_lt_algo(cublasLtHandle_t lt, cublasLtMatmulDesc_t desc,
                                   cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                   cublasLtMatrixLayout_t d, std::size_t workspace_limit,
                                   cublasLtMatmulHeuristicResult_t& result, int& found) {
    cublasLtMatmulPreference_t pref = nullptr;
    cublasStatus_t s = cublasLtMatmulPreferenceCreate(&pref);
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &workspace_limit, sizeof workspace_limit);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulAlgoGetHeuristic(lt, desc, a, b, d, d, pref, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    return s;
}

} // namespace cuda

struct CudaBackend::Impl {
    int device = 0;
    DeviceInfo info;
    cudaStream_t stream = nullptr;
    cublasLtHandle_t lt = nullptr;
    cudnnHandle_t dnn = nullptr;
    bool tf32 = false;
    bool propagate_nan = true;  // see Backend::set_propagate_nan
    int compute_capability = 0; // major * 10 + minor, from open()
    bool fp8_gemm = false;      // cuBLASLt FP8 matmul: compute capability 8.9+ (Ada, Hopper, ...)
    std::string last_choice;    // the algorithm / epilogue of the latest GEMM or convolution
    std::atomic<std::size_t> in_use{0};

    // The readout ring: pinned host slots, an event after each copy and one at each step start.
    StepScalars* ring = nullptr; // kReadoutSlots entries, cudaMallocHost
    cudaEvent_t started[kReadoutSlots] = {};
    cudaEvent_t landed[kReadoutSlots] = {};
    bool has_start[kReadoutSlots] = {};
    // A step timed plan step by plan step (Backend::begin_time_marks): one event a mark, created
    // as a plan first needs them; `marks_in_use` of them belong to the timing in progress.
    std::vector<cudaEvent_t> marks;
    std::size_t marks_in_use = 0;
    // fake_quantize's device counters (amax, clipped, zeros, largest scale): one set, reused by
    // every call in stream order; allocated in open() so a captured step allocates nothing.
    void* quant_scratch = nullptr;
    // softmax_cross_entropy's per-block partial sums (softmax_xent.cuh), likewise.
    void* xent_scratch = nullptr;
    // bias_grad's per-chunk partial sums (bias_grad.cuh), likewise.
    void* bias_scratch = nullptr;

    std::unordered_map<cuda::GemmKey, std::unique_ptr<cuda::GemmPlan>, cuda::GemmKeyHash> gemms;
    std::unordered_map<cuda::ConvKey, std::unique_ptr<cuda::ConvPlan>, cuda::ConvKeyHash> convs;
    // Captured training steps (the graph flag), by (owner, key): see Backend::end_graph_capture.
    std::map<std::pair<const void*, std::uint64_t>, cudaGraphExec_t> graphs;

    explicit Impl(int device_index);
    ~Impl();
    void open();             // creates the stream, handles, ring and events (throws)
    void release() noexcept; // frees whatever open() created, also after a partial open()

    // The cached plan for a call, created (descriptors + heuristic) on first use.
    cuda::GemmPlan& gemm_plan(const GemmArgs& args);
    // FP8 operands with decode scales through cuBLASLt's FP8 matmul (cuda_gemm_fp8.cpp).
    cuda::GemmPlan& fp8_gemm_plan(const GemmArgs& args);
    void fp8_gemm_run(const GemmArgs& args);
    cuda::ConvPlan& conv_plan(const Conv2dArgs& args, DType dtype);
};

} // namespace mantissa
