// PlanPreviewBackend: lets compile() build a Plan for display without memory: the arena is
// reserved address space that is never touched, workspace sizes are the CPU engine's, ops refuse.
#pragma once

#include "core/backend/cpu/cpu_backend.h"

namespace mantissa::ui {

// The Plan view recompiles on every edit; with a real backend a Keras-sized model (4096-wide
// layers, batch 8192) would allocate and zero gigabytes each time.
class PlanPreviewBackend final : public Backend {
public:
    PlanPreviewBackend();

    const DeviceInfo& info() const override { return m_info; }
    // Reserved, inaccessible address space (mmap PROT_NONE): tensors get real, distinct
    // addresses but no memory is committed. Throws Error(OutOfMemory) if it cannot be reserved.
    Buffer allocate(std::size_t bytes) override;
    std::size_t memory_in_use() const override { return 0; }
    std::size_t gemm_workspace_bytes(const GemmArgs& args) const override;
    std::size_t conv2d_workspace_bytes(const Conv2dArgs& args, DType dtype) const override;

    // Everything below throws Error(Internal): a preview plan is never run.
    void upload(const void*, Tensor&) override { refuse(); }
    void download(const Tensor&, void*) override { refuse(); }
    void synchronize() override {}
    void gather_batch(const Tensor&, const Tensor&, const Tensor&, std::int64_t, std::int64_t,
                      Tensor&, Tensor&) override {
        refuse();
    }
    void fill(Tensor&, double) override { refuse(); }
    void cast(const Tensor&, Tensor&) override { refuse(); }
    void gemm(const GemmArgs&) override { refuse(); }
    void bias_grad(const Tensor&, Tensor&) override { refuse(); }
    void activation_forward(Activation, const Tensor&, Tensor&) override { refuse(); }
    void activation_backward(Activation, const Tensor&, const Tensor&, const Tensor&,
                             Tensor&) override {
        refuse();
    }
    void softmax_cross_entropy(const SoftmaxXentArgs&) override { refuse(); }
    void conv2d_forward(const Conv2dArgs&, const Tensor&, const Tensor&, const Tensor*, Activation,
                        Tensor&, Tensor*, Workspace) override {
        refuse();
    }
    void conv2d_backward_data(const Conv2dArgs&, const Tensor&, const Tensor&, Tensor&,
                              Workspace) override {
        refuse();
    }
    void conv2d_backward_filter(const Conv2dArgs&, const Tensor&, const Tensor&, Tensor&, Tensor*,
                                Workspace) override {
        refuse();
    }
    void maxpool_forward(const Pool2dArgs&, const Tensor&, Tensor&, Tensor&) override { refuse(); }
    void maxpool_backward(const Pool2dArgs&, const Tensor&, const Tensor&, Tensor&) override {
        refuse();
    }
    void dropout_forward(double, std::uint64_t, const Tensor&, Tensor&, Tensor&) override {
        refuse();
    }
    void dropout_backward(double, const Tensor&, const Tensor&, Tensor&) override { refuse(); }
    void exponent_histogram(const Tensor&, Tensor&) override { refuse(); }
    // Plans of the quantised policies preview like the CPU engine's (nothing runs here).
    bool supports_fake_quantize() const override { return true; }
    void fake_quantize(const FakeQuantArgs&) override { refuse(); }
    void begin_step(Tensor&) override { refuse(); }
    void unscale_and_check_finite(std::span<Tensor* const>, Tensor&) override { refuse(); }
    void optimizer_update(const OptimizerConfig&, Tensor&, const Tensor&, std::span<Tensor* const>,
                          const Tensor&, bool) override {
        refuse();
    }
    void finish_step(const LossScaleConfig&, Tensor&) override { refuse(); }
    StepScalars read_scalars(const Tensor&) override {
        refuse();
        return {};
    }
    void write_scalars(const StepScalars&, Tensor&) override { refuse(); }
    void enqueue_readout(const Tensor&, int) override { refuse(); }
    StepReadout read_readout(int) override { refuse(); }

private:
    [[noreturn]] static void refuse();

    DeviceInfo m_info;
    CpuBackend m_cpu; // answers the workspace questions as the CPU engine would
};

} // namespace mantissa::ui
