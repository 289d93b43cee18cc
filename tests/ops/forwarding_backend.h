// ForwardingBackend: a Backend that hands every op to another one. Tests derive from it to change
// one op (a fake engine whose float32 math differs by an ulp, say) and keep the rest real.
#pragma once

#include "core/backend/backend.h"

namespace mantissa::test {

class ForwardingBackend : public Backend {
public:
    explicit ForwardingBackend(Backend& inner) : m_inner(inner) {}

    const DeviceInfo& info() const override { return m_inner.info(); }
    Buffer allocate(std::size_t bytes) override { return m_inner.allocate(bytes); }
    std::size_t memory_in_use() const override { return m_inner.memory_in_use(); }
    void upload(const void* host, Tensor& dst) override { m_inner.upload(host, dst); }
    void download(const Tensor& src, void* host) override { m_inner.download(src, host); }
    void synchronize() override { m_inner.synchronize(); }
    std::size_t gemm_workspace_bytes(const GemmArgs& args) const override {
        return m_inner.gemm_workspace_bytes(args);
    }
    std::size_t conv2d_workspace_bytes(const Conv2dArgs& args, DType dtype) const override {
        return m_inner.conv2d_workspace_bytes(args, dtype);
    }
    void gather_batch(const Tensor& images_u8, const Tensor& labels_u8,
                      const Tensor& permutation_i32, std::int64_t offset, std::int64_t count,
                      const Tensor* position, Tensor& batch, Tensor& labels_i32) override {
        m_inner.gather_batch(images_u8, labels_u8, permutation_i32, offset, count, position, batch,
                             labels_i32);
    }
    void fill(Tensor& dst, double value) override { m_inner.fill(dst, value); }
    void cast(const Tensor& src, Tensor& dst) override { m_inner.cast(src, dst); }
    void gemm(const GemmArgs& args) override { m_inner.gemm(args); }
    void bias_grad(const Tensor& dy, Tensor& db) override { m_inner.bias_grad(dy, db); }
    void activation_forward(Activation act, const Tensor& x, Tensor& y) override {
        m_inner.activation_forward(act, x, y);
    }
    void activation_backward(Activation act, const Tensor& x, const Tensor& y, const Tensor& dy,
                             Tensor& dx) override {
        m_inner.activation_backward(act, x, y, dy, dx);
    }
    void softmax_cross_entropy(const SoftmaxXentArgs& args) override {
        m_inner.softmax_cross_entropy(args);
    }
    void conv2d_forward(const Conv2dArgs& args, const Tensor& x, const Tensor& w,
                        const Tensor* bias, Activation epilogue, Tensor& y, Tensor* pre_activation,
                        Workspace workspace) override {
        m_inner.conv2d_forward(args, x, w, bias, epilogue, y, pre_activation, workspace);
    }
    void conv2d_backward_data(const Conv2dArgs& args, const Tensor& dy, const Tensor& w, Tensor& dx,
                              Workspace workspace) override {
        m_inner.conv2d_backward_data(args, dy, w, dx, workspace);
    }
    void conv2d_backward_filter(const Conv2dArgs& args, const Tensor& x, const Tensor& dy,
                                Tensor& dw, Tensor* dbias, Workspace workspace) override {
        m_inner.conv2d_backward_filter(args, x, dy, dw, dbias, workspace);
    }
    void maxpool_forward(const Pool2dArgs& args, const Tensor& x, Tensor& y,
                         Tensor& argmax_i32) override {
        m_inner.maxpool_forward(args, x, y, argmax_i32);
    }
    void maxpool_backward(const Pool2dArgs& args, const Tensor& dy, const Tensor& argmax_i32,
                          Tensor& dx) override {
        m_inner.maxpool_backward(args, dy, argmax_i32, dx);
    }
    void batch_norm_forward(const NormArgs& args) override { m_inner.batch_norm_forward(args); }
    void batch_norm_backward(const NormArgs& args, const Tensor& dy, Tensor& dx, Tensor& dgamma,
                             Tensor& dbeta) override {
        m_inner.batch_norm_backward(args, dy, dx, dgamma, dbeta);
    }
    void layer_norm_forward(const NormArgs& args) override { m_inner.layer_norm_forward(args); }
    void layer_norm_backward(const NormArgs& args, const Tensor& dy, Tensor& dx, Tensor& dgamma,
                             Tensor& dbeta) override {
        m_inner.layer_norm_backward(args, dy, dx, dgamma, dbeta);
    }
    void dropout_forward(double rate, std::uint64_t seed, const Tensor& x, Tensor& y,
                         Tensor& mask_u8) override {
        m_inner.dropout_forward(rate, seed, x, y, mask_u8);
    }
    void dropout_backward(double rate, const Tensor& dy, const Tensor& mask_u8,
                          Tensor& dx) override {
        m_inner.dropout_backward(rate, dy, mask_u8, dx);
    }
    void exponent_histogram(const Tensor& x, Tensor& counts_i32) override {
        m_inner.exponent_histogram(x, counts_i32);
    }
    void begin_step(Tensor& scalars) override { m_inner.begin_step(scalars); }
    void unscale_and_check_finite(std::span<Tensor* const> grads, Tensor& scalars,
                                  std::span<const std::uint8_t> leave_scaled = {}) override {
        m_inner.unscale_and_check_finite(grads, scalars, leave_scaled);
    }
    void optimizer_update(const OptimizerConfig& config, Tensor& param, const Tensor& grad,
                          std::span<Tensor* const> slot_tensors, const Tensor& scalars,
                          bool skip_if_found_inf, Tensor* compute_copy = nullptr,
                          bool unscale_grad = false) override {
        m_inner.optimizer_update(config, param, grad, slot_tensors, scalars, skip_if_found_inf,
                                 compute_copy, unscale_grad);
    }
    void finish_step(const LossScaleConfig& config, Tensor& scalars) override {
        m_inner.finish_step(config, scalars);
    }
    StepScalars read_scalars(const Tensor& scalars) override {
        return m_inner.read_scalars(scalars);
    }
    void write_scalars(const StepScalars& values, Tensor& scalars) override {
        m_inner.write_scalars(values, scalars);
    }
    int readout_lag() const override { return m_inner.readout_lag(); }
    void step_started(int slot) override { m_inner.step_started(slot); }
    bool begin_time_marks(std::size_t intervals) override {
        return m_inner.begin_time_marks(intervals);
    }
    void mark_time(std::size_t index) override { m_inner.mark_time(index); }
    std::vector<double> marked_intervals_ms() override { return m_inner.marked_intervals_ms(); }
    void enqueue_readout(const Tensor& scalars, int slot) override {
        m_inner.enqueue_readout(scalars, slot);
    }
    StepReadout read_readout(int slot) override { return m_inner.read_readout(slot); }
    void set_tf32(bool enabled) override { m_inner.set_tf32(enabled); }
    std::string last_choice() const override { return m_inner.last_choice(); }

protected:
    Backend& m_inner;
};

} // namespace mantissa::test
