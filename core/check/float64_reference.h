// Float64Reference: the CPU engine run in float64, each result rounded once to its tensor's dtype.
// The reference an engine is checked against where no second engine exists (selftest without a
// GPU, tests/ops): every floating input is widened exactly, the op runs in float64, and outputs
// are rounded back. Pure 16-bit optimizer updates instead follow update_rules.h's scalar path
// (every operation rounded), which is their definition.
#pragma once

#include <memory>

#include "core/backend/backend.h"

namespace mantissa {

class Float64Reference final : public Backend {
public:
    Float64Reference();
    ~Float64Reference() override;

    const DeviceInfo& info() const override { return m_info; }

    Buffer allocate(std::size_t bytes) override;
    std::size_t memory_in_use() const override;
    void upload(const void* host, Tensor& dst) override;
    void download(const Tensor& src, void* host) override;
    void synchronize() override {}

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
    void batch_norm_forward(const NormArgs& args) override;
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
    // The quantiser is its own definition (core/numeric/tensor_quant, checked against exact
    // rational arithmetic in tst_block_quant): the CPU engine's, on the same input bits.
    bool supports_fake_quantize() const override { return true; }
    void fake_quantize(const FakeQuantArgs& args) override { m_cpu->fake_quantize(args); }
    // FP8 operands are widened exactly and multiplied by their decode scales in float64.
    bool supports_fp8_gemm() const override { return true; }
    void quantize_fp8(const Fp8QuantArgs& args) override { m_cpu->quantize_fp8(args); }
    void begin_step(Tensor& scalars) override;
    void unscale_and_check_finite(std::span<Tensor* const> grads, Tensor& scalars,
                                  std::span<const std::uint8_t> leave_scaled = {}) override;
    void optimizer_update(const OptimizerConfig& config, Tensor& param, const Tensor& grad,
                          std::span<Tensor* const> slot_tensors, const Tensor& scalars,
                          bool skip_if_found_inf, Tensor* compute_copy = nullptr,
                          bool unscale_grad = false) override;
    void finish_step(const LossScaleConfig& config, Tensor& scalars) override;
    StepScalars read_scalars(const Tensor& scalars) override;
    void write_scalars(const StepScalars& values, Tensor& scalars) override;
    void enqueue_readout(const Tensor& scalars, int slot) override;
    StepReadout read_readout(int slot) override;

private:
    std::unique_ptr<Backend> m_cpu; // the CPU engine, always handed float64 (or integer) tensors
    DeviceInfo m_info;
};

} // namespace mantissa
