// Convolution on cuDNN (legacy v9 API, NHWC, algorithms chosen once per shape by cuDNN's
// heuristics), with Keras's HWIO filters transposed to cuDNN's KRSC in the workspace; float64
// and paddings cuDNN cannot express run the direct kernels (conv2d_direct.cu) instead.
#include <algorithm>
#include <string>

#include "core/backend/cuda/bias_grad.cuh"
#include "core/backend/cuda/conv2d_direct.cuh"
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/cuda_state.h"
#include "core/backend/cuda/filter_layout.cuh"
#include "core/backend/cuda/gemm_epilogue.cuh"
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

// Math modes: strict float32 must not use TF32 tensor cores (FMA only); 16-bit and TF32 may.
bool math_allowed(cudnnMathType_t math, bool strict_fp32) {
    return !strict_fp32 || math == CUDNN_FMA_MATH || math == CUDNN_DEFAULT_MATH;
}

cudnnConvolutionDescriptor_t make_conv_desc(const Conv2dArgs& g, DType dtype, bool strict_fp32) {
    cudnnConvolutionDescriptor_t desc = nullptr;
    MANTISSA_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&desc));
    // Keras convolutions are cross-correlations; 16-bit data accumulates in float32.
    MANTISSA_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
        desc, static_cast<int>(g.pad_top), static_cast<int>(g.pad_left),
        static_cast<int>(g.stride_h), static_cast<int>(g.stride_w), 1, 1, CUDNN_CROSS_CORRELATION,
        CUDNN_DATA_FLOAT));
    (void)dtype;
    MANTISSA_CUDNN_CHECK(
        cudnnSetConvolutionMathType(desc, strict_fp32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH));
    return desc;
}

// Fills the plan's cuDNN part; false when cuDNN offers no usable algorithm (direct kernels then).
bool build_cudnn(cudnnHandle_t dnn, const Conv2dArgs& g, DType dtype, bool tf32, ConvPlan& p) {
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
        return false;
    p.fwd = make_conv_desc(g, dtype, strict);
    p.bwd_data = make_conv_desc(g, dtype, strict);
    p.bwd_filter = make_conv_desc(g, dtype, strict);

    constexpr int kAsk = 8;
    int found = 0;
    bool ok_fwd = false, ok_data = false, ok_filter = false;
    cudnnConvolutionFwdAlgoPerf_t fwd[kAsk];
    if (cudnnGetConvolutionForwardAlgorithm_v7(dnn, p.x, p.w, p.fwd, p.y, kAsk, &found, fwd) ==
        CUDNN_STATUS_SUCCESS)
        for (int i = 0; i < found && !ok_fwd; ++i)
            if (fwd[i].status == CUDNN_STATUS_SUCCESS && fwd[i].memory <= kCudnnWorkspaceLimit &&
                math_allowed(fwd[i].mathType, strict)) {
                ok_fwd = true;
                p.fwd_algo = fwd[i].algo;
                p.cudnn_workspace = std::max(p.cudnn_workspace, fwd[i].memory);
                MANTISSA_CUDNN_CHECK(cudnnSetConvolutionMathType(p.fwd, fwd[i].mathType));
            }
    // Backward passes: deterministic algorithms only, so a seed gives the same run twice.
    cudnnConvolutionBwdDataAlgoPerf_t data[kAsk];
    if (cudnnGetConvolutionBackwardDataAlgorithm_v7(dnn, p.w, p.y, p.bwd_data, p.x, kAsk, &found,
                                                    data) == CUDNN_STATUS_SUCCESS)
        for (int i = 0; i < found && !ok_data; ++i)
            if (data[i].status == CUDNN_STATUS_SUCCESS &&
                data[i].determinism == CUDNN_DETERMINISTIC &&
                data[i].memory <= kCudnnWorkspaceLimit && math_allowed(data[i].mathType, strict)) {
                ok_data = true;
                p.bwd_data_algo = data[i].algo;
                p.cudnn_workspace = std::max(p.cudnn_workspace, data[i].memory);
                MANTISSA_CUDNN_CHECK(cudnnSetConvolutionMathType(p.bwd_data, data[i].mathType));
            }
    cudnnConvolutionBwdFilterAlgoPerf_t filter[kAsk];
    if (cudnnGetConvolutionBackwardFilterAlgorithm_v7(dnn, p.x, p.y, p.bwd_filter, p.w, kAsk,
                                                      &found, filter) == CUDNN_STATUS_SUCCESS)
        for (int i = 0; i < found && !ok_filter; ++i)
            if (filter[i].status == CUDNN_STATUS_SUCCESS &&
                filter[i].determinism == CUDNN_DETERMINISTIC &&
                filter[i].memory <= kCudnnWorkspaceLimit &&
                math_allowed(filter[i].mathType, strict)) {
                ok_filter = true;
                p.bwd_filter_algo = filter[i].algo;
                p.cudnn_workspace = std::max(p.cudnn_workspace, filter[i].memory);
                MANTISSA_CUDNN_CHECK(cudnnSetConvolutionMathType(p.bwd_filter, filter[i].mathType));
            }
    p.cudnn_workspace = align256(p.cudnn_workspace);
    p.filter_bytes = align256(static_cast<std::size_t>(g.kernel_h * g.kernel_w * g.in_c * g.out_c) *
                              dtype_size(dtype));
    return ok_fwd && ok_data && ok_filter;
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

struct Scratch { // the workspace, carved: [KRSC filter | cuDNN scratch]
    void* filter = nullptr;
    void* cudnn = nullptr;
    std::size_t cudnn_bytes = 0;
};

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
    if (fwd) cudnnDestroyConvolutionDescriptor(fwd);
    if (bwd_data) cudnnDestroyConvolutionDescriptor(bwd_data);
    if (bwd_filter) cudnnDestroyConvolutionDescriptor(bwd_filter);
}

} // namespace cuda

ConvPlan& CudaBackend::Impl::conv_plan(const Conv2dArgs& args, DType dtype) {
    check_dtype(dtype, args);
    const cuda::ConvKey key = cuda::conv_key(args, dtype, tf32);
    if (auto it = convs.find(key); it != convs.end()) return *it->second;
    auto plan = std::make_unique<ConvPlan>();
    if (dtype != DType::Float64 && cuda::cudnn_padding_fits(args))
        plan->use_cudnn = build_cudnn(dnn, args, dtype, key.tf32, *plan);
    if (!plan->use_cudnn) plan->cudnn_workspace = plan->filter_bytes = 0;
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
    const ConvPlan& p = s.conv_plan(args, x.dtype);
    const bool f64 = x.dtype == DType::Float64 || y.dtype == DType::Float64;
    if (!p.use_cudnn || w.dtype != x.dtype || y.dtype != x.dtype) {
        cuda::ConvIo io{x.data, x.dtype, w.data, w.dtype};
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
        return;
    }
    const Scratch scratch = carve(p, workspace, args);
    cuda::launch_transpose(w.data, args.kernel_h * args.kernel_w * args.in_c, args.out_c,
                           scratch.filter, dtype_size(w.dtype), s.stream); // HWIO -> KRSC
    const float one = 1.0f, zero = 0.0f;
    MANTISSA_CUDNN_CHECK(cudnnConvolutionForward(s.dnn, &one, p.x, x.data, p.w, scratch.filter,
                                                 p.fwd, p.fwd_algo, scratch.cudnn,
                                                 scratch.cudnn_bytes, &zero, p.y, y.data));
    if (!bias && !pre_activation && epilogue == Activation::Linear) return;
    // Bias and activation over (batch*h*w, out_c) in place (y is already rounded once by cuDNN).
    cuda::EpilogueArgs e;
    e.acc = y.data;
    e.acc_dtype = y.dtype;
    e.rows = args.batch * args.out_h * args.out_w;
    e.cols = args.out_c;
    if (bias) {
        e.bias = bias->data;
        e.bias_dtype = bias->dtype;
    }
    e.act = epilogue;
    if (pre_activation) {
        e.pre = pre_activation->data;
        e.pre_dtype = pre_activation->dtype;
    }
    e.out = y.data;
    e.out_dtype = y.dtype;
    e.f64 = f64;
    cuda::launch_gemm_epilogue(e, s.stream);
}

void CudaBackend::conv2d_backward_data(const Conv2dArgs& args, const Tensor& dy, const Tensor& w,
                                       Tensor& dx, Workspace workspace) {
    Impl& s = *m_impl;
    const ConvPlan& p = s.conv_plan(args, dy.dtype);
    if (!p.use_cudnn || w.dtype != dy.dtype || dx.dtype != dy.dtype) {
        cuda::ConvIo io{dy.data, dy.dtype, w.data, w.dtype};
        io.out = dx.data;
        io.out_dtype = dx.dtype;
        io.f64 = dy.dtype == DType::Float64 || dx.dtype == DType::Float64;
        cuda::launch_conv2d_direct_backward_data(geom(args), io, s.stream);
        return;
    }
    const Scratch scratch = carve(p, workspace, args);
    cuda::launch_transpose(w.data, args.kernel_h * args.kernel_w * args.in_c, args.out_c,
                           scratch.filter, dtype_size(w.dtype), s.stream);
    const float one = 1.0f, zero = 0.0f;
    MANTISSA_CUDNN_CHECK(cudnnConvolutionBackwardData(
        s.dnn, &one, p.w, scratch.filter, p.y, dy.data, p.bwd_data, p.bwd_data_algo, scratch.cudnn,
        scratch.cudnn_bytes, &zero, p.x, dx.data));
}

void CudaBackend::conv2d_backward_filter(const Conv2dArgs& args, const Tensor& x, const Tensor& dy,
                                         Tensor& dw, Tensor* dbias, Workspace workspace) {
    Impl& s = *m_impl;
    const ConvPlan& p = s.conv_plan(args, x.dtype);
    if (dbias) {
        const bool f64 = dy.dtype == DType::Float64 || dbias->dtype == DType::Float64;
        cuda::launch_bias_grad(dy.data, dy.dtype, args.batch * args.out_h * args.out_w, args.out_c,
                               dbias->data, dbias->dtype, f64, s.stream);
    }
    if (!p.use_cudnn || dy.dtype != x.dtype || dw.dtype != x.dtype) {
        cuda::ConvIo io{x.data, x.dtype, dy.data, dy.dtype};
        io.out = dw.data;
        io.out_dtype = dw.dtype;
        io.f64 = x.dtype == DType::Float64 || dw.dtype == DType::Float64;
        cuda::launch_conv2d_direct_backward_filter(geom(args), io, s.stream);
        return;
    }
    const Scratch scratch = carve(p, workspace, args);
    const float one = 1.0f, zero = 0.0f;
    MANTISSA_CUDNN_CHECK(cudnnConvolutionBackwardFilter(
        s.dnn, &one, p.x, x.data, p.y, dy.data, p.bwd_filter, p.bwd_filter_algo, scratch.cudnn,
        scratch.cudnn_bytes, &zero, p.w, scratch.filter));
    cuda::launch_transpose(scratch.filter, args.out_c, args.kernel_h * args.kernel_w * args.in_c,
                           dw.data, dtype_size(dw.dtype), s.stream); // KRSC -> HWIO
}

} // namespace mantissa
