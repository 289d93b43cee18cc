// Convolution on cuDNN (legacy v9 API, NHWC, algorithms chosen once per shape by cuDNN's
// heuristics), with Keras's HWIO filters transposed to cuDNN's KRSC in the workspace; float64,
// paddings cuDNN cannot express, and a pass whose every algorithm cuDNN refused run the direct
// kernels (conv2d_direct.cu) instead. The rules (math types, fallback order) are conv_algo.cpp's.
// A quantised layer's operands are float32 copies while its output is bfloat16 (or float16): cuDNN
// multiplies the copies in float32 into a float32 buffer, which one kernel rounds into the output
// (issue 26: those passes ran on the direct kernels, and the quantised cnn took 5-8x
// mixed_float16's step on an H100). Copies that hold only bfloat16 values
// (Conv2dArgs::exact_in_bfloat16: MX, and NVFP4 with its tensor scale left out) convolve on TF32
// tensor cores with the GEMM-type algorithms, whose products of such values are exact (FFT and
// Winograd would round their transformed operands to TF32: usable_conv_algos); their tensor scales
// (Conv2dArgs::a_scale, b_scale) multiply the float32 sums in that rounding kernel, as cuBLASLt's
// alpha does for a Dense layer.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/backend/cuda/bias_grad.cuh"
#include "core/backend/cuda/cast.cuh"
#include "core/backend/cuda/conv2d_direct.cuh"
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/cuda_state.h"
#include "core/backend/cuda/filter_layout.cuh"
#include "core/backend/cuda/gemm_epilogue.cuh"
#include "core/backend/fp8_gemm.h"
#include "core/error.h"

namespace mantissa {

namespace {

using cuda::ConvPlan;

// The most scratch one cuDNN algorithm may take; faster ones asking for more are passed over.
constexpr std::size_t kCudnnWorkspaceLimit = std::size_t{64} << 20;

std::size_t align256(std::size_t bytes) {
    return (bytes + 255) / 256 * 256;
}

std::string geometry_text(const Conv2dArgs& g) {
    return "conv2d (" + std::to_string(g.batch) + ", " + std::to_string(g.in_h) + ", " +
           std::to_string(g.in_w) + ", " + std::to_string(g.in_c) + ") -> (" +
           std::to_string(g.out_h) + ", " + std::to_string(g.out_w) + ", " +
           std::to_string(g.out_c) + ")";
}

cudnnDataType_t cudnn_type(DType dtype) {
    switch (dtype) {
    case DType::Float32:
        return CUDNN_DATA_FLOAT;
    case DType::Float16:
        return CUDNN_DATA_HALF;
    case DType::BFloat16:
        return CUDNN_DATA_BFLOAT16;
    default:
        return CUDNN_DATA_DOUBLE;
    }
}

cuda::ConvGeom geom(const Conv2dArgs& a) {
    return {a.batch,    a.in_h,     a.in_w,     a.in_c,     a.out_h,   a.out_w,   a.out_c,
            a.kernel_h, a.kernel_w, a.stride_h, a.stride_w, a.pad_top, a.pad_left};
}

using cuda::ConvAlgoPerf;
using cuda::ConvMath;
using cuda::ConvPass;
using cuda::ConvPassPlan;

// conv_algo.h mirrors cuDNN's enums without its headers; these keep the two in step.
static_assert(int(CUDNN_DEFAULT_MATH) == int(ConvMath::Default) &&
              int(CUDNN_TENSOR_OP_MATH) == int(ConvMath::TensorOp) &&
              int(CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) ==
                  int(ConvMath::TensorOpAllowConversion) &&
              int(CUDNN_FMA_MATH) == int(ConvMath::Fma));
static_assert(CUDNN_CONVOLUTION_FWD_ALGO_COUNT == 8 && CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT == 6 &&
              CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT == 7 &&
              CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM == 1 &&
              CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING == 6);
static_assert(CUDNN_STATUS_NOT_SUPPORTED == 3000 && CUDNN_STATUS_EXECUTION_FAILED == 5000);

// Owns a convolution descriptor until the plan takes it, so a failing setter does not leak it.
struct ConvDescGuard {
    cudnnConvolutionDescriptor_t desc = nullptr;
    ConvDescGuard() = default;
    ConvDescGuard(const ConvDescGuard&) = delete;
    ConvDescGuard& operator=(const ConvDescGuard&) = delete;
    ~ConvDescGuard() {
        if (desc) cudnnDestroyConvolutionDescriptor(desc);
    }
    cudnnConvolutionDescriptor_t release() {
        cudnnConvolutionDescriptor_t out = desc;
        desc = nullptr;
        return out;
    }
};

cudnnConvolutionDescriptor_t make_conv_desc(const Conv2dArgs& g, bool strict_fp32) {
    ConvDescGuard guard;
    MANTISSA_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&guard.desc));
    // Keras convolutions are cross-correlations; 16-bit data accumulates in float32.
    MANTISSA_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
        guard.desc, static_cast<int>(g.pad_top), static_cast<int>(g.pad_left),
        static_cast<int>(g.stride_h), static_cast<int>(g.stride_w), 1, 1, CUDNN_CROSS_CORRELATION,
        CUDNN_DATA_FLOAT));
    // The heuristic answers for the math type set here: FMA only for strict float32 (PyTorch's
    // v7 path sets the same and then asserts ASSERT_CORRECT_PRECISION: FMA for float32 without
    // TF32), so conv_math_allowed() keeps the FMA answers.
    MANTISSA_CUDNN_CHECK(cudnnSetConvolutionMathType(
        guard.desc, strict_fp32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH));
    return guard.release();
}

// cudnnConvolution*AlgoPerf_t (cudnn_cnn.h: algo, status, time, memory, determinism, mathType)
// as conv_algo.h's CUDA-free entry.
template <class Perf>
std::vector<ConvAlgoPerf> to_perf(const Perf* perf, int found) {
    std::vector<ConvAlgoPerf> out;
    for (int i = 0; i < found; ++i)
        out.push_back({static_cast<int>(perf[i].algo), perf[i].status == CUDNN_STATUS_SUCCESS,
                       perf[i].memory, perf[i].determinism == CUDNN_DETERMINISTIC,
                       static_cast<ConvMath>(perf[i].mathType)});
    return out;
}

// The pass's descriptor gets the math type of the algorithm it runs next.
void apply_math(ConvPassPlan& pass) {
    if (const ConvAlgoPerf* algo = pass.current())
        MANTISSA_CUDNN_CHECK(
            cudnnSetConvolutionMathType(pass.desc, static_cast<cudnnMathType_t>(algo->math)));
}

// Fills the plan's cuDNN part: each pass keeps the heuristic's algorithms it may run; a pass
// with none (or a shape cuDNN's descriptors refuse) runs the direct kernel, the others stay on
// cuDNN.
void build_cudnn(cudnnHandle_t dnn, const Conv2dArgs& g, DType dtype, bool tf32,
                 bool tf32_exact_only, ConvPlan& p) {
    const bool strict = dtype == DType::Float32 && !tf32;
    const cudnnDataType_t type = cudnn_type(dtype);
    MANTISSA_CUDNN_CHECK(cudnnCreateTensorDescriptor(&p.x));
    MANTISSA_CUDNN_CHECK(cudnnCreateTensorDescriptor(&p.y));
    MANTISSA_CUDNN_CHECK(cudnnCreateFilterDescriptor(&p.w));
    if (cudnnSetTensor4dDescriptor(p.x, CUDNN_TENSOR_NHWC, type, int(g.batch), int(g.in_c),
                                   int(g.in_h), int(g.in_w)) != CUDNN_STATUS_SUCCESS ||
        cudnnSetTensor4dDescriptor(p.y, CUDNN_TENSOR_NHWC, type, int(g.batch), int(g.out_c),
                                   int(g.out_h), int(g.out_w)) != CUDNN_STATUS_SUCCESS ||
        cudnnSetFilter4dDescriptor(p.w, type, CUDNN_TENSOR_NHWC, int(g.out_c), int(g.in_c),
                                   int(g.kernel_h), int(g.kernel_w)) != CUDNN_STATUS_SUCCESS)
        return;
    p.fwd.desc = make_conv_desc(g, strict);
    p.bwd_data.desc = make_conv_desc(g, strict);
    p.bwd_filter.desc = make_conv_desc(g, strict);

    // As many answers as cuDNN may give (an algorithm may come once per math type); the enum's
    // size when the count cannot be read.
    const auto capacity = [](cudnnStatus_t status, int count, int fallback) {
        return status == CUDNN_STATUS_SUCCESS && count > 0 ? count : fallback;
    };
    int found = 0, max_count = 0;
    cudnnStatus_t counted = cudnnGetConvolutionForwardAlgorithmMaxCount(dnn, &max_count);
    std::vector<cudnnConvolutionFwdAlgoPerf_t> fwd(
        capacity(counted, max_count, CUDNN_CONVOLUTION_FWD_ALGO_COUNT));
    if (cudnnGetConvolutionForwardAlgorithm_v7(dnn, p.x, p.w, p.fwd.desc, p.y, int(fwd.size()),
                                               &found, fwd.data()) == CUDNN_STATUS_SUCCESS)
        p.fwd.algos = cuda::usable_conv_algos(to_perf(fwd.data(), found), ConvPass::Forward, dtype,
                                              tf32, kCudnnWorkspaceLimit, tf32_exact_only);
    found = max_count = 0;
    counted = cudnnGetConvolutionBackwardDataAlgorithmMaxCount(dnn, &max_count);
    std::vector<cudnnConvolutionBwdDataAlgoPerf_t> data(
        capacity(counted, max_count, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT));
    if (cudnnGetConvolutionBackwardDataAlgorithm_v7(dnn, p.w, p.y, p.bwd_data.desc, p.x,
                                                    int(data.size()), &found,
                                                    data.data()) == CUDNN_STATUS_SUCCESS)
        p.bwd_data.algos =
            cuda::usable_conv_algos(to_perf(data.data(), found), ConvPass::BackwardData, dtype,
                                    tf32, kCudnnWorkspaceLimit, tf32_exact_only);
    found = max_count = 0;
    counted = cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(dnn, &max_count);
    std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> filter(
        capacity(counted, max_count, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT));
    if (cudnnGetConvolutionBackwardFilterAlgorithm_v7(dnn, p.x, p.y, p.bwd_filter.desc, p.w,
                                                      int(filter.size()), &found,
                                                      filter.data()) == CUDNN_STATUS_SUCCESS)
        p.bwd_filter.algos =
            cuda::usable_conv_algos(to_perf(filter.data(), found), ConvPass::BackwardFilter, dtype,
                                    tf32, kCudnnWorkspaceLimit, tf32_exact_only);
    for (ConvPassPlan* pass : {&p.fwd, &p.bwd_data, &p.bwd_filter}) {
        apply_math(*pass);
        // Room for whichever algorithm of the list a failure falls to.
        p.cudnn_workspace = std::max(p.cudnn_workspace, cuda::conv_algos_workspace(pass->algos));
    }
    if (p.any_cudnn())
        p.filter_bytes =
            align256(static_cast<std::size_t>(g.kernel_h * g.kernel_w * g.in_c * g.out_c) *
                     dtype_size(dtype));
}

// Runs a pass on cuDNN, moving down its list when an algorithm is refused at execution
// (NOT_SUPPORTED / EXECUTION_FAILED); false when the list is used up (the caller then runs the
// direct kernel, and so does every later call of this plan). `call(algo)` returns cuDNN's status.
template <class Call>
bool run_cudnn(ConvPassPlan& pass, ConvPass which, std::string& choice, const char* what,
               Call&& call) {
    while (const ConvAlgoPerf* algo = pass.current()) {
        const cudnnStatus_t status = call(algo->algo);
        if (status == CUDNN_STATUS_SUCCESS) {
            choice = cuda::conv_choice_text(which, algo);
            return true;
        }
        if (!cuda::conv_status_tries_next(static_cast<int>(status)))
            cuda::throw_cudnn_error(status, what, __FILE__, __LINE__);
        cudaGetLastError(); // a refused launch leaves no error behind for the next call
        ++pass.next;
        apply_math(pass);
    }
    return false;
}

void check_dtype(DType dtype, const Conv2dArgs& g) {
    if (dtype != DType::Float64 && dtype != DType::Float32 && dtype != DType::Float16 &&
        dtype != DType::BFloat16)
        throw Error(ErrorKind::InvalidArgument,
                    geometry_text(g) +
                        ": the CUDA engine convolves float64, float32, float16 "
                        "and bfloat16, not " +
                        std::string(dtype_name(dtype)) + "; use the CPU engine (--device cpu)");
}

// A pass's result in the operands' dtype when the output's differs, from the stream-ordered
// pool (a captured step holds the allocation as a graph node); freed in stream order.
class PoolBuffer {
public:
    PoolBuffer(std::size_t bytes, cudaStream_t stream) : m_stream(stream) {
        MANTISSA_CUDA_CHECK(cudaMallocAsync(&m_data, bytes, stream));
    }
    ~PoolBuffer() { cudaFreeAsync(m_data, m_stream); }
    PoolBuffer(const PoolBuffer&) = delete;
    PoolBuffer& operator=(const PoolBuffer&) = delete;
    void* data() const { return m_data; }

private:
    void* m_data = nullptr;
    cudaStream_t m_stream;
};

// Whether a pass writes its output through a float32 buffer: float32 operands (a quantised
// layer's copies) into a 16-bit output, which the buffer's float32 sums reach rounded once. Any
// other mix (16-bit operands into a wider output, float64) keeps the direct kernel, whose sums
// are in the wider type.
bool widens_into(DType operands, DType out) {
    return operands == DType::Float32 && (out == DType::Float16 || out == DType::BFloat16);
}

struct Scratch { // the workspace, carved: [KRSC filter | cuDNN scratch]
    void* filter = nullptr;
    void* cudnn = nullptr;
    std::size_t cudnn_bytes = 0;
};

// A tensor scale's device float32 (nullptr: none).
const float* scale_data(const Tensor* scale) {
    return scale ? static_cast<const float*>(scale->data) : nullptr;
}

// The rounding kernel over a pass's (rows, cols) result: acc · scales [+ bias, act] into out.
cuda::EpilogueArgs finishing(const Conv2dArgs& args, const void* acc, DType acc_dtype,
                             std::int64_t rows, std::int64_t cols, void* out, DType out_dtype) {
    cuda::EpilogueArgs e;
    e.acc = acc;
    e.acc_dtype = acc_dtype;
    e.rows = rows;
    e.cols = cols;
    e.a_scale = scale_data(args.a_scale);
    e.b_scale = scale_data(args.b_scale);
    e.out = out;
    e.out_dtype = out_dtype;
    e.f64 = acc_dtype == DType::Float64 || out_dtype == DType::Float64;
    return e;
}

Scratch carve(const ConvPlan& p, const Workspace& ws, const Conv2dArgs& g) {
    if (ws.bytes < p.filter_bytes + p.cudnn_workspace || !ws.data)
        throw Error(ErrorKind::Internal, geometry_text(g) + ": needs " +
                                             std::to_string(p.filter_bytes + p.cudnn_workspace) +
                                             " workspace bytes, got " + std::to_string(ws.bytes) +
                                             " (size it with conv2d_workspace_bytes)");
    auto* base = static_cast<unsigned char*>(ws.data);
    return {base, base + p.filter_bytes, ws.bytes - p.filter_bytes};
}

} // namespace

namespace cuda {

ConvPlan::~ConvPlan() {
    if (x) cudnnDestroyTensorDescriptor(x);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (w) cudnnDestroyFilterDescriptor(w);
    for (ConvPassPlan* pass : {&fwd, &bwd_data, &bwd_filter})
        if (pass->desc) cudnnDestroyConvolutionDescriptor(pass->desc);
}

} // namespace cuda

ConvPlan& CudaBackend::Impl::conv_plan(const Conv2dArgs& args, DType dtype) {
    check_dtype(dtype, args);
    const cuda::ConvKey key = cuda::conv_key(args, dtype, tf32);
    if (auto it = convs.find(key); it != convs.end()) return *it->second;
    auto plan = std::make_unique<ConvPlan>(); // owns every descriptor, also when a call throws
    if (dtype != DType::Float64 && cuda::cudnn_padding_fits(args))
        build_cudnn(dnn, args, dtype, key.tf32, key.tf32_exact_only, *plan);
    if (!plan->any_cudnn()) plan->cudnn_workspace = plan->filter_bytes = 0;
    ConvPlan& out = *plan;
    convs.emplace(key, std::move(plan));
    return out;
}

std::size_t CudaBackend::conv2d_workspace_bytes(const Conv2dArgs& args, DType dtype) const {
    const ConvPlan& p = m_impl->conv_plan(args, dtype);
    return p.filter_bytes + p.cudnn_workspace;
}

void CudaBackend::conv2d_forward(const Conv2dArgs& args, const Tensor& x, const Tensor& w,
                                 const Tensor* bias, Activation epilogue, Tensor& y,
                                 Tensor* pre_activation, Workspace workspace) {
    Impl& s = *m_impl;
    if (epilogue == Activation::Softmax)
        throw Error(ErrorKind::InvalidArgument,
                    geometry_text(args) +
                        ": softmax is not a convolution epilogue; use linear, relu, gelu, tanh "
                        "or sigmoid");
    check_scaled_conv(args, nullptr, "conv2d_forward");
    ConvPlan& p = s.conv_plan(args, x.dtype);
    const bool f64 = x.dtype == DType::Float64 || y.dtype == DType::Float64;
    const bool widen = widens_into(x.dtype, y.dtype);
    const bool scaled = uses_scaled_conv(args);
    if (p.fwd.current() && w.dtype == x.dtype && (y.dtype == x.dtype || widen)) {
        const Scratch scratch = carve(p, workspace, args);
        cuda::launch_transpose(w.data, args.kernel_h * args.kernel_w * args.in_c, args.out_c,
                               scratch.filter, dtype_size(w.dtype), s.stream); // HWIO -> KRSC
        std::optional<PoolBuffer> wide;
        if (widen)
            wide.emplace(static_cast<std::size_t>(y.numel()) * dtype_size(x.dtype), s.stream);
        void* out = widen ? wide->data() : y.data;
        const float one = 1.0f, zero = 0.0f;
        const bool ran = run_cudnn(
            p.fwd, ConvPass::Forward, s.last_choice, "cudnnConvolutionForward", [&](int algo) {
                return cudnnConvolutionForward(s.dnn, &one, p.x, x.data, p.w, scratch.filter,
                                               p.fwd.desc,
                                               static_cast<cudnnConvolutionFwdAlgo_t>(algo),
                                               scratch.cudnn, scratch.cudnn_bytes, &zero, p.y, out);
            });
        if (ran) {
            if (!widen && !scaled && !bias && !pre_activation && epilogue == Activation::Linear)
                return;
            // Scales, bias and activation over (batch*h*w, out_c): in place where cuDNN rounded
            // y once, else from the wide buffer into y, rounded once there.
            cuda::EpilogueArgs e =
                finishing(args, out, widen ? x.dtype : y.dtype,
                          args.batch * args.out_h * args.out_w, args.out_c, y.data, y.dtype);
            if (bias) {
                e.bias = bias->data;
                e.bias_dtype = bias->dtype;
            }
            e.act = epilogue;
            if (pre_activation) {
                e.pre = pre_activation->data;
                e.pre_dtype = pre_activation->dtype;
            }
            e.f64 = f64;
            cuda::launch_gemm_epilogue(e, s.stream);
            return;
        }
    }
    cuda::ConvIo io{x.data, x.dtype, w.data, w.dtype};
    io.a_scale = scale_data(args.a_scale);
    io.b_scale = scale_data(args.b_scale);
    if (bias) {
        io.bias = bias->data;
        io.bias_dtype = bias->dtype;
    }
    io.act = epilogue;
    if (pre_activation) {
        io.pre = pre_activation->data;
        io.pre_dtype = pre_activation->dtype;
    }
    io.out = y.data;
    io.out_dtype = y.dtype;
    io.f64 = f64;
    cuda::launch_conv2d_direct_forward(geom(args), io, s.stream);
    s.last_choice = cuda::conv_choice_text(ConvPass::Forward, nullptr);
}

void CudaBackend::conv2d_backward_data(const Conv2dArgs& args, const Tensor& dy, const Tensor& w,
                                       Tensor& dx, Workspace workspace) {
    Impl& s = *m_impl;
    check_scaled_conv(args, nullptr, "conv2d_backward_data");
    ConvPlan& p = s.conv_plan(args, dy.dtype);
    const bool widen = widens_into(dy.dtype, dx.dtype);
    if (p.bwd_data.current() && w.dtype == dy.dtype && (dx.dtype == dy.dtype || widen)) {
        const Scratch scratch = carve(p, workspace, args);
        cuda::launch_transpose(w.data, args.kernel_h * args.kernel_w * args.in_c, args.out_c,
                               scratch.filter, dtype_size(w.dtype), s.stream);
        std::optional<PoolBuffer> wide;
        if (widen)
            wide.emplace(static_cast<std::size_t>(dx.numel()) * dtype_size(dy.dtype), s.stream);
        void* out = widen ? wide->data() : dx.data;
        const float one = 1.0f, zero = 0.0f;
        if (run_cudnn(p.bwd_data, ConvPass::BackwardData, s.last_choice,
                      "cudnnConvolutionBackwardData", [&](int algo) {
                          return cudnnConvolutionBackwardData(
                              s.dnn, &one, p.w, scratch.filter, p.y, dy.data, p.bwd_data.desc,
                              static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), scratch.cudnn,
                              scratch.cudnn_bytes, &zero, p.x, out);
                      })) {
            if (uses_scaled_conv(args)) // scaled, then rounded once into dx (in place if not wide)
                cuda::launch_gemm_epilogue(finishing(args, out, widen ? dy.dtype : dx.dtype,
                                                     args.batch * args.in_h * args.in_w, args.in_c,
                                                     dx.data, dx.dtype),
                                           s.stream);
            else if (widen) // rounded once into dx
                cuda::launch_cast(out, dy.dtype, dx.data, dx.dtype, dx.numel(), s.stream);
            return;
        }
    }
    cuda::ConvIo io{dy.data, dy.dtype, w.data, w.dtype};
    io.a_scale = scale_data(args.a_scale);
    io.b_scale = scale_data(args.b_scale);
    io.out = dx.data;
    io.out_dtype = dx.dtype;
    io.f64 = dy.dtype == DType::Float64 || dx.dtype == DType::Float64;
    cuda::launch_conv2d_direct_backward_data(geom(args), io, s.stream);
    s.last_choice = cuda::conv_choice_text(ConvPass::BackwardData, nullptr);
}

void CudaBackend::conv2d_backward_filter(const Conv2dArgs& args, const Tensor& x, const Tensor& dy,
                                         Tensor& dw, Tensor* dbias, Workspace workspace) {
    Impl& s = *m_impl;
    check_scaled_conv(args, dbias, "conv2d_backward_filter");
    ConvPlan& p = s.conv_plan(args, x.dtype);
    if (dbias) {
        const bool f64 = dy.dtype == DType::Float64 || dbias->dtype == DType::Float64;
        cuda::launch_bias_grad(dy.data, dy.dtype, args.batch * args.out_h * args.out_w, args.out_c,
                               dbias->data, dbias->dtype, f64, s.bias_scratch, s.stream);
    }
    const bool widen = widens_into(x.dtype, dw.dtype);
    if (p.bwd_filter.current() && dy.dtype == x.dtype && (dw.dtype == x.dtype || widen)) {
        const Scratch scratch = carve(p, workspace, args);
        const float one = 1.0f, zero = 0.0f;
        if (run_cudnn(p.bwd_filter, ConvPass::BackwardFilter, s.last_choice,
                      "cudnnConvolutionBackwardFilter", [&](int algo) {
                          return cudnnConvolutionBackwardFilter(
                              s.dnn, &one, p.x, x.data, p.y, dy.data, p.bwd_filter.desc,
                              static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), scratch.cudnn,
                              scratch.cudnn_bytes, &zero, p.w, scratch.filter);
                      })) {
            const std::int64_t taps = args.kernel_h * args.kernel_w * args.in_c;
            const bool scaled = uses_scaled_conv(args);
            if (!widen) {
                cuda::launch_transpose(scratch.filter, args.out_c, taps, dw.data,
                                       dtype_size(dw.dtype), s.stream); // KRSC -> HWIO
                if (scaled)                                             // in place
                    cuda::launch_gemm_epilogue(
                        finishing(args, dw.data, dw.dtype, taps, args.out_c, dw.data, dw.dtype),
                        s.stream);
                return;
            }
            // KRSC in the operands' dtype -> HWIO in a buffer, (scaled and) rounded once into dw.
            PoolBuffer hwio(static_cast<std::size_t>(dw.numel()) * dtype_size(x.dtype), s.stream);
            cuda::launch_transpose(scratch.filter, args.out_c, taps, hwio.data(),
                                   dtype_size(x.dtype), s.stream);
            if (scaled)
                cuda::launch_gemm_epilogue(
                    finishing(args, hwio.data(), x.dtype, taps, args.out_c, dw.data, dw.dtype),
                    s.stream);
            else
                cuda::launch_cast(hwio.data(), x.dtype, dw.data, dw.dtype, dw.numel(), s.stream);
            return;
        }
    }
    cuda::ConvIo io{x.data, x.dtype, dy.data, dy.dtype};
    io.a_scale = scale_data(args.a_scale);
    io.b_scale = scale_data(args.b_scale);
    io.out = dw.data;
    io.out_dtype = dw.dtype;
    io.f64 = x.dtype == DType::Float64 || dw.dtype == DType::Float64;
    cuda::launch_conv2d_direct_backward_filter(geom(args), io, s.stream);
    s.last_choice = cuda::conv_choice_text(ConvPass::BackwardFilter, nullptr);
}

} // namespace mantissa
