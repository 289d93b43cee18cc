// The experiment's `graph` flag (CUDA Graph capture of a step, issue 17 §4): an experiment file
// that sets it loads; on the CPU engine a run says once that it has no effect and trains as
// without it; graph_mode() decides per engine and model; and with an engine that captures (a
// fake that records the CPU engine's ops while "capturing" and re-runs them on replay, as a CUDA
// Graph re-runs its kernels) the trainer captures each batch size once, replays it, and gets
// exactly the eager run's numbers.

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/data/synthetic_mnist.h"
#include "core/error.h"
#include "core/train/experiment.h"
#include "core/train/graph_mode.h"
#include "core/train/trainer.h"
#include "tests/test_support.h"
#include "tests/unit/files.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;
using namespace mantissa::test;

namespace {

// The CPU engine behind a fake CUDA Graph: between begin and end of a capture every op is
// recorded (its tensors copied by value, as a graph keeps kernel arguments) instead of run, and
// replay_graph() runs the recording. Ops that must not occur inside a step throw while capturing.
class RecordingBackend final : public Backend {
public:
    bool captures_graphs() const override { return true; }
    void begin_graph_capture() override {
        if (m_capturing) throw Error(ErrorKind::Internal, "capture begun twice");
        m_capturing = true;
        m_recording.clear();
        ++begins;
    }
    void end_graph_capture(const void* owner, std::uint64_t key) override {
        if (!m_capturing) throw Error(ErrorKind::Internal, "capture ended without a begin");
        m_capturing = false;
        m_graphs[{owner, key}] = std::move(m_recording);
        m_recording.clear();
    }
    void abort_graph_capture() noexcept override { m_capturing = false; }
    bool replay_graph(const void* owner, std::uint64_t key) override {
        const auto it = m_graphs.find({owner, key});
        if (it == m_graphs.end()) return false;
        for (const auto& op : it->second) op();
        ++replays;
        return true;
    }
    void drop_graphs(const void* owner) noexcept override {
        for (auto it = m_graphs.begin(); it != m_graphs.end();)
            it = it->first.first == owner ? m_graphs.erase(it) : std::next(it);
        ++drops;
    }
    std::size_t graphs() const { return m_graphs.size(); }
    int begins = 0, replays = 0, drops = 0;

    const DeviceInfo& info() const override { return m_cpu.info(); }
    Buffer allocate(std::size_t bytes) override { return m_cpu.allocate(bytes); }
    std::size_t memory_in_use() const override { return m_cpu.memory_in_use(); }
    void upload(const void* host, Tensor& dst) override {
        outside("upload");
        m_cpu.upload(host, dst);
    }
    void download(const Tensor& src, void* host) override {
        outside("download");
        m_cpu.download(src, host);
    }
    void synchronize() override { outside("synchronize"); }
    std::size_t gemm_workspace_bytes(const GemmArgs& a) const override {
        return m_cpu.gemm_workspace_bytes(a);
    }
    std::size_t conv2d_workspace_bytes(const Conv2dArgs& a, DType d) const override {
        return m_cpu.conv2d_workspace_bytes(a, d);
    }
    void gather_batch(const Tensor& i, const Tensor& l, const Tensor& p, std::int64_t o,
                      std::int64_t c, const Tensor* at, Tensor& b, Tensor& bl) override {
        run([this, i, l, p, o, c, at, b, bl]() mutable {
            m_cpu.gather_batch(i, l, p, o, c, at, b, bl);
        });
    }
    void fill(Tensor& d, double v) override {
        run([this, d, v]() mutable { m_cpu.fill(d, v); });
    }
    void cast(const Tensor& s, Tensor& d) override {
        run([this, s, d]() mutable { m_cpu.cast(s, d); });
    }
    void gemm(const GemmArgs& a) override {
        auto c = std::make_shared<GemmCopy>(a);
        run([this, c] { m_cpu.gemm(c->args); });
    }
    void bias_grad(const Tensor& dy, Tensor& db) override {
        run([this, dy, db]() mutable { m_cpu.bias_grad(dy, db); });
    }
    void activation_forward(Activation a, const Tensor& x, Tensor& y) override {
        run([this, a, x, y]() mutable { m_cpu.activation_forward(a, x, y); });
    }
    void activation_backward(Activation a, const Tensor& x, const Tensor& y, const Tensor& dy,
                             Tensor& dx) override {
        run([this, a, x, y, dy, dx]() mutable { m_cpu.activation_backward(a, x, y, dy, dx); });
    }
    void softmax_cross_entropy(const SoftmaxXentArgs& a) override {
        auto c = std::make_shared<XentCopy>(a);
        run([this, c] { m_cpu.softmax_cross_entropy(c->args); });
    }
    void conv2d_forward(const Conv2dArgs&, const Tensor&, const Tensor&, const Tensor*, Activation,
                        Tensor&, Tensor*, Workspace) override {
        unsupported("conv2d_forward");
    }
    void conv2d_backward_data(const Conv2dArgs&, const Tensor&, const Tensor&, Tensor&,
                              Workspace) override {
        unsupported("conv2d_backward_data");
    }
    void conv2d_backward_filter(const Conv2dArgs&, const Tensor&, const Tensor&, Tensor&, Tensor*,
                                Workspace) override {
        unsupported("conv2d_backward_filter");
    }
    void maxpool_forward(const Pool2dArgs&, const Tensor&, Tensor&, Tensor&) override {
        unsupported("maxpool_forward");
    }
    void maxpool_backward(const Pool2dArgs&, const Tensor&, const Tensor&, Tensor&) override {
        unsupported("maxpool_backward");
    }
    void dropout_forward(double, std::uint64_t, const Tensor&, Tensor&, Tensor&) override {
        unsupported("dropout_forward");
    }
    void dropout_backward(double, const Tensor&, const Tensor&, Tensor&) override {
        unsupported("dropout_backward");
    }
    void batch_norm_forward(const NormArgs&) override { unsupported("batch_norm_forward"); }
    void batch_norm_backward(const NormArgs&, const Tensor&, Tensor&, Tensor&, Tensor&) override {
        unsupported("batch_norm_backward");
    }
    void layer_norm_forward(const NormArgs&) override { unsupported("layer_norm_forward"); }
    void layer_norm_backward(const NormArgs&, const Tensor&, Tensor&, Tensor&, Tensor&) override {
        unsupported("layer_norm_backward");
    }
    bool supports_fake_quantize() const override { return true; }
    void fake_quantize(const FakeQuantArgs& a) override { // a graph keeps the step number too
        run([this, a] { m_cpu.fake_quantize(a); });
    }
    void exponent_histogram(const Tensor& x, Tensor& c) override {
        outside("exponent_histogram");
        m_cpu.exponent_histogram(x, c);
    }
    void begin_step(Tensor& s) override {
        run([this, s]() mutable { m_cpu.begin_step(s); });
    }
    void unscale_and_check_finite(std::span<Tensor* const> g, Tensor& s,
                                  std::span<const std::uint8_t> leave_scaled = {}) override {
        auto grads = copies(g);
        std::vector<std::uint8_t> flags(leave_scaled.begin(), leave_scaled.end());
        run([this, grads, s, flags]() mutable {
            std::vector<Tensor*> ptrs;
            for (Tensor& t : *grads) ptrs.push_back(&t);
            m_cpu.unscale_and_check_finite(ptrs, s, flags);
        });
    }
    void optimizer_update(const OptimizerConfig& c, Tensor& p, const Tensor& g,
                          std::span<Tensor* const> slot_tensors, const Tensor& s, bool skip,
                          Tensor* copy = nullptr, bool unscale_grad = false) override {
        auto slot_copies = copies(slot_tensors);
        // The compute copy by value, as the other tensors (nullptr: none).
        auto copy_of = std::make_shared<std::optional<Tensor>>();
        if (copy) *copy_of = *copy;
        run([this, c, p, g, slot_copies, s, skip, copy_of, unscale_grad]() mutable {
            std::vector<Tensor*> ptrs;
            for (Tensor& t : *slot_copies) ptrs.push_back(&t);
            m_cpu.optimizer_update(c, p, g, ptrs, s, skip, *copy_of ? &**copy_of : nullptr,
                                   unscale_grad);
        });
    }
    void finish_step(const LossScaleConfig& c, Tensor& s) override {
        run([this, c, s]() mutable { m_cpu.finish_step(c, s); });
    }
    StepScalars read_scalars(const Tensor& s) override {
        outside("read_scalars");
        return m_cpu.read_scalars(s);
    }
    void write_scalars(const StepScalars& v, Tensor& s) override {
        outside("write_scalars");
        m_cpu.write_scalars(v, s);
    }
    void enqueue_readout(const Tensor& s, int slot) override {
        outside("enqueue_readout");
        m_cpu.enqueue_readout(s, slot);
    }
    StepReadout read_readout(int slot) override {
        outside("read_readout");
        return m_cpu.read_readout(slot);
    }

private:
    struct GemmCopy { // the arguments with their tensors copied, as a graph node keeps them
        Tensor a, b, c, bias, pre;
        GemmArgs args;
        explicit GemmCopy(const GemmArgs& in) : args(in) {
            a = *in.a;
            b = *in.b;
            c = *in.c;
            args.a = &a;
            args.b = &b;
            args.c = &c;
            if (in.bias) {
                bias = *in.bias;
                args.bias = &bias;
            }
            if (in.pre_activation) {
                pre = *in.pre_activation;
                args.pre_activation = &pre;
            }
        }
    };
    struct XentCopy {
        Tensor logits, labels, probs, dlogits, scalars;
        SoftmaxXentArgs args;
        explicit XentCopy(const SoftmaxXentArgs& in) : args(in) {
            logits = *in.logits;
            labels = *in.labels;
            args.logits = &logits;
            args.labels = &labels;
            if (in.probs) args.probs = &(probs = *in.probs);
            if (in.dlogits) args.dlogits = &(dlogits = *in.dlogits);
            if (in.scalars) args.scalars = &(scalars = *in.scalars);
        }
    };
    static std::shared_ptr<std::vector<Tensor>> copies(std::span<Tensor* const> tensors) {
        auto out = std::make_shared<std::vector<Tensor>>();
        for (Tensor* t : tensors) out->push_back(*t);
        return out;
    }
    template <class F>
    void run(F op) {
        if (m_capturing)
            m_recording.emplace_back(std::move(op));
        else
            op();
    }
    void outside(const char* op) const {
        if (m_capturing) throw Error(ErrorKind::Internal, std::string(op) + " inside a capture");
    }
    [[noreturn]] static void unsupported(const char* op) {
        throw Error(ErrorKind::Internal, std::string(op) + ": not used by this test's model");
    }

    CpuBackend m_cpu;
    bool m_capturing = false;
    std::vector<std::function<void()>> m_recording;
    std::map<std::pair<const void*, std::uint64_t>, std::vector<std::function<void()>>> m_graphs;
};

struct Outcome {
    std::vector<std::string> logs;
    std::vector<double> losses;
};

Experiment small(bool graph) {
    Experiment e;
    e.name = "graph-flag";
    e.model = mlp_small();
    e.policy = "float32";
    e.optimizer = optimizer_defaults(OptimizerType::RMSprop);
    e.batch_size = 32;
    e.epochs = 1;
    e.max_steps = 3;
    e.device = "cpu";
    e.graph = graph;
    return e;
}

Outcome run(const Experiment& e, Backend& backend) {
    Trainer trainer(e, synthetic_mnist(112, 32), backend); // 4 steps per epoch, the last partial
    TrainControl control;
    TrainerCallbacks callbacks;
    Outcome out;
    callbacks.on_log = [&](const std::string& line) { out.logs.push_back(line); };
    callbacks.on_step = [&](const StepRecord& r) { out.losses.push_back(r.loss); };
    trainer.run(control, callbacks);
    return out;
}

Outcome run(bool graph) {
    CpuBackend backend;
    return run(small(graph), backend);
}

int notes(const Outcome& o) {
    int count = 0;
    for (const std::string& line : o.logs)
        if (line.find("graph flag has no effect") != std::string::npos) ++count;
    return count;
}

} // namespace

class TestGraphFlag {
public:
    void flagLoadsFromAnExperimentFile() {
        Experiment e = experiment_from_json(
            R"({"format_version": 1, "name": "g", "model": {"input": [28, 28, 1], "layers": [
                {"type": "Flatten"}, {"type": "Dense", "units": 10}]}, "graph": true})",
            "test");
        CHECK(e.graph);
    }

    void decision() {
        const std::string cpu = "graph: the CPU engine has no CUDA Graphs";
        CHECK(graph_mode(false, true, cpu, false).note.empty());
        CHECK(!graph_mode(false, true, cpu, false).capture);
        const GraphMode on_cpu = graph_mode(true, false, cpu, false);
        CHECK(!on_cpu.capture);
        CHECK_EQ(on_cpu.note, cpu);
        const GraphMode dropout = graph_mode(true, true, cpu, true);
        CHECK(!dropout.capture);
        CHECK(dropout.note.find("dropout") != std::string::npos);
        CHECK(dropout.note.find("no effect") != std::string::npos);
        const GraphMode stochastic = graph_mode(true, true, cpu, false, true);
        CHECK(!stochastic.capture);
        CHECK(stochastic.note.find("stochastic") != std::string::npos);
        const GraphMode gpu = graph_mode(true, true, cpu, false);
        CHECK(gpu.capture);
        CHECK(gpu.note.find("captured") != std::string::npos);
    }

    // With an engine that captures: the first step eager, each later batch size captured once
    // and replayed ever after (2 epochs of 4 positions, the last one short), the numbers exactly
    // the eager run's, and the graphs dropped with the trainer.
    void capturedStepsReplayWithTheEagerNumbers() {
        Experiment e = small(true);
        e.epochs = 2;
        e.max_steps = 0;
        CpuBackend cpu;
        Experiment eager = e;
        eager.graph = false;
        const Outcome reference = run(eager, cpu);
        RecordingBackend fake;
        const Outcome graphed = run(e, fake);
        CHECK_EQ(graphed.losses.size(), std::size_t(8));
        CHECK_EQ(graphed.losses, reference.losses);
        // One graph for the full batches (captured at step 2), one for the short last batch: the
        // position is read on the device, so every full batch replays the same graph.
        CHECK_EQ(fake.begins, 2);
        CHECK_EQ(fake.replays, 7); // every step but the first
        CHECK_EQ(fake.drops, 1);
        CHECK_EQ(fake.graphs(), std::size_t(0));
        CHECK(std::any_of(graphed.logs.begin(), graphed.logs.end(), [](const std::string& l) {
            return l.find("captured once per batch size") != std::string::npos;
        }));
    }

    // Quantised policies: delayed scaling's amax history and the MX scales live in device memory,
    // so captured steps replay with the eager numbers; NVFP4's stochastic rounding seeds its
    // stream with the step number (a kernel argument), so its steps stay eager, and still match.
    void quantisedStepsReplayUnlessStochastic() {
        for (const char* policy : {"mixed_float8", "mxfp8_e4m3", "nvfp4"}) {
            Experiment e = small(true);
            e.policy = policy;
            e.epochs = 2;
            e.max_steps = 0;
            CpuBackend cpu;
            Experiment eager = e;
            eager.graph = false;
            const Outcome reference = run(eager, cpu);
            RecordingBackend fake;
            const Outcome graphed = run(e, fake);
            CHECK_EQ(graphed.losses.size(), std::size_t(8));
            CHECK_MSG(graphed.losses == reference.losses, policy);
            const bool stochastic = std::string(policy) == "nvfp4";
            CHECK_EQ(fake.replays, stochastic ? 0 : 7);
            CHECK(std::any_of(graphed.logs.begin(), graphed.logs.end(), [&](const std::string& l) {
                return l.find(stochastic ? "rounds stochastically" : "captured once") !=
                       std::string::npos;
            }));
        }
    }

    // A benchmark steps over the full batches only, round and round (mantissa-cli bench, the
    // profiler): after wrap_at_full_batches() the device's position wraps where its offsets do, so
    // one graph serves them all, with the eager numbers. Without it, the offsets and the position
    // part at the first wrap and each later step bakes its own offset in (still right).
    void benchmarkLoopReplaysOneGraph() {
        const auto losses = [](Backend& backend, bool wrap) {
            Trainer trainer(small(true), synthetic_mnist(112, 32), backend); // 3 full batches
            if (wrap) trainer.wrap_at_full_batches();
            std::vector<double> out;
            for (int i = 0; i < 10; ++i) {
                const StepScalars s = trainer.step_once((i % 3) * 32);
                out.push_back(s.loss_sum / static_cast<double>(s.examples));
            }
            return out;
        };
        CpuBackend cpu;
        const std::vector<double> eager = losses(cpu, true);
        RecordingBackend wrapped;
        CHECK(losses(wrapped, true) == eager);
        CHECK_EQ(wrapped.begins, 1); // step 1 eager, step 2 captured, the rest replayed
        CHECK_EQ(wrapped.replays, 9);
        RecordingBackend unwrapped;
        CHECK(losses(unwrapped, false) == eager);
        CHECK(unwrapped.begins > 1);
    }

    void cpuRunSaysTheFlagHasNoEffect() {
        const Outcome with = run(true);
        const Outcome without = run(false);
        CHECK_EQ(notes(with), 1);
        CHECK_EQ(notes(without), 0);
        CHECK_MSG(with.logs.empty() || with.logs.front().find("CPU engine") != std::string::npos,
                  with.logs.empty() ? "" : with.logs.front().c_str());
        // The flag changes nothing in the numbers.
        CHECK_EQ(with.losses.size(), std::size_t(3)); // max_steps
        CHECK_EQ(with.losses, without.losses);
    }
};

MANTISSA_TEST_MAIN(TestGraphFlag, flagLoadsFromAnExperimentFile, decision,
                   capturedStepsReplayWithTheEagerNumbers, quantisedStepsReplayUnlessStochastic,
                   benchmarkLoopReplaysOneGraph, cpuRunSaysTheFlagHasNoEffect)
