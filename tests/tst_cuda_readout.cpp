// The Trainer's late readout, the path the CUDA engine takes (metrics read two steps after the
// step ran), checked on the CPU: a backend that defers every readout must give the same records.

#include <cmath>
#include <cstdint>
#include <deque>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/data/synthetic_mnist.h"
#include "core/error.h"
#include "core/train/trainer.h"
#include "tests/test_support.h"
#include "tests/unit/files.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;
using namespace mantissa::test;

namespace {

// The CPU engine behind a readout ring that hands a step's scalars out only `lag` steps later,
// as CudaBackend does; reading a slot whose copy was not enqueued is a failure.
class LaggedBackend final : public Backend {
public:
    explicit LaggedBackend(int lag) : m_lag(lag) {}

    int readout_lag() const override { return m_lag; }
    void step_started(int slot) override { ++m_started[slot]; }
    void enqueue_readout(const Tensor& scalars, int slot) override {
        m_slots[slot] = m_cpu.read_scalars(scalars);
        m_filled[slot] = true;
    }
    StepReadout read_readout(int slot) override {
        if (!m_filled[slot]) throw Error(ErrorKind::Internal, "slot read before it was filled");
        m_filled[slot] = false;
        StepReadout out;
        out.scalars = m_slots[slot];
        out.device_ms = 1.5; // what the CUDA events would give; the trainer must use it
        return out;
    }
    int started(int slot) const { return m_started[slot]; }

    // Everything else: the CPU engine.
    const DeviceInfo& info() const override { return m_cpu.info(); }
    Buffer allocate(std::size_t bytes) override { return m_cpu.allocate(bytes); }
    std::size_t memory_in_use() const override { return m_cpu.memory_in_use(); }
    void upload(const void* host, Tensor& dst) override { m_cpu.upload(host, dst); }
    void download(const Tensor& src, void* host) override { m_cpu.download(src, host); }
    void synchronize() override {}
    std::size_t gemm_workspace_bytes(const GemmArgs& a) const override {
        return m_cpu.gemm_workspace_bytes(a);
    }
    std::size_t conv2d_workspace_bytes(const Conv2dArgs& a, DType d) const override {
        return m_cpu.conv2d_workspace_bytes(a, d);
    }
    void gather_batch(const Tensor& i, const Tensor& l, const Tensor& p, std::int64_t o,
                      std::int64_t c, const Tensor* at, Tensor& b, Tensor& bl) override {
        m_cpu.gather_batch(i, l, p, o, c, at, b, bl);
    }
    void fill(Tensor& d, double v) override { m_cpu.fill(d, v); }
    void cast(const Tensor& s, Tensor& d) override { m_cpu.cast(s, d); }
    void gemm(const GemmArgs& a) override { m_cpu.gemm(a); }
    void bias_grad(const Tensor& dy, Tensor& db) override { m_cpu.bias_grad(dy, db); }
    void activation_forward(Activation a, const Tensor& x, Tensor& y) override {
        m_cpu.activation_forward(a, x, y);
    }
    void activation_backward(Activation a, const Tensor& x, const Tensor& y, const Tensor& dy,
                             Tensor& dx) override {
        m_cpu.activation_backward(a, x, y, dy, dx);
    }
    void softmax_cross_entropy(const SoftmaxXentArgs& a) override {
        m_cpu.softmax_cross_entropy(a);
    }
    void conv2d_forward(const Conv2dArgs& a, const Tensor& x, const Tensor& w, const Tensor* b,
                        Activation e, Tensor& y, Tensor* pre, Workspace ws) override {
        m_cpu.conv2d_forward(a, x, w, b, e, y, pre, ws);
    }
    void conv2d_backward_data(const Conv2dArgs& a, const Tensor& dy, const Tensor& w, Tensor& dx,
                              Workspace ws) override {
        m_cpu.conv2d_backward_data(a, dy, w, dx, ws);
    }
    void conv2d_backward_filter(const Conv2dArgs& a, const Tensor& x, const Tensor& dy, Tensor& dw,
                                Tensor* db, Workspace ws) override {
        m_cpu.conv2d_backward_filter(a, x, dy, dw, db, ws);
    }
    void maxpool_forward(const Pool2dArgs& a, const Tensor& x, Tensor& y, Tensor& am) override {
        m_cpu.maxpool_forward(a, x, y, am);
    }
    void maxpool_backward(const Pool2dArgs& a, const Tensor& dy, const Tensor& am,
                          Tensor& dx) override {
        m_cpu.maxpool_backward(a, dy, am, dx);
    }
    void dropout_forward(double r, std::uint64_t s, const Tensor& x, Tensor& y,
                         Tensor& m) override {
        m_cpu.dropout_forward(r, s, x, y, m);
    }
    void dropout_backward(double r, const Tensor& dy, const Tensor& m, Tensor& dx) override {
        m_cpu.dropout_backward(r, dy, m, dx);
    }
    void batch_norm_forward(const NormArgs& a) override { m_cpu.batch_norm_forward(a); }
    void batch_norm_backward(const NormArgs& a, const Tensor& dy, Tensor& dx, Tensor& dg,
                             Tensor& db) override {
        m_cpu.batch_norm_backward(a, dy, dx, dg, db);
    }
    void layer_norm_forward(const NormArgs& a) override { m_cpu.layer_norm_forward(a); }
    void layer_norm_backward(const NormArgs& a, const Tensor& dy, Tensor& dx, Tensor& dg,
                             Tensor& db) override {
        m_cpu.layer_norm_backward(a, dy, dx, dg, db);
    }
    void exponent_histogram(const Tensor& x, Tensor& c) override { m_cpu.exponent_histogram(x, c); }
    void begin_step(Tensor& s) override { m_cpu.begin_step(s); }
    void unscale_and_check_finite(std::span<Tensor* const> g, Tensor& s,
                                  std::span<const std::uint8_t> leave_scaled = {}) override {
        m_cpu.unscale_and_check_finite(g, s, leave_scaled);
    }
    void optimizer_update(const OptimizerConfig& c, Tensor& p, const Tensor& g,
                          std::span<Tensor* const> slot_tensors, const Tensor& s, bool skip,
                          Tensor* copy = nullptr, bool unscale_grad = false) override {
        m_cpu.optimizer_update(c, p, g, slot_tensors, s, skip, copy, unscale_grad);
    }
    void finish_step(const LossScaleConfig& c, Tensor& s) override { m_cpu.finish_step(c, s); }
    StepScalars read_scalars(const Tensor& s) override { return m_cpu.read_scalars(s); }
    void write_scalars(const StepScalars& v, Tensor& s) override { m_cpu.write_scalars(v, s); }

private:
    CpuBackend m_cpu;
    int m_lag;
    StepScalars m_slots[kReadoutSlots];
    bool m_filled[kReadoutSlots] = {};
    int m_started[kReadoutSlots] = {};
};

Experiment experiment(const char* policy) {
    Experiment e;
    e.name = "readout";
    e.model = mlp_small();
    e.policy = policy;
    e.optimizer = optimizer_defaults(OptimizerType::Adam);
    e.batch_size = 100; // 7 steps per epoch over 650 images, the last one partial
    e.epochs = 2;
    e.device = "cpu";
    return e;
}

const Mnist& data() {
    static const Mnist d = synthetic_mnist(650, 200);
    return d;
}

struct Run {
    std::vector<StepRecord> steps;
    std::vector<EpochRecord> epochs;
    RunSummary summary;
};

Run run(Backend& backend, const Experiment& e) {
    Trainer trainer(e, data(), backend);
    TrainControl control;
    Run out;
    TrainerCallbacks callbacks;
    callbacks.on_step = [&](const StepRecord& r) { out.steps.push_back(r); };
    callbacks.on_epoch = [&](const EpochRecord& r) { out.epochs.push_back(r); };
    out.summary = trainer.run(control, callbacks);
    return out;
}

} // namespace

class TestCudaReadout {
public:
    void lagged_readout_gives_the_same_records_data() {
        add_column<std::string>("policy");
        new_row("float32") << "float32";
        new_row("mixed_float16 (dynamic loss scaling)") << "mixed_float16";
    }
    void lagged_readout_gives_the_same_records() {
        FETCH(std::string, policy);
        const Experiment e = experiment(policy.c_str());
        CpuBackend cpu;
        LaggedBackend lagged(2);
        const Run a = run(cpu, e);
        const Run b = run(lagged, e);
        CHECK_EQ(b.steps.size(), a.steps.size());
        CHECK_EQ(a.steps.size(), std::size_t(14));
        for (std::size_t i = 0; i < a.steps.size(); ++i) {
            CHECK_EQ(b.steps[i].step, a.steps[i].step);
            CHECK_EQ(b.steps[i].epoch, a.steps[i].epoch);
            CHECK_EQ(b.steps[i].loss, a.steps[i].loss); // bit-identical: the same engine
            CHECK_EQ(b.steps[i].accuracy, a.steps[i].accuracy);
            CHECK_EQ(b.steps[i].loss_scale, a.steps[i].loss_scale);
            CHECK_EQ(b.steps[i].skipped, a.steps[i].skipped);
            CHECK_EQ(b.steps[i].good_steps, a.steps[i].good_steps);
            CHECK_EQ(b.steps[i].step_ms, 1.5); // the device's time, not the host's
        }
        CHECK_EQ(b.epochs.size(), a.epochs.size());
        for (std::size_t i = 0; i < a.epochs.size(); ++i) {
            CHECK_EQ(b.epochs[i].loss, a.epochs[i].loss);
            CHECK_EQ(b.epochs[i].val_loss, a.epochs[i].val_loss);
            CHECK_EQ(b.epochs[i].skipped_steps, a.epochs[i].skipped_steps);
            CHECK_EQ(b.epochs[i].loss_scale, a.epochs[i].loss_scale);
        }
        CHECK_EQ(b.summary.val_accuracy, a.summary.val_accuracy);
        for (int slot = 0; slot < kReadoutSlots; ++slot) CHECK(lagged.started(slot) > 0);
    }

    // A diverging run stops on a lagged engine too, at most `lag` steps after the CPU engine.
    void divergence_still_stops_the_run() {
        Experiment e = experiment("float32");
        e.optimizer = optimizer_defaults(OptimizerType::SGD);
        e.optimizer.learning_rate = 1e6;
        e.epochs = 5;
        CpuBackend cpu;
        LaggedBackend lagged(2);
        const Run a = run(cpu, e);
        const Run b = run(lagged, e);
        CHECK_EQ(a.summary.status, RunStatus::Diverged);
        CHECK_EQ(b.summary.status, RunStatus::Diverged);
        CHECK_EQ(b.summary.message, a.summary.message);
        CHECK(b.steps.size() >= a.steps.size() && b.steps.size() <= a.steps.size() + 2);
        for (std::size_t i = 0; i < a.steps.size(); ++i) CHECK_EQ(b.steps[i].loss, a.steps[i].loss);
    }
};

MANTISSA_TEST_MAIN(TestCudaReadout, lagged_readout_gives_the_same_records,
                   divergence_still_stops_the_run)
