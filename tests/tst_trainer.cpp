// The Trainer on real MNIST: seeded determinism, pause/resume/stop from another thread,
// learning under float32 and mixed policies, divergence handling and the metrics JSONL.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend/cpu/cpu_backend.h"
#include "core/data/mnist.h"
#include "core/data/synthetic_mnist.h"
#include "core/error.h"
#include "core/numeric/convert.h"
#include "core/parallel/single_process_communicator.h"
#include "core/records/metrics_jsonl.h"
#include "core/train/trainer.h"
#include "tests/test_support.h"
#include "tests/unit/files.h"
#include "tests/unit/temp_dir.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;
using namespace mantissa::test;

namespace {
const Mnist& mnist() {
    static const Mnist data = load_mnist(find_data_dir(""));
    return data;
}

Experiment mlp_experiment(const char* policy, std::int64_t max_steps) {
    Experiment e;
    e.name = "mlp-small";
    e.model = mlp_small();
    e.policy = policy;
    e.optimizer = optimizer_defaults(OptimizerType::RMSprop);
    e.batch_size = 128;
    e.epochs = 1;
    e.max_steps = max_steps;
    e.device = "cpu";
    return e;
}

// Runs `trainer` to its end and returns its step records.
std::vector<StepRecord> train(Trainer& trainer, RunSummary* summary = nullptr) {
    TrainControl control;
    std::vector<StepRecord> steps;
    TrainerCallbacks callbacks;
    callbacks.on_step = [&](const StepRecord& r) { steps.push_back(r); };
    RunSummary s = trainer.run(control, callbacks);
    if (summary) *summary = s;
    return steps;
}

std::vector<StepRecord> run_steps(const Experiment& e, RunSummary* summary = nullptr,
                                  const DataParallelOptions& parallel = {}) {
    CpuBackend backend;
    Trainer trainer(e, mnist(), backend, parallel);
    return train(trainer, summary);
}
} // namespace

class TestTrainer {

public:
    void sameSeedSameNumbers() {
        const auto a = run_steps(mlp_experiment("mixed_float16", 25));
        const auto b = run_steps(mlp_experiment("mixed_float16", 25));
        CHECK_EQ(a.size(), std::size_t(25));
        CHECK_EQ(b.size(), a.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
            CHECK_EQ(a[i].loss, b[i].loss); // bit-identical, not approximately equal
            CHECK_EQ(a[i].accuracy, b[i].accuracy);
            CHECK_EQ(a[i].loss_scale, b[i].loss_scale);
        }
        Experiment other = mlp_experiment("mixed_float16", 25);
        other.seed = 43;
        const auto c = run_steps(other);
        CHECK(c.back().loss != a.back().loss);
    }
    // A one-rank group changes nothing: no gradient exchange, the same steps bit for bit.
    void singleProcessCommunicatorChangesNothing() {
        const auto a = run_steps(mlp_experiment("mixed_float16", 25));
        SingleProcessCommunicator one;
        DataParallelOptions parallel;
        parallel.communicator = &one;
        parallel.allreduce_dtype = DType::BFloat16; // would round the gradients if it ran
        const auto b = run_steps(mlp_experiment("mixed_float16", 25), nullptr, parallel);
        CHECK_EQ(b.size(), a.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
            CHECK_EQ(b[i].loss, a[i].loss); // bit-identical
            CHECK_EQ(b[i].loss_scale, a[i].loss_scale);
            CHECK_EQ(b[i].ranks, 1);
            CHECK_EQ(b[i].allreduce_bytes, std::int64_t(0));
        }
    }
    // A run that records gradient histograms (the GUI, `train --metrics`) trains exactly as the
    // same run without them: the histogram's extra forward and backward pass puts back the state
    // a training forward moves (delayed scaling's amax history, BatchNormalization's moving
    // statistics). Before, mixed_float8 on mlp-small tested 93.23% with histograms and 93.43%
    // without after 150 steps.
    void histogramsLeaveTheRunUnchanged() {
        Experiment fp8 = mlp_experiment("mixed_float8", 12);
        Experiment bn = mlp_experiment("mixed_float16", 12);
        LayerSpec norm;
        norm.type = LayerType::BatchNormalization;
        bn.model.layers.insert(bn.model.layers.begin() + 2, norm); // after dense_1
        for (Experiment e : {fp8, bn}) {
            e.histogram_every = 3;
            std::vector<double> losses[2];
            for (int with = 0; with < 2; ++with) {
                CpuBackend backend;
                Trainer trainer(e, mnist(), backend);
                TrainControl control;
                TrainerCallbacks callbacks;
                int histograms = 0;
                callbacks.on_step = [&](const StepRecord& r) { losses[with].push_back(r.loss); };
                if (with) callbacks.on_histogram = [&](const GradientHistogram&) { ++histograms; };
                CHECK_EQ(trainer.run(control, callbacks).status, RunStatus::Completed);
                CHECK_EQ(histograms, with ? 4 : 0);
                // Evaluation reads the moving statistics: the test accuracy must agree too.
                losses[with].push_back(trainer.evaluate().accuracy);
            }
            CHECK_EQ(losses[0].size(), std::size_t(13));
            for (std::size_t i = 0; i < losses[0].size(); ++i)
                CHECK_MSG(losses[1][i] == losses[0][i],
                          e.policy + " step " + std::to_string(i + 1) + ": " +
                              std::to_string(losses[1][i]) + " vs " + std::to_string(losses[0][i]));
        }
    }
    void learnsUnderEachPolicy_data() {
        add_column<std::string>("policy");
        for (const char* p : {"float32", "mixed_float16", "mixed_bfloat16", "float64"})
            new_row(p) << p;
    }
    void learnsUnderEachPolicy() {
        FETCH(std::string, policy);
        RunSummary summary;
        const auto steps = run_steps(mlp_experiment(policy.c_str(), 150), &summary);
        CHECK_EQ(summary.status, RunStatus::Completed);
        CHECK_EQ(summary.steps, std::int64_t(150));
        CHECK_MSG(summary.val_accuracy > 0.90, std::to_string(summary.val_accuracy));
        CHECK(steps.back().loss < steps.front().loss);
    }
    void dynamicLossScaleIsReported() {
        const auto steps = run_steps(mlp_experiment("mixed_float16", 20));
        CHECK_EQ(steps.front().loss_scale, 32768.0); // Keras's initial scale
        for (const StepRecord& r : steps) {
            CHECK(r.loss_scale <= 32768.0);
            CHECK_EQ(r.memory.total(), steps.front().memory.total());
            CHECK(r.memory[MemCategory::Master] > 0);
        }
        const auto fp32 = run_steps(mlp_experiment("float32", 3));
        CHECK_EQ(fp32.front().loss_scale, 1.0);
        CHECK(!fp32.front().skipped);
    }
    // The skipped-step ledger (issue 27): a step whose loss scale overflows float16 at the loss
    // gradient lists exactly the parameter gradients that hold inf or NaN (read back from the
    // plan, independently of the device's mask), the last Dense layer's first, as backward
    // computes it, and the message says so; steps of an ordinary run list nothing.
    void skippedStepLedgerNamesTheOverflowedGradients() {
        Experiment e = mlp_experiment("mixed_float16", 1);
        e.loss_scale.initial = 1073741824.0; // 2^30: (p - y) / 128 * 2^30 > 65504 in float16
        CpuBackend backend;
        Trainer trainer(e, mnist(), backend); // kept: its plan's gradients are read back below
        const std::vector<StepRecord> steps = train(trainer);
        CHECK_EQ(steps.size(), std::size_t(1));
        const StepRecord& step = steps.front();
        CHECK(step.skipped);
        std::vector<std::string> nonfinite;
        for (const PlanParam& p : trainer.plan().params) {
            const Tensor& g = trainer.plan().tensor(p.grad);
            std::vector<double> v(static_cast<std::size_t>(g.numel()));
            convert_to_double(g.data, g.dtype, v.data(), v.size());
            if (std::any_of(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }))
                nonfinite.push_back(p.name);
        }
        CHECK(!nonfinite.empty());
        std::vector<std::string> listed = step.overflowed;
        std::sort(listed.begin(), listed.end());
        std::sort(nonfinite.begin(), nonfinite.end());
        CHECK_EQ(listed, nonfinite);
        // mlp-small's layers are named dense_1 ... dense_3 (Keras's counters from 1).
        CHECK_MSG(step.overflowed.front().rfind("dense_3/", 0) == 0, step.overflowed.front());
        CHECK_EQ(skipped_step_text(step), "step 1 skipped: " + step.overflowed.front() +
                                              "'s gradient overflowed first (scale 1073741824; " +
                                              std::to_string(step.overflowed.size()) +
                                              " gradients held inf or NaN)");

        StepRecord old_file = step; // a metrics file from before the ledger
        old_file.overflowed.clear();
        CHECK_EQ(skipped_step_text(old_file), std::string("step 1 skipped: its gradients held inf "
                                                          "or NaN (which was not recorded; scale "
                                                          "1073741824)"));
        // A normal run: no step lists anything.
        for (const StepRecord& r : run_steps(mlp_experiment("mixed_float16", 5)))
            CHECK(r.skipped || r.overflowed.empty());
    }
    void pauseResumeStop() {
        CpuBackend backend;
        Experiment e = mlp_experiment("float32", 0);
        e.epochs = 50;
        Trainer trainer(e, mnist(), backend);
        TrainControl control;
        std::atomic<std::int64_t> last_step{0};
        std::atomic<std::int64_t> step_us{0}; // duration of the latest step
        TrainerCallbacks callbacks;
        callbacks.on_step = [&](const StepRecord& r) {
            step_us = static_cast<std::int64_t>(r.step_ms * 1000.0);
            last_step = r.step;
        };
        RunSummary summary;
        std::thread worker([&] { summary = trainer.run(control, callbacks); });
        // A failed check returns early: stop and join the worker whatever happens.
        struct JoinOnExit {
            TrainControl& control;
            std::thread& worker;
            ~JoinOnExit() {
                control.request_stop();
                if (worker.joinable()) worker.join();
            }
        } join{control, worker};
        while (last_step < 5) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        // Windows of several step times: a step takes milliseconds in a normal build and up to
        // a second under the sanitizers, so fixed sleeps made this test flaky there.
        const auto window = std::max(std::chrono::microseconds(300000),
                                     std::chrono::microseconds(8 * step_us.load()));
        const std::int64_t at_pause = last_step;
        control.set_paused(true);
        // Parked: the step in flight has finished and been reported, however loaded the machine.
        while (!control.parked()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        const std::int64_t paused_at = last_step;
        CHECK(paused_at <= at_pause + 1); // only the step in flight may finish
        std::this_thread::sleep_for(window);
        CHECK_EQ(last_step.load(), paused_at); // no step runs while paused
        control.set_paused(false);
        while (last_step < paused_at + 5) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        control.request_stop();
        worker.join();
        CHECK(!control.parked());
        CHECK_EQ(summary.status, RunStatus::Stopped);
        CHECK(summary.steps >= paused_at + 5);
        CHECK(std::isfinite(summary.val_accuracy)); // the partial epoch was still evaluated
    }
    void divergenceStopsTheRun() {
        Experiment e = mlp_experiment("float32", 200);
        e.optimizer = optimizer_defaults(OptimizerType::SGD);
        e.optimizer.learning_rate = 1e6;
        RunSummary summary;
        run_steps(e, &summary);
        CHECK_EQ(summary.status, RunStatus::Diverged);
        CHECK_MSG(contains(summary.message, "diverged"), summary.message.c_str());
        CHECK(summary.steps < 200);
        e.on_divergence = DivergencePolicy::Continue;
        run_steps(e, &summary);
        CHECK_EQ(summary.status, RunStatus::Diverged);
        CHECK_EQ(summary.steps, std::int64_t(200));
    }
    void partialLastBatchCoversTheEpoch() {
        CpuBackend backend;
        Experiment e = mlp_experiment("float32", 0);
        e.batch_size = 7000; // 60000 = 8·7000 + 4000
        e.model.layers[1].units = 16;
        e.model.layers[2].units = 16;
        Trainer trainer(e, mnist(), backend);
        CHECK_EQ(trainer.steps_per_epoch(), std::int64_t(9));
        TrainControl control;
        std::int64_t examples = 0;
        TrainerCallbacks callbacks;
        callbacks.on_step = [&](const StepRecord& r) {
            examples += static_cast<std::int64_t>(r.samples_per_s * r.step_ms / 1000.0 + 0.5);
        };
        RunSummary summary = trainer.run(control, callbacks);
        CHECK_EQ(examples, std::int64_t(60000));
        CHECK_EQ(trainer.evaluate().examples, std::int64_t(10000));
    }
    void metricsJsonl() {
        TempDir dir;
        const std::string path = (dir.path() + "/run.jsonl");
        {
            CpuBackend backend;
            Experiment e = mlp_experiment("mixed_float16", 12);
            Trainer trainer(e, mnist(), backend);
            MetricsJsonlWriter writer(path);
            writer.write_header(e, backend.info(), trainer.plan(), trainer.memory());
            TrainControl control;
            TrainerCallbacks callbacks;
            callbacks.on_step = [&](const StepRecord& r) { writer.write_step(r); };
            callbacks.on_epoch = [&](const EpochRecord& r) { writer.write_epoch(r); };
            writer.write_summary(trainer.run(control, callbacks));
        }
        std::ifstream in(path);
        std::string line;
        std::vector<std::string> types;
        while (std::getline(in, line)) {
            const nlohmann::json object = nlohmann::json::parse(line, nullptr, false);
            CHECK(!object.is_discarded());
            types.push_back(object.value("type", ""));
            if (object.value("type", "") == "step") {
                for (const char* key :
                     {"step", "epoch", "loss", "accuracy", "step_ms", "samples_per_s", "loss_scale",
                      "skipped", "mem", "device_mem_used", "device_mem_total"})
                    CHECK_MSG(object.contains(key), key);
                for (const char* key : {"weights", "master", "activations", "gradients",
                                        "optimizer", "workspace", "total"})
                    CHECK_MSG(object.at("mem").contains(key), key);
            }
            if (object.value("type", "") == "epoch")
                for (const char* key : {"epoch", "loss", "accuracy", "val_loss", "val_accuracy",
                                        "seconds", "skipped_steps"})
                    CHECK_MSG(object.contains(key), key);
        }
        CHECK(!types.empty());
        CHECK_EQ(types.front(), std::string("run"));
        CHECK_EQ(std::count(types.begin(), types.end(), "step"), 12);
        CHECK_EQ(std::count(types.begin(), types.end(), "epoch"), 1);
        CHECK_EQ(types.back(), std::string("summary"));
    }
    void badBatchSizeIsAConfigError() {
        CpuBackend backend;
        Experiment e = mlp_experiment("float32", 1);
        e.batch_size = 0;
        try {
            Trainer trainer(e, mnist(), backend);
            FAIL_TEST("accepted batch_size 0");
        } catch (const Error& err) {
            CHECK_EQ(err.kind(), ErrorKind::Config);
            CHECK(contains(err.what(), "batch_size"));
        }
    }
    // A batch of a million (the most the experiment reader accepts) on Keras's Dense 4096 x 2
    // model needs far more than any host's memory: the plan's arena is refused up front with an
    // OutOfMemory error that says what to reduce, before anything of that size is allocated.
    void hugeBatchIsAMemoryError() {
        CpuBackend backend;
        Experiment e = mlp_experiment("float32", 1);
        e.model.layers[1].units = 4096;
        e.model.layers[2].units = 4096;
        e.batch_size = 1000000;
        const Mnist data = synthetic_mnist(64, 64);
        try {
            Trainer trainer(e, data, backend);
            FAIL_TEST("a batch of 10^6 on Dense 4096 x 2 was accepted");
        } catch (const Error& err) {
            CHECK_EQ(err.kind(), ErrorKind::OutOfMemory);
            const std::string msg = err.what();
            CHECK_MSG(contains(msg, "reduce the batch size"), (msg));
        }
        CHECK_EQ(backend.memory_in_use(), std::size_t(0)); // nothing was left allocated
    }
    // Linux overcommits: a block between MemAvailable and the installed RAM used to be granted,
    // and zeroing it got the process OOM-killed. MemAvailable is always below MemTotal, so a
    // request for all of the RAM must now be refused up front.
    void allocationBeyondAvailableMemoryIsRefused() {
        CpuBackend backend;
        const std::size_t ram = backend.info().memory_total;
        if (ram == 0) SKIP_TEST("this system does not report its RAM");
        try {
            Buffer b = backend.allocate(ram);
            FAIL_TEST("an allocation of all the RAM was granted");
        } catch (const Error& err) {
            CHECK_EQ(err.kind(), ErrorKind::OutOfMemory);
            CHECK_MSG(contains(err.what(), "available"), err.what());
        }
        CHECK_EQ(backend.memory_in_use(), std::size_t(0));
    }
    // Set in code (the GUI's form, a script), an infinite or NaN learning rate is refused by
    // name before the first step; from a file, 1e999 is already a parse error (tst_experiment).
    void nonFiniteLearningRateIsAConfigError_data() {
        add_column<double>("lr");
        new_row("inf") << std::numeric_limits<double>::infinity();
        new_row("nan") << std::numeric_limits<double>::quiet_NaN();
        new_row("-inf") << -std::numeric_limits<double>::infinity();
    }
    void nonFiniteLearningRateIsAConfigError() {
        FETCH(double, lr);
        CpuBackend backend;
        Experiment e = mlp_experiment("float32", 1);
        e.optimizer.learning_rate = lr;
        try {
            Trainer trainer(e, synthetic_mnist(64, 64), backend);
            FAIL_TEST("a non-finite learning rate was accepted");
        } catch (const Error& err) {
            CHECK_EQ(err.kind(), ErrorKind::Config);
            CHECK_MSG(contains(err.what(), "learning_rate"), err.what());
        }
    }
    // Regression (fuzz/fuzz_metrics_jsonl): a message with bytes that are not UTF-8 (a file path
    // in a legacy encoding, a cut multi-byte character) made nlohmann throw and ended the run;
    // now each line stays valid JSON with U+FFFD in their place, and NaN/inf become null.
    void metricsJsonlSurvivesInvalidUtf8() {
        TempDir dir;
        const std::string path = (dir.path() + "/run.jsonl");
        {
            MetricsJsonlWriter writer(path);
            writer.write_log("Loading MNIST from /data/\xe9t\xe9 and \xc3");
            StepRecord step;
            step.loss = std::numeric_limits<double>::quiet_NaN();
            step.step_ms = std::numeric_limits<double>::infinity();
            writer.write_step(step);
            RunSummary summary;
            summary.status = RunStatus::Failed;
            summary.message = std::string("/tmp/\xff\xfe: file not found\0tail", 28);
            writer.write_summary(summary);
        }
        std::ifstream in(path);
        std::string line;
        std::vector<std::string> types;
        while (std::getline(in, line)) {
            const nlohmann::json o = nlohmann::json::parse(line, nullptr, false);
            CHECK_MSG(!o.is_discarded(), line.c_str());
            types.push_back(o.value("type", ""));
            if (o.value("type", "") == "log")
                CHECK_EQ(o.at("message").get<std::string>(),
                         std::string("Loading MNIST from /data/\uFFFDt\uFFFD and \uFFFD"));
            if (o.value("type", "") == "step") {
                CHECK(o.at("loss").is_null());
                CHECK(o.at("step_ms").is_null());
            }
            if (o.value("type", "") == "summary")
                CHECK_MSG(contains(o.at("message").get<std::string>(), "file not found"),
                          line.c_str());
        }
        CHECK_EQ(types, std::vector<std::string>({"log", "step", "summary"}));
    }
};

MANTISSA_TEST_MAIN(TestTrainer, sameSeedSameNumbers, singleProcessCommunicatorChangesNothing,
                   histogramsLeaveTheRunUnchanged, learnsUnderEachPolicy,
                   dynamicLossScaleIsReported, skippedStepLedgerNamesTheOverflowedGradients,
                   pauseResumeStop, divergenceStopsTheRun, partialLastBatchCoversTheEpoch,
                   metricsJsonl, badBatchSizeIsAConfigError, hugeBatchIsAMemoryError,
                   allocationBeyondAvailableMemoryIsRefused, nonFiniteLearningRateIsAConfigError,
                   metricsJsonlSurvivesInvalidUtf8)
