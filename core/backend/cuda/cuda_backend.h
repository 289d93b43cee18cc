// CudaBackend: the GPU engine (cuBLASLt GEMMs, cuDNN convolutions, small kernels for the rest).
// This header names no CUDA type (pimpl), so the factory, the GUI and the tests include it freely.
#pragma once

#include <memory>
#include <string>

#include "core/backend/backend.h"

namespace mantissa {

class CudaBackend final : public Backend {
public:
    // Opens CUDA device `device_index` with its own stream and library handles. Throws
    // Error(Device) naming the device and the failing call when the device cannot be used.
    explicit CudaBackend(int device_index = 0);
    ~CudaBackend() override;
    CudaBackend(const CudaBackend&) = delete;
    CudaBackend& operator=(const CudaBackend&) = delete;

    const DeviceInfo& info() const override;

    Buffer allocate(std::size_t bytes) override;
    std::size_t memory_in_use() const override;
    void upload(const void* host, Tensor& dst) override;
    void download(const Tensor& src, void* host) override;
    void synchronize() override;

    std::size_t gemm_workspace_bytes(const GemmArgs& args) const override;
    std::size_t conv2d_workspace_bytes(const Conv2dArgs& args, DType dtype) const override;

    void gather_batch(const Tensor& images_u8, const Tensor& labels_u8,
                      const Tensor& permutation_i32, std::int64_t offset, std::int64_t count,
                      const Tensor* position, Tensor& batch, Tensor& labels_i32) override;

    void fill(Tensor& dst, double value) override;
    void cast(const Tensor& src, Tensor& dst) override;
    void gemm(const GemmArgs& args) override;
    void bias_grad(const Tensor& dy, Tensor& db) override;
    void activation_forward(Activation act, const Tensor& x, Tensor& y) override;
    void activation_backward(Activation act, const Tensor& x, const Tensor& y, const Tensor& dy,
                             Tensor& dx) override;
    void activation_backward_bias_grad(Activation act, const Tensor& x, const Tensor& y,
                                       const Tensor& dy, Tensor& dx, Tensor& db) override;
    void softmax_cross_entropy(const SoftmaxXentArgs& args) override;

    void conv2d_forward(const Conv2dArgs& args, const Tensor& x, const Tensor& w,
                        const Tensor* bias, Activation epilogue, Tensor& y, Tensor* pre_activation,
                        Workspace workspace) override;
    void conv2d_backward_data(const Conv2dArgs& args, const Tensor& dy, const Tensor& w, Tensor& dx,
                              Workspace workspace) override;
    void conv2d_backward_filter(const Conv2dArgs& args, const Tensor& x, const Tensor& dy,
                                Tensor& dw, Tensor* dbias, Workspace workspace) override;
    void maxpool_forward(const Pool2dArgs& args, const Tensor& x, Tensor& y,
                         Tensor& argmax_i32) override;
    void maxpool_backward(const Pool2dArgs& args, const Tensor& dy, const Tensor& argmax_i32,
                          Tensor& dx) override;

    void batch_norm_forward(const NormArgs& args) override; // cuda_ops.cpp, norm.cu
    void batch_norm_backward(const NormArgs& args, const Tensor& dy, Tensor& dx, Tensor& dgamma,
                             Tensor& dbeta) override;
    void layer_norm_forward(const NormArgs& args) override;
    void layer_norm_backward(const NormArgs& args, const Tensor& dy, Tensor& dx, Tensor& dgamma,
                             Tensor& dbeta) override;

    void dropout_forward(double rate, std::uint64_t seed, const Tensor& x, Tensor& y,
                         Tensor& mask_u8) override;
    void dropout_backward(double rate, const Tensor& dy, const Tensor& mask_u8,
                          Tensor& dx) override;

    void exponent_histogram(const Tensor& x, Tensor& counts_i32) override;

    bool supports_fake_quantize() const override { return true; }
    bool supports_hadamard_quantize() const override { return true; } // hadamard.cu
    void fake_quantize(const FakeQuantArgs& args) override;           // cuda_quantize.cpp
    void fake_quantize_pair(const FakeQuantArgs& rowwise,             // cuda_quantize.cpp
                            const FakeQuantArgs& columnwise) override;
    bool supports_fp8_gemm() const override;                              // cuda_gemm_fp8.cpp
    bool native_fp8_gemm() const override { return supports_fp8_gemm(); } // FP8 tensor cores
    void quantize_fp8(const Fp8QuantArgs& args) override;                 // cuda_quantize.cpp
    void activation_backward_bias_grad_fp8(Activation act, const Tensor& x, const Tensor& y,
                                           const Tensor& dy, Tensor& dz, Tensor& db,
                                           const Fp8QuantArgs& codes) override; // ditto

    void begin_step(Tensor& scalars) override;
    void unscale_and_check_finite(std::span<Tensor* const> grads, Tensor& scalars,
                                  std::span<const std::uint8_t> leave_scaled = {}) override;
    void optimizer_update(const OptimizerConfig& config, Tensor& param, const Tensor& grad,
                          std::span<Tensor* const> slot_tensors, const Tensor& scalars,
                          bool skip_if_found_inf, Tensor* compute_copy = nullptr,
                          bool unscale_grad = false) override;
    void optimizer_update_all(const OptimizerConfig& config, std::span<const ParamUpdate> params,
                              const Tensor& scalars, bool skip_if_found_inf) override;
    void finish_step(const LossScaleConfig& config, Tensor& scalars) override;
    StepScalars read_scalars(const Tensor& scalars) override;
    void write_scalars(const StepScalars& values, Tensor& scalars) override;

    int readout_lag() const override;
    void step_started(int slot) override;
    void enqueue_readout(const Tensor& scalars, int slot) override;
    StepReadout read_readout(int slot) override;
    bool begin_time_marks(std::size_t intervals) override;
    void mark_time(std::size_t index) override;
    std::vector<double> marked_intervals_ms() override;
    void set_tf32(bool enabled) override;
    void set_propagate_nan(bool enabled) override;
    std::string last_choice() const override;
    void clear_last_choice() override;
    bool captures_graphs() const override;
    void begin_graph_capture() override;
    void end_graph_capture(const void* owner, std::uint64_t key) override;
    void abort_graph_capture() noexcept override;
    bool replay_graph(const void* owner, std::uint64_t key) override;
    void drop_graphs(const void* owner) noexcept override;

    // The engine's cudaStream_t and device index, as an opaque pointer and an int (this header
    // names no CUDA type): for the NCCL communicator, which enqueues its collectives there.
    void* native_stream() const;
    int device_index() const;

    struct Impl; // CUDA state: stream, handles, caches, pinned ring
                 // (core/backend/cuda/cuda_state.h)

private:
    std::unique_ptr<Impl> m_impl;
};

} // namespace mantissa
