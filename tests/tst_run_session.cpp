// core/run on synthetic MNIST: a RunSession writes every record of its run (histograms included)
// and the reader gives them back; an EvalSession holds no optimizer state and only the test images;
// a metrics file that cannot be written is the run's end or a note, as the caller chose.
#include <cmath>
#include <string>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/data/synthetic_mnist.h"
#include "core/error.h"
#include "core/records/metrics_reader.h"
#include "core/run/eval_session.h"
#include "core/run/run_session.h"
#include "tests/ops/forwarding_backend.h"
#include "tests/test_support.h"
#include "tests/unit/check_throws.h"
#include "tests/unit/files.h"
#include "tests/unit/temp_dir.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;
using namespace mantissa::test;

namespace {

constexpr std::int64_t kTrain = 256, kTest = 96;

const Mnist& data() {
    static const Mnist d = synthetic_mnist(kTrain, kTest);
    return d;
}

Experiment small_experiment(const char* policy) {
    Experiment e;
    e.name = "session";
    e.model = mlp_small();
    e.policy = policy;
    e.optimizer = optimizer_defaults(OptimizerType::Adam);
    e.batch_size = 32;
    e.epochs = 2;
    e.device = "cpu";
    return e;
}

// The CPU engine, counting the bytes each upload puts on the device.
class CountingBackend final : public ForwardingBackend {
public:
    explicit CountingBackend(Backend& inner) : ForwardingBackend(inner) {}
    void upload(const void* host, Tensor& dst) override {
        uploaded.push_back({dst.name, dst.bytes()});
        ForwardingBackend::upload(host, dst);
    }
    std::vector<std::pair<std::string, std::size_t>> uploaded;
};

RunSessionOptions session_options(const Experiment& e, Backend& backend) {
    RunSessionOptions options;
    options.experiment = e;
    options.engine.backend = &backend;
    options.data.data = &data();
    return options;
}

} // namespace

class TestRunSession {

public:
    // Every record the session hears is in its metrics file, and the reader returns histograms
    // equal to those the callbacks saw.
    void runWritesEveryRecordAndTheReaderReadsHistograms() {
        TempDir dir;
        const std::string path = dir.file("metrics.jsonl");
        CpuBackend cpu;
        Experiment e = small_experiment("mixed_float16");
        e.histogram_every = 5;
        RunSessionOptions options = session_options(e, cpu);
        options.metrics_path = path;
        std::vector<StepRecord> steps;
        std::vector<GradientHistogram> histograms;
        options.callbacks.on_step = [&](const StepRecord& r) { steps.push_back(r); };
        options.callbacks.on_histogram = [&](const GradientHistogram& h) {
            histograms.push_back(h);
        };
        RunSession session(std::move(options));
        CHECK(session.writes_metrics());
        TrainControl control;
        const RunOutcome outcome = session.run(control);
        CHECK_EQ(outcome.summary.status, RunStatus::Completed);
        CHECK_EQ(outcome.summary.steps, std::int64_t(16)); // 2 epochs of 256 / 32
        CHECK(!outcome.model.weights.tensors.empty());
        CHECK_EQ(outcome.model.test_accuracy, outcome.summary.val_accuracy);

        const RunMetrics read = read_metrics_jsonl(path);
        CHECK(read.complete());
        CHECK_EQ(read.steps.size(), steps.size());
        CHECK_EQ(read.epochs.size(), std::size_t(2));
        CHECK_EQ(histograms.size(), std::size_t(4)); // steps 1, 6, 11, 16
        CHECK_EQ(read.histograms.size(), histograms.size());
        for (std::size_t i = 0; i < histograms.size(); ++i) {
            const GradientHistogram &a = histograms[i], &b = read.histograms[i];
            CHECK_EQ(b.step, a.step);
            CHECK_EQ(b.loss_scale, a.loss_scale);
            CHECK(b.all_activation == a.all_activation);
            CHECK(b.all_weight == a.all_weight);
            CHECK(b.all_weight.total() > 0);
            CHECK_EQ(b.layers.size(), a.layers.size());
            for (std::size_t l = 0; l < a.layers.size(); ++l) {
                CHECK_EQ(b.layers[l].layer, a.layers[l].layer);
                CHECK_EQ(b.layers[l].has_weights, a.layers[l].has_weights);
                CHECK(b.layers[l].activation == a.layers[l].activation);
                CHECK(b.layers[l].weight == a.layers[l].weight);
            }
        }
        CHECK_EQ(read.summary->steps, outcome.summary.steps);
        CHECK_THROWS(Error, session.run(control)); // its summary is written
    }

    void histogramWithAnotherBinLayoutIsAnError() {
        const std::string line = "{\"type\":\"histogram\",\"step\":1,\"loss_scale\":1,"
                                 "\"bins\":{\"zero\":0,\"min_exponent\":-40,\"max_exponent\":47,"
                                 "\"non_finite\":129},\"layers\":[],\"all\":{}}\n";
        try {
            parse_metrics_jsonl(line, "m.jsonl");
            FAIL_TEST("a foreign bin layout was accepted");
        } catch (const Error& e) {
            CHECK_EQ(e.kind(), ErrorKind::Data);
            CHECK_MSG(std::string(e.what()).find("line 1: field 'bins'") != std::string::npos,
                      e.what());
        }
    }

    // The CLI's choice (no on_metrics_error): an unwritable file fails the session. The GUI's
    // (a callback): one note, and the run completes.
    void unwritableMetricsFile() {
        CpuBackend cpu;
        Experiment e = small_experiment("float32");
        e.max_steps = 3;
        RunSessionOptions strict = session_options(e, cpu);
        strict.metrics_path = "/nonexistent/dir/metrics.jsonl";
        try {
            RunSession session(std::move(strict));
            FAIL_TEST("an unwritable metrics file was accepted");
        } catch (const Error& err) {
            CHECK_EQ(err.kind(), ErrorKind::Io);
        }
        RunSessionOptions lenient = session_options(e, cpu);
        lenient.metrics_path = "/nonexistent/dir/metrics.jsonl";
        std::vector<std::string> notes;
        lenient.callbacks.on_metrics_error = [&](const std::string& m) { notes.push_back(m); };
        RunSession session(std::move(lenient));
        CHECK(!session.writes_metrics());
        TrainControl control;
        CHECK_EQ(session.run(control).summary.status, RunStatus::Completed);
        CHECK_EQ(notes.size(), std::size_t(1));
        CHECK(notes[0].find("/nonexistent/dir/metrics.jsonl") != std::string::npos);
    }

    // A run that throws mid-way leaves a `failed` summary naming the error.
    void failureIsWrittenAsTheSummary() {
        TempDir dir;
        const std::string path = dir.file("metrics.jsonl");
        CpuBackend cpu;
        RunSessionOptions options = session_options(small_experiment("float32"), cpu);
        options.metrics_path = path;
        options.callbacks.on_step = [](const StepRecord& r) {
            if (r.step == 3) throw Error(ErrorKind::Device, "injected at step 3");
        };
        RunSession session(std::move(options));
        TrainControl control;
        CHECK_THROWS(Error, session.run(control));
        const RunMetrics read = read_metrics_jsonl(path);
        CHECK_EQ(read.steps.size(), std::size_t(2)); // step 3 was not written
        CHECK(read.summary.has_value());
        CHECK_EQ(read.summary->status, RunStatus::Failed);
        CHECK_EQ(read.summary->message, std::string("injected at step 3"));
    }

    // Evaluation: no optimizer or gradient bytes, only the test split uploaded, and the same loss
    // and accuracy as the Trainer's own validation of the same weights.
    void evalHoldsNoOptimizerStateAndOnlyTestImages() {
        CpuBackend cpu;
        const Experiment e = small_experiment("mixed_float16");
        RunSession training(session_options(e, cpu));
        CHECK(training.memory()[MemCategory::Optimizer] > 0); // Adam: two slots per variable
        TrainControl control;
        const RunOutcome outcome = training.run(control);

        CountingBackend counting(cpu);
        EvalSessionOptions options;
        options.experiment = e;
        options.engine.backend = &counting;
        options.data.data = &data();
        options.weights = outcome.model.weights;
        options.source = "trained.safetensors";
        EvalSession eval(std::move(options));
        CHECK(eval.plan().inference_only);
        CHECK_EQ(eval.memory()[MemCategory::Optimizer], std::size_t(0));
        for (const PlanParam& p : eval.plan().params) CHECK(p.optimizer_slots.empty());
        CHECK_EQ(eval.memory()[MemCategory::Gradients], std::size_t(0));
        CHECK(eval.memory()[MemCategory::Activations] > 0);
        for (const PlanStep& step : eval.plan().steps) CHECK(step.phase == StepPhase::Forward);
        // Test images, labels and their int32 order: nothing of the training split.
        const std::size_t test_bytes = kTest * 28 * 28 + kTest + kTest * 4;
        CHECK_EQ(eval.memory()[MemCategory::Data], test_bytes);
        CHECK_EQ(eval.test_examples(), kTest);
        std::size_t data_uploaded = 0;
        for (const auto& [name, bytes] : counting.uploaded) {
            CHECK_MSG(name.rfind("train", 0) != 0, name.c_str());
            if (name.rfind("test_", 0) == 0) data_uploaded += bytes;
        }
        CHECK_EQ(data_uploaded, test_bytes);

        const EvalResult result = eval.run();
        CHECK_EQ(result.examples, kTest);
        CHECK_EQ(result.accuracy, outcome.summary.val_accuracy);
        CHECK(std::fabs(result.loss - outcome.summary.val_loss) <=
              1e-12 * std::fabs(outcome.summary.val_loss));
    }

    // Every layer type's forward steps run without gradient memory, under each kind of policy,
    // and reach the Trainer's own validation numbers.
    void evalMatchesValidation_data() {
        add_column<std::string>("policy");
        for (const char* p : {"float32", "mixed_bfloat16", "float16", "float64"})
            new_row(p) << std::string(p);
    }
    void evalMatchesValidation() {
        FETCH(std::string, policy);
        CpuBackend cpu;
        Experiment e = small_experiment(policy.c_str());
        e.model.layers = {conv(4, 3, Activation::Relu),
                          maxpool(),
                          flatten(),
                          dropout(0.25),
                          dense(16, Activation::Tanh),
                          dense(10),
                          activation(Activation::Softmax, "float32")};
        e.epochs = 1;
        RunSession training(session_options(e, cpu));
        TrainControl control;
        const RunOutcome outcome = training.run(control);
        EvalSessionOptions options;
        options.experiment = e;
        options.engine.backend = &cpu;
        options.data.data = &data();
        options.weights = outcome.model.weights;
        EvalSession eval(std::move(options));
        CHECK_EQ(eval.memory()[MemCategory::Gradients], std::size_t(0));
        // No step an evaluation runs reads or writes a gradient (the loss names dlogits as an
        // output but writes it only when training): so on every engine, not only this one.
        for (const PlanStep& step : eval.plan().steps) {
            std::vector<TensorId> ids = step.inputs;
            if (step.op != "softmax_xent")
                ids.insert(ids.end(), step.outputs.begin(), step.outputs.end());
            for (TensorId id : ids)
                CHECK_MSG(eval.plan().tensor(id).category != MemCategory::Gradients,
                          (step.op + " uses " + eval.plan().tensor(id).name).c_str());
        }
        const EvalResult result = eval.run();
        CHECK_EQ(result.examples, kTest);
        CHECK_EQ(result.accuracy, outcome.summary.val_accuracy);
        CHECK_EQ(result.loss, outcome.summary.val_loss);
    }

    void evalChecksTheWeights() {
        CpuBackend cpu;
        EvalSessionOptions options;
        options.experiment = small_experiment("float32");
        options.engine.backend = &cpu;
        options.data.data = &data();
        options.source = "empty.safetensors";
        try {
            EvalSession eval(std::move(options));
            FAIL_TEST("missing weights were accepted");
        } catch (const Error& err) {
            CHECK_EQ(err.kind(), ErrorKind::Config);
            CHECK_MSG(std::string(err.what()).find("empty.safetensors") != std::string::npos,
                      err.what());
        }
    }

    // A plan compiled for inference refuses a training step.
    void inferencePlanRefusesTraining() {
        CpuBackend cpu;
        RunSession training(session_options(small_experiment("float32"), cpu));
        TrainControl control;
        const RunOutcome outcome = training.run(control);
        EvalSessionOptions options;
        options.experiment = small_experiment("float32");
        options.engine.backend = &cpu;
        options.data.data = &data();
        options.weights = outcome.model.weights;
        EvalSession eval(std::move(options));
        RunContext ctx;
        CHECK_THROWS(Error, const_cast<Plan&>(eval.plan()).train_step(cpu, ctx));
    }
};

MANTISSA_TEST_MAIN(TestRunSession, runWritesEveryRecordAndTheReaderReadsHistograms,
                   histogramWithAnotherBinLayoutIsAnError, unwritableMetricsFile,
                   failureIsWrittenAsTheSummary, evalHoldsNoOptimizerStateAndOnlyTestImages,
                   evalMatchesValidation, evalChecksTheWeights, inferencePlanRefusesTraining)
