// CudaBackend::Impl: the CUDA state behind the pimpl (stream, cuBLASLt and cuDNN handles, the
// plan caches, the pinned readout ring). Private to core/backend/cuda; it names CUDA types.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <unordered_map>

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "core/backend/cuda/conv_key.h"
#include "core/backend/cuda/cuda_backend.h"
#include "core/backend/cuda/gemm_key.h"

namespace mantissa {

namespace cuda {

// One cached cuBLASLt plan: descriptors, layouts and the heuristic's algorithm for a GemmKey.
struct GemmPlan {
    GemmFusion fusion;
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr; // cuBLASLt's A (our B), B, D
    cublasLtMatmulAlgo_t algo{};
    std::size_t lt_workspace = 0; // what the chosen algorithm needs
    GemmPlan() = default;
    GemmPlan(const GemmPlan&) = delete;
    GemmPlan& operator=(const GemmPlan&) = delete;
    ~GemmPlan();
};

// One cached cuDNN plan for a convolution shape and dtype (or the direct kernels' marker).
struct ConvPlan {
    bool use_cudnn = false;
    cudnnTensorDescriptor_t x = nullptr, y = nullptr;
    cudnnFilterDescriptor_t w = nullptr;
    cudnnConvolutionDescriptor_t fwd = nullptr, bwd_data = nullptr, bwd_filter = nullptr;
    cudnnConvolutionFwdAlgo_t fwd_algo{};
    cudnnConvolutionBwdDataAlgo_t bwd_data_algo{};
    cudnnConvolutionBwdFilterAlgo_t bwd_filter_algo{};
    std::size_t cudnn_workspace = 0; // the largest of the three algorithms' needs
    std::size_t filter_bytes = 0;    // one KRSC copy of the filter (256-byte aligned)
    ConvPlan() = default;
    ConvPlan(const ConvPlan&) = delete;
    ConvPlan& operator=(const ConvPlan&) = delete;
    ~ConvPlan();
};

} // namespace cuda

struct CudaBackend::Impl {
    int device = 0;
    DeviceInfo info;
    cudaStream_t stream = nullptr;
    cublasLtHandle_t lt = nullptr;
    cudnnHandle_t dnn = nullptr;
    bool tf32 = false;
    std::atomic<std::size_t> in_use{0};

    // The readout ring: pinned host slots, an event after each copy and one at each step start.
    StepScalars* ring = nullptr; // kReadoutSlots entries, cudaMallocHost
    cudaEvent_t started[kReadoutSlots] = {};
    cudaEvent_t landed[kReadoutSlots] = {};
    bool has_start[kReadoutSlots] = {};

    std::unordered_map<cuda::GemmKey, std::unique_ptr<cuda::GemmPlan>, cuda::GemmKeyHash> gemms;
    std::unordered_map<cuda::ConvKey, std::unique_ptr<cuda::ConvPlan>, cuda::ConvKeyHash> convs;

    explicit Impl(int device_index);
    ~Impl();
    void open();             // creates the stream, handles, ring and events (throws)
    void release() noexcept; // frees whatever open() created, also after a partial open()

    // The cached plan for a call, created (descriptors + heuristic) on first use.
    cuda::GemmPlan& gemm_plan(const GemmArgs& args);
    cuda::ConvPlan& conv_plan(const Conv2dArgs& args, DType dtype);
};

} // namespace mantissa
