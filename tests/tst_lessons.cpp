// The guided lessons: the strict lesson reader (every mistake names the file and field) and, for
// each shipped lesson, its claim re-measured on the CPU engine with a small step budget.

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <regex>
#include <string>

#include "core/backend/cpu/cpu_backend.h"
#include "core/data/mnist.h"
#include "core/error.h"
#include "core/io/atomic_file.h"
#include "core/io/model_weights.h"
#include "core/numeric/quant_math.h"
#include "core/plan/plan_weights.h"
#include "core/train/lesson.h"
#include "core/train/quant_record.h"
#include "core/train/trainer.h"
#include "tests/unit/error_of.h"
#include "tests/unit/files.h"
#include "tests/unit/under_asan.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;

namespace {

const std::string kLessons = MANTISSA_SOURCE_DIR "/resources/lessons";
const std::string kExperiments = MANTISSA_SOURCE_DIR "/resources/experiments";

// Real MNIST for training; the first 1000 test images are enough to tell the runs apart and
// keep each evaluation short.
const Mnist& mnist() {
    static const Mnist data = [] {
        Mnist d = load_mnist(find_data_dir(""));
        constexpr std::int64_t kTest = 1000;
        d.test.count = kTest;
        d.test.images.resize(static_cast<std::size_t>(kTest * d.test.rows * d.test.cols));
        d.test.labels.resize(static_cast<std::size_t>(kTest));
        return d;
    }();
    return data;
}

// All 10,000 test images: what the app evaluates on, so the figures a lesson quotes.
const Mnist& mnist_full() {
    static const Mnist data = load_mnist(find_data_dir(""));
    return data;
}

const Lesson& lesson(const std::string& id) {
    static const std::vector<Lesson> all = load_lessons(kLessons, kExperiments);
    for (const Lesson& l : all)
        if (l.id == id) return l;
    throw Error(ErrorKind::Config, "no lesson " + id);
}

struct Outcome {
    RunSummary summary;
    std::vector<StepRecord> steps;
    std::vector<GradientHistogram> histograms;
    std::vector<QuantRecord> quant;
    // The normalization layers' variables at the end of the run (lesson 11 reads them).
    ModelWeights normalization;

    // Mean training loss over steps [first, last] (1-based).
    double mean_loss(std::int64_t first, std::int64_t last) const {
        double sum = 0;
        int n = 0;
        for (const StepRecord& s : steps)
            if (s.step >= first && s.step <= last) sum += s.loss, ++n;
        return n ? sum / n : std::nan("");
    }
    const GradientHistogram& histogram_at(std::int64_t step) const {
        for (const GradientHistogram& h : histograms)
            if (h.step == step) return h;
        throw Error(ErrorKind::Internal, "no histogram at step " + std::to_string(step));
    }
    // The quant record of `layer`'s `role` ("weight") at `step`.
    const QuantTensorRecord& quant_at(std::int64_t step, const std::string& layer,
                                      const std::string& role) const {
        for (const QuantRecord& r : quant)
            if (r.step == step)
                for (const QuantTensorRecord& t : r.tensors)
                    if (t.layer == layer && t.role == role) return t;
        throw Error(ErrorKind::Internal, "no quant record of " + layer + " " + role + " at step " +
                                             std::to_string(step));
    }
    // The mean over every quant record of `layer`'s `role`, in percent: of the clipped share, or
    // of the flushed share.
    double mean_percent(const std::string& layer, const std::string& role, bool clipped) const {
        double sum = 0;
        int n = 0;
        for (const QuantRecord& r : quant)
            for (const QuantTensorRecord& t : r.tensors)
                if (t.layer == layer && t.role == role) sum += clipped ? t.clipped : t.flushed, ++n;
        return n ? 100.0 * sum / n : std::nan("");
    }
    // How many values `layer`'s `role` quantises per step (the quant records' count).
    std::int64_t count_of(const std::string& layer, const std::string& role) const {
        for (const QuantRecord& r : quant)
            for (const QuantTensorRecord& t : r.tensors)
                if (t.layer == layer && t.role == role) return t.count;
        return 0;
    }
    // Steps at which some quantised value of some layer was clipped.
    std::int64_t steps_with_clipping() const {
        std::int64_t n = 0;
        for (const QuantRecord& r : quant)
            n += std::any_of(r.tensors.begin(), r.tensors.end(),
                             [](const QuantTensorRecord& t) { return t.clipped > 0; });
        return n;
    }
};

// Runs run `index` of a lesson on the CPU, cut to `max_steps` (0: as the lesson says). Lessons
// share runs (lesson 4 reuses lesson 3's), so each distinct experiment is trained once.
const Outcome& run(const std::string& id, std::size_t index, std::int64_t max_steps = 0,
                   std::int64_t histogram_every = -1, bool full_test_set = false) {
    Experiment e = lesson(id).experiments.at(index).experiment;
    e.device = "cpu";
    e.name = "run";
    if (max_steps > 0) e.max_steps = max_steps;
    if (histogram_every >= 0) e.histogram_every = histogram_every;
    static std::map<std::string, Outcome> cache;
    const std::string key = experiment_to_json(e) + (full_test_set ? "full" : "");
    if (auto it = cache.find(key); it != cache.end()) return it->second;
    CpuBackend backend;
    Trainer trainer(e, full_test_set ? mnist_full() : mnist(), backend);
    TrainControl control;
    Outcome out;
    TrainerCallbacks callbacks;
    callbacks.on_step = [&](const StepRecord& r) { out.steps.push_back(r); };
    callbacks.on_histogram = [&](const GradientHistogram& h) { out.histograms.push_back(h); };
    callbacks.on_quant = [&](const QuantRecord& q) { out.quant.push_back(q); };
    out.summary = trainer.run(control, callbacks);
    for (WeightTensor& t : read_model_weights(trainer.plan(), backend).tensors)
        if (t.name.find("normalization") != std::string::npos)
            out.normalization.tensors.push_back(std::move(t));
    return cache[key] = std::move(out);
}

double non_finite(const ExponentCounts& c) {
    return static_cast<double>(c.non_finite()) / static_cast<double>(c.total());
}
double zeros(const ExponentCounts& c) {
    return static_cast<double>(c.zeros()) / static_cast<double>(c.total());
}

// QString::number(v, 'g', digits).
std::string number(double v, int digits) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, v);
    return buffer;
}

std::string text(double v) {
    return number(v, 4);
}

// The number a lesson's text quotes where `pattern` (one capture group) first matches.
double quoted(const Lesson& l, const std::string& pattern) {
    const std::regex re(pattern);
    for (const std::string& paragraph : l.text)
        if (std::smatch m; std::regex_search(paragraph, m, re)) return std::stod(m[1].str());
    throw Error(ErrorKind::Config, l.id + ": no quoted figure matches " + pattern);
}

// `v` to two significant figures, as text ("77", "1.8"): how the lesson figures are compared.
std::string two_figures(double v) {
    return number(v, 2);
}

// QString::replace: every occurrence of `from` in `s` becomes `to`.
std::string replaced(std::string s, const std::string& from, const std::string& to) {
    for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
        s.replace(at, from.size(), to);
    return s;
}

// QString::arg(v, 0, 'f', 4).
std::string fixed4(double v) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.4f", v);
    return buffer;
}

const char* const kGood = R"({
  "title": "t",
  "text": ["one paragraph"],
  "experiments": [{"label": "a", "file": "mlp-small.json"}],
  "look_at": ["the loss"]
})";

} // namespace

class TestLessons {

public:
    void shippedLessonsLoad() {
        const std::vector<Lesson> all = load_lessons(kLessons, kExperiments);
        CHECK(all.size() >= 6);
        for (const Lesson& l : all) {
            CHECK(!l.title.empty());
            CHECK(!l.text.empty());
            CHECK(!l.look_at.empty());
            CHECK(!l.experiments.empty());
            for (const LessonExperiment& r : l.experiments)
                CHECK_EQ(r.experiment.name, r.label); // runs are named by their label
        }
        CHECK(std::is_sorted(all.begin(), all.end(),
                             [](const Lesson& a, const Lesson& b) { return a.id < b.id; }));
        CHECK(lesson("05-speed-and-memory").needs_gpu);
        CHECK(!lesson("02-pure-float16-fails").needs_gpu);
        // The Gradients tab opens at the step the text reads.
        CHECK_EQ(lesson("03-loss-scaling").histogram_step, std::int64_t{1});
        CHECK_EQ(lesson("01-float16-range").histogram_step, std::int64_t{51});
        CHECK_EQ(lesson("02-pure-float16-fails").histogram_step, std::int64_t{0});
    }

    void setMergesIntoThePreset() {
        const Lesson l = lesson_from_json(
            R"({"title": "t", "text": ["p"], "look_at": ["x"], "experiments": [
                 {"label": "fp16", "file": "mlp-small.json",
                  "set": {"policy": "float16", "optimizer": {"learning_rate": 0.01},
                          "loss_scale": {"mode": "none"}}},
                 {"label": "inline", "experiment": {"model": {"layers": [{"type": "Flatten"},
                   {"type": "Dense", "units": 10}]}, "policy": "bfloat16"}}]})",
            "merge.json", "merge",
            [](const std::string& f) { return mantissa::read_file(kExperiments + "/" + f); });
        CHECK_EQ(l.experiments.size(), std::size_t(2));
        const Experiment& a = l.experiments[0].experiment;
        CHECK_EQ(a.policy, std::string("float16"));
        CHECK_EQ(a.optimizer.type, OptimizerType::RMSprop); // kept from the preset
        CHECK_EQ(a.optimizer.learning_rate, 0.01);          // changed by "set"
        CHECK_EQ(a.loss_scale.mode, LossScaleMode::None);
        CHECK_EQ(a.model.layers.size(), std::size_t(5));
        CHECK_EQ(a.name, std::string("fp16"));
        CHECK_EQ(l.experiments[1].experiment.policy, std::string("bfloat16"));
        CHECK_EQ(l.id, std::string("merge"));
    }

    void badLesson_data() {
        add_column<std::string>("json");
        add_column<std::string>("expected");
        auto with = [](const char* from, const char* to) {
            assert(contains(kGood, from));
            return replaced(kGood, from, to);
        };
        new_row("unknown field") << with(R"("title": "t")", R"("title": "t", "tilte": 1)")
                                 << "bad.json: tilte: unknown field; valid fields:";
        new_row("missing title") << with(R"("title": "t",)", "") << "bad.json: title: missing";
        new_row("empty text") << with(R"(["one paragraph"])", "[]")
                              << "bad.json: text: expected a non-empty list of strings, got "
                                 "an empty list";
        new_row("blank paragraph")
            << with(R"("one paragraph")", R"("  ")") << "bad.json: text[0]: must not be empty";
        new_row("no experiments") << with(R"([{"label": "a", "file": "mlp-small.json"}])", "[]")
                                  << "bad.json: experiments: expected a non-empty list of runs";
        new_row("missing label") << with(R"("label": "a", )", "")
                                 << "bad.json: experiments[0]: missing field 'label'";
        new_row("file and experiment")
            << with(R"("file": "mlp-small.json")", R"("file": "mlp-small.json", "experiment": {})")
            << "bad.json: experiments[0]: expected exactly one of 'file'";
        new_row("unknown preset") << with("mlp-small.json", "nope.json")
                                  << "bad.json: experiments[0].file: cannot read the preset";
        new_row("bad value in set")
            << with(R"("file": "mlp-small.json")",
                    R"("file": "mlp-small.json", "set": {"policy": "float17"})")
            << "bad.json: experiments[0] (mlp-small.json with 'set'): policy: unknown policy";
        new_row("unknown field in set")
            << with(R"("file": "mlp-small.json")",
                    R"("file": "mlp-small.json", "set": {"epoch": 2})")
            << "bad.json: experiments[0] (mlp-small.json with 'set'): epoch: unknown field";
        new_row("same label twice") << with(R"({"label": "a", "file": "mlp-small.json"})",
                                            R"({"label": "a", "file": "mlp-small.json"},
                       {"label": "a", "file": "cnn.json"})")
                                    << "bad.json: experiments[1].label: \"a\" labels two runs";
        new_row("histogram_step 0")
            << with(R"("title": "t")", R"("title": "t", "histogram_step": 0)")
            << "bad.json: histogram_step: expected a training step (an integer >= 1), got 0";
        new_row("needs_gpu as text")
            << with(R"("title": "t")", R"("title": "t", "needs_gpu": "yes")")
            << "bad.json: needs_gpu: expected true or false";
        new_row("duplicate key") << with(R"("title": "t")", R"("title": "t", "title": "u")")
                                 << "bad.json: field 'title' appears twice";
        new_row("invalid JSON") << with(R"("title": "t",)", R"("title": "t",,)")
                                << "bad.json: line 2, column 16: invalid JSON: syntax error";
        new_row("newer format") << with(R"("title": "t")", R"("title": "t", "format_version": 2)")
                                << "bad.json: format_version: this lesson is format_version 2";
        // Found while writing the fuzz target: copying the inline experiment recursed once per
        // level, so a lesson 100,000 levels deep overflowed the stack.
        new_row("nested 100000 deep")
            << replaced(kGood, R"("file": "mlp-small.json")",
                        R"("experiment": {"model": )" + std::string(100000, '[') +
                            std::string(100000, ']') + "}")
            << "bad.json: invalid JSON: it nests deeper than 64 levels";
    }
    void badLesson() {
        FETCH(std::string, json);
        FETCH(std::string, expected);
        const std::string msg = error_of(
            [&] {
                lesson_from_json(json, "bad.json", "bad", [](const std::string& f) {
                    return mantissa::read_file(kExperiments + "/" + f);
                });
            },
            ErrorKind::Config);
        CHECK_MSG(contains(msg, expected), (msg + "\n-- expected: " + expected));
    }

    // --- each lesson's claim on the CPU engine ----------------------------------------------
    void lesson1_overflowAndUnderflow() {
        // Scale 2^24: step 1's gradients overflow and the run diverges.
        const Outcome& over = run("01-float16-range", 0);
        const GradientHistogram& h = over.histogram_at(1);
        CHECK_MSG(non_finite(h.all_activation) > 0.9, (text(non_finite(h.all_activation))));
        CHECK_EQ(non_finite(h.all_weight), 1.0);
        CHECK_EQ(over.summary.status, RunStatus::Diverged);
        CHECK_EQ(over.steps.size(), std::size_t{2}); // the loss of step 2 is NaN
        // No scaling: by step 51 most activation gradients are float16 subnormals (measured 61%);
        // with the dynamic 2^15 almost none are (measured 0.4%).
        const Outcome& none = run("01-float16-range", 1, 51);
        const Outcome& dynamic = run("01-float16-range", 2, 51);
        const Float16Fractions n = float16_fractions(none.histogram_at(51).all_activation, 0);
        const Float16Fractions d = float16_fractions(dynamic.histogram_at(51).all_activation, 0);
        CHECK_MSG(n.subnormal > 0.4, (text(n.subnormal)));
        CHECK_MSG(d.subnormal + d.underflow < 0.05, (text(d.subnormal)));
        CHECK_EQ(d.overflow, 0.0);
        // The same gradients unscaled are the no-scaling picture: most are subnormal.
        const Float16Fractions du =
            float16_fractions(dynamic.histogram_at(51).all_activation, -loss_scale_shift(32768));
        CHECK_MSG(du.subnormal + du.underflow > 0.4, (text(du.subnormal)));
    }

    void lesson2_pureFloat16Fails() {
        const std::string id = "02-pure-float16-fails";
        // Measured over steps 26-50 (Adam, lr 1e-3): float16 212, bfloat16 2.35 (chance),
        // mixed_float16 0.49.
        const Outcome& f16 = run(id, 0, 50);
        const Outcome& bf16 = run(id, 1, 50);
        const Outcome& mixed = run(id, 2, 50);
        const double f = f16.mean_loss(26, 50), b = bf16.mean_loss(26, 50),
                     m = mixed.mean_loss(26, 50);
        CHECK_MSG(f > 50, (text(f)));
        CHECK_MSG(b > 2.3, (text(b)));
        CHECK_MSG(m < 1.0, (text(m)));
        // float16's second step overflows; the dynamic scaler skips steps 2 to 7 (2^15 to 2^9).
        for (std::size_t i = 0; i < 10; ++i) CHECK_EQ(f16.steps[i].skipped, i >= 1 && i <= 6);
        CHECK_EQ(f16.steps.back().loss_scale, 512.0);
        CHECK_EQ(mixed.summary.skipped_steps, std::int64_t{0});
    }

    void lesson3_underflowAndDynamicScaling() {
        const std::string id = "03-loss-scaling";
        const Outcome& none = run(id, 0, 225, 0);
        const Outcome& dynamic = run(id, 1, 225, 0);
        // Measured: steps 201-225 average 2.30 without scaling, 1.96 with dynamic scaling.
        const double n = none.mean_loss(201, 225), d = dynamic.mean_loss(201, 225);
        CHECK_MSG(n > 2.28, (text(n)));
        CHECK_MSG(d < 2.1, (text(d)));
        // Step 1's gradients: zeros without scaling, none in range with it.
        const Outcome& first_none = run(id, 0, 1, 1);
        const Outcome& first_dynamic = run(id, 1, 1, 1);
        const GradientHistogram& hn = first_none.histogram_at(1);
        const GradientHistogram& hd = first_dynamic.histogram_at(1);
        CHECK_MSG(zeros(hn.all_activation) > 0.15, (text(zeros(hn.all_activation))));
        CHECK_MSG(zeros(hn.all_weight) > 0.5, (text(zeros(hn.all_weight))));
        CHECK_MSG(zeros(hd.all_activation) < 0.01, (text(zeros(hd.all_activation))));
        const Float16Fractions unscaled =
            float16_fractions(hd.all_activation, -loss_scale_shift(hd.loss_scale));
        CHECK_MSG(unscaled.underflow > 0.2, (text(unscaled.underflow)));
        // Started at 2^24 the scaler skips its first 5 steps, halving to 2^19.
        const Outcome& settles = run(id, 2, 8, 0);
        for (int i = 0; i < 8; ++i)
            CHECK_EQ(settles.steps[static_cast<std::size_t>(i)].skipped, i < 5);
        CHECK_EQ(settles.steps.back().loss_scale, 524288.0);
        // Where each skipped step overflowed (the ledger), as the text says: at 2^24 all 18
        // gradients, dense_9's kernel first; at 2^23 dense_9's and dense_8's; at 2^21 and 2^20
        // dense_9's only. The ledger lists them as the backward pass writes them: dense_8's bias
        // gradient comes out of its fused dZ step, before its kernel's GEMM.
        using Names = std::vector<std::string>;
        const auto overflowed = [&](std::size_t i) { return settles.steps[i].overflowed; };
        CHECK_EQ(overflowed(0).size(), std::size_t{18});
        CHECK_EQ(overflowed(0).front(), std::string("dense_9/kernel"));
        CHECK_EQ(overflowed(1),
                 Names({"dense_9/kernel", "dense_9/bias", "dense_8/bias", "dense_8/kernel"}));
        CHECK_EQ(overflowed(3), Names({"dense_9/kernel", "dense_9/bias"}));
        CHECK_EQ(overflowed(4), Names({"dense_9/kernel", "dense_9/bias"}));
        CHECK(overflowed(5).empty());
        // The accuracy column does not show the fix (the text points at the loss): the four runs'
        // test accuracies lie within 2.5 points (20.58-20.74% with GCC; clang's build rounds
        // the unscaled run to 22.23%).
        std::vector<double> accuracy;
        for (std::size_t r = 0; r < 4; ++r)
            accuracy.push_back(100.0 *
                               ::run(id, r, 0, -1, /*full_test_set=*/true).summary.val_accuracy);
        const auto [low, high] = std::minmax_element(accuracy.begin(), accuracy.end());
        CHECK_MSG(*high - *low < 2.5 && *high < 25.0, (text(*low) + " to " + text(*high)));
    }

    void lesson4_bfloat16NeedsNoScaling() {
        const std::string id = "04-bfloat16-no-scaling";
        CHECK_EQ(lesson(id).experiments[1].experiment.loss_scale.mode, LossScaleMode::None);
        // Measured: steps 201-225 average 1.96 in mixed_bfloat16 without scaling, as in
        // float32, and 2.30 in mixed_float16 without scaling.
        const double f16 = run(id, 0, 225, 0).mean_loss(201, 225);
        const double bf16 = run(id, 1, 225, 0).mean_loss(201, 225);
        CHECK_MSG(f16 > 2.28, (text(f16)));
        CHECK_MSG(bf16 < 2.1, (text(bf16)));
        // No gradient underflows to zero in bfloat16 (float16 without scaling: 20%).
        const GradientHistogram& h = run(id, 1, 1, 1).histogram_at(1);
        CHECK_MSG(zeros(h.all_activation) < 0.01, (text(zeros(h.all_activation))));
        CHECK_EQ(h.loss_scale, 1.0);
    }

    void lesson5_memoryOfMixedPrecision() {
        // The times need a GPU; the memory plan is exact on every engine. At batch 256:
        const std::string id = "05-speed-and-memory";
        auto memory = [&](std::size_t index) {
            Experiment e = lesson(id).experiments.at(index).experiment;
            e.device = "cpu";
            e.batch_size = 256;
            CpuBackend backend;
            return Trainer(e, mnist(), backend).plan().memory;
        };
        const MemoryByCategory f32 = memory(0), tf32 = memory(1), mixed = memory(2);
        CHECK_EQ(tf32.total(), f32.total()); // TF32 changes the arithmetic, not the storage
        CHECK_EQ(f32[MemCategory::Master], std::size_t{0});
        CHECK_EQ(mixed[MemCategory::Master], f32[MemCategory::Weights]);      // float32 master copy
        CHECK_EQ(mixed[MemCategory::Weights] * 2, f32[MemCategory::Weights]); // float16 copy
        // Every gradient in float16 (no float32 copy of the weight gradients: the optimizer
        // widens them) but the float32 logits' (256 x 10), as the text says.
        CHECK_EQ(mixed[MemCategory::Gradients] * 2,
                 f32[MemCategory::Gradients] + std::size_t{8 * 256 * 10});
        const double activations = static_cast<double>(mixed[MemCategory::Activations]) /
                                   static_cast<double>(f32[MemCategory::Activations]);
        CHECK_MSG(activations < 0.6, (text(activations)));
    }

    // The figures the texts quote, re-measured as the app runs the lesson (its whole step budget,
    // all 10,000 test images) and compared to two significant figures; lesson 3's near-chance
    // accuracies within the 1.5 points its text allows (another compiler, CPU or thread count
    // rounds its eight sigmoid layers a little differently: 20.48% for float32 under one thread
    // on an AVX2 machine, 20.74% as quoted).
    void quotedFiguresMatchTheMeasurement_data() {
        add_column<std::string>("id");
        add_column<int>("run");
        add_column<std::string>("pattern");
        add_column<bool>("accuracy"); // a test accuracy in percent, else a test loss
        add_column<double>("points"); // the allowed difference in points, 0: two figures
        new_row("lesson 2: pure float16's test accuracy")
            << "02-pure-float16-fails" << 0
            << R"(After 200 steps .* test accuracy (\d+(?:\.\d+)?)%)" << true << 0.0;
        new_row("lesson 2: pure bfloat16's test accuracy")
            << "02-pure-float16-fails" << 1
            << R"(bfloat16 stays .*\(test accuracy (\d+(?:\.\d+)?)%\))" << true << 0.0;
        new_row("lesson 2: mixed_float16's test accuracy")
            << "02-pure-float16-fails" << 2
            << R"(mixed_float16 reaches a test accuracy of (\d+(?:\.\d+)?)%)" << true << 0.0;
        new_row("lesson 2: mixed_float16's test loss")
            << "02-pure-float16-fails" << 2 << R"(mixed_float16 reaches .*\(test loss (\d+\.\d+)\))"
            << false << 0.0;
        new_row("lesson 3: float32's test loss")
            << "03-loss-scaling" << 3 << R"((\d+\.\d+) for float32)" << false << 0.0;
        new_row("lesson 3: dynamic scaling's test loss")
            << "03-loss-scaling" << 1 << R"(test loss (\d+\.\d+) with dynamic scaling)" << false
            << 0.0;
        new_row("lesson 3: the test loss without scaling")
            << "03-loss-scaling" << 0 << R"((\d+\.\d+) without scaling\))" << false << 0.0;
        new_row("lesson 3: dynamic scaling's test accuracy")
            << "03-loss-scaling" << 1 << R"((\d+\.\d+)% with dynamic scaling)" << true << 1.5;
        new_row("lesson 3: float32's test accuracy")
            << "03-loss-scaling" << 3 << R"((\d+\.\d+)% for float32;)" << true << 1.5;
        new_row("lesson 4: float32's test loss")
            << "04-bfloat16-no-scaling" << 2 << R"(\(float32: (\d+\.\d+)\))" << false << 0.0;
        new_row("lesson 4: mixed_bfloat16's test loss")
            << "04-bfloat16-no-scaling" << 1 << R"(ends at a test loss of (\d+\.\d+))" << false
            << 0.0;
        new_row("lesson 4: mixed_float16's test loss")
            << "04-bfloat16-no-scaling" << 0 << R"(there and ends at (\d+\.\d+))" << false << 0.0;
        new_row("lesson 6: the float32 softmax's test accuracy")
            << "06-float32-softmax" << 0
            << R"(completes its 300 steps with a test accuracy of (\d+(?:\.\d+)?)%)" << true << 0.0;
        new_row("lesson 6: the float16 softmax's test accuracy")
            << "06-float32-softmax" << 1 << R"(the float16 one had (\d+(?:\.\d+)?)%)" << true
            << 0.0;
        new_row("lesson 7: delayed scaling's test accuracy")
            << "07-fp8-delayed-scaling" << 0 << R"((\d+\.\d+)% \(delayed\))" << true << 0.0;
        new_row("lesson 7: current scaling's test accuracy")
            << "07-fp8-delayed-scaling" << 1 << R"((\d+\.\d+)% \(current\))" << true << 0.0;
        new_row("lesson 8: MXFP4's test accuracy")
            << "08-mxfp4-against-nvfp4" << 0 << R"((\d+\.\d+)% for MXFP4)" << true << 0.0;
        new_row("lesson 8: NVFP4's test accuracy")
            << "08-mxfp4-against-nvfp4" << 1 << R"((\d+\.\d+)% for NVFP4)" << true << 0.0;
        new_row("lesson 8: NVFP4's test accuracy with nearest-rounded gradients")
            << "08-mxfp4-against-nvfp4" << 2 << R"(reaches a test accuracy of (\d+\.\d+)% here)"
            << true << 0.0;
    }

    void quotedFiguresMatchTheMeasurement() {
        FETCH(std::string, id);
        FETCH(int, run);
        FETCH(std::string, pattern);
        FETCH(bool, accuracy);
        FETCH(double, points);
        const Lesson& l = lesson(id);
        const double text_value = quoted(l, pattern);
        const RunSummary& s =
            ::run(l.id, static_cast<std::size_t>(run), 0, -1, /*full_test_set=*/true).summary;
        const double measured = accuracy ? 100.0 * s.val_accuracy : s.val_loss;
        std::printf("INFO   : %s: the text says %g, measured %.4f\n", current_data_tag().c_str(),
                    text_value, measured);
        CHECK_MSG(points > 0 ? std::abs(measured - text_value) <= points
                             : two_figures(measured) == two_figures(text_value),
                  ("the text says " + number(text_value, 6) + ", measured " + fixed4(measured)));
    }

    void lesson6_float16SoftmaxBreaksTheLoss() {
        const std::string id = "06-float32-softmax";
        const Outcome& f32 = run(id, 0, 100);
        const Outcome& f16 = run(id, 1, 100);
        CHECK_EQ(f32.summary.status, RunStatus::Completed);
        for (const StepRecord& s : f32.steps) CHECK(std::isfinite(s.loss));
        // Measured: the float16 softmax's batch loss becomes inf at step 100 and the run stops.
        CHECK_EQ(f16.summary.status, RunStatus::Diverged);
        CHECK_EQ(f16.steps.size(), std::size_t{100});
        CHECK(std::isinf(f16.steps.back().loss));
        for (std::size_t i = 0; i + 1 < f16.steps.size(); ++i)
            CHECK(std::isfinite(f16.steps[i].loss));
        // Mantissa warns about exactly the second run.
        auto warns = [&](std::size_t index) {
            Experiment e = lesson(id).experiments.at(index).experiment;
            e.device = "cpu";
            CpuBackend backend;
            const Trainer trainer(e, mnist(), backend);
            for (const LintMessage& m : trainer.plan().lint)
                if (m.severity == LintSeverity::Warning &&
                    m.text.find("softmax") != std::string::npos)
                    return true;
            return false;
        };
        CHECK(!warns(0));
        CHECK(warns(1));
    }

    void lesson7_delayedScalingClipsWhatItHasNotSeen() {
        const std::string id = "07-fp8-delayed-scaling";
        const Lesson& l = lesson(id);
        CHECK(l.experiments[0].experiment.recipe->kind == "delayed");
        CHECK(l.experiments[1].experiment.recipe->kind == "current");
        // The whole 300 steps, as the app runs them (shared with the quoted accuracies).
        const Outcome& delayed = run(id, 0, 0, -1, true);
        const Outcome& current = run(id, 1, 0, -1, true);
        CHECK_EQ(delayed.quant.size(), std::size_t{300});
        CHECK_EQ(current.quant.size(), std::size_t{300});
        // Step 2: dense_1's weights have outgrown step 1's amax, which the delayed scale uses.
        const QuantTensorRecord& before = delayed.quant_at(1, "dense_1", "weight");
        const QuantTensorRecord& after = delayed.quant_at(2, "dense_1", "weight");
        CHECK_EQ(before.clipped, 0.0);
        CHECK(after.amax > before.amax);
        // Step 1 casts with TE's initial scale (1: nothing seen yet); step 2's scale is made from
        // step 1's amax alone (the records hold the decode scale, 1 / scale).
        CHECK_EQ(before.scale, 1.0);
        CHECK_EQ(after.scale, static_cast<double>(
                                  1.0f / quant_math::fp8_scale_for(before.amax, 448.0, 0, 1.0f)));
        CHECK_EQ(two_figures(before.amax),
                 two_figures(quoted(l, R"(grown from an amax of (\d+\.\d+))")));
        CHECK_EQ(two_figures(after.amax), two_figures(quoted(l, R"(to (\d+\.\d+)\. The)")));
        const char* const layers[] = {"dense_1", "dense_2", "dense_3"};
        const char* const patterns[] = {R"((\d+\.\d+)% of dense_1's weights are clipped)",
                                        R"(\((\d+\.\d+)% of dense_2's)",
                                        R"((\d+\.\d+)% of dense_3's\))"};
        for (int i = 0; i < 3; ++i) {
            const double clipped = 100.0 * delayed.quant_at(2, layers[i], "weight").clipped;
            const double text_value = quoted(l, patterns[i]);
            CHECK_MSG(two_figures(clipped) == two_figures(text_value),
                      (std::string(layers[i]) + ": the text says " + number(text_value, 6) +
                       ", measured " + fixed4(clipped)));
        }
        // Current scaling sees each tensor before casting it: nothing clips, ever.
        CHECK_EQ(current.steps_with_clipping(), std::int64_t{0});
        for (const QuantRecord& r : current.quant)
            for (const QuantTensorRecord& t : r.tensors) CHECK_EQ(t.clipped, 0.0);
        // The delayed scale trails tensors that keep growing: clipping at most steps.
        const double steps = static_cast<double>(delayed.steps_with_clipping());
        CHECK_MSG(two_figures(steps) ==
                      two_figures(quoted(l, R"(clips some value at (\d+) of its 300 steps)")),
                  (text(steps)));
    }

    void lesson8_nvfp4KeepsMoreOfEachBlock() {
        const std::string id = "08-mxfp4-against-nvfp4";
        const Lesson& l = lesson(id);
        CHECK_EQ(l.experiments[0].experiment.policy, std::string("mxfp4"));
        CHECK(l.experiments[1].experiment.recipe->stochastic_gradients == true);
        CHECK(l.experiments[2].experiment.recipe->stochastic_gradients == false);
        const Outcome& mx = run(id, 0, 0, -1, true);
        const Outcome& stochastic = run(id, 1, 0, -1, true);
        const Outcome& nearest = run(id, 2, 0, -1, true);
        CHECK_EQ(mx.quant.size(), std::size_t{300});
        // Each figure the text quotes: (run, layer, role, clipped or flushed, the text around it).
        struct Claim {
            const Outcome* run;
            const char* layer;
            const char* role;
            bool clipped;
            const char* pattern;
        };
        const Claim claims[] = {
            {&mx, "dense_1", "activation", true, R"(MXFP4 clips (\d+\.\d+)% of the input)"},
            {&stochastic, "dense_1", "activation", true, R"(dense_1 \(NVFP4 (\d+\.\d+)%\))"},
            {&mx, "dense_1", "weight", true, R"((\d+\.\d+)% of dense_1's weights)"},
            {&stochastic, "dense_1", "weight", true, R"(dense_1's weights \(NVFP4 (\d+\.\d+)%\))"},
            {&mx, "dense_3", "weight", true, R"((\d+\.\d+)% of dense_3's weights)"},
            {&stochastic, "dense_3", "weight", true, R"(dense_3's weights \(NVFP4 (\d+\.\d+)%\))"},
            // The gradients dX = dZ·Wᵀ reads, row-wise: dense_1 computes no dX, so it has none.
            {&stochastic, "dense_2", "gradient", false, R"((\d+\.\d+)% of dense_2's gradient)"},
            {&nearest, "dense_2", "gradient", false, R"(on average \((\d+\.\d+)% with nearest)"},
            {&stochastic, "dense_3", "gradient", false, R"(and (\d+\.\d+)% of dense_3's \()"},
            {&nearest, "dense_3", "gradient", false, R"(dense_3's \((\d+\.\d+)% with nearest)"},
        };
        // Within 5% of the quoted share, or half of one value's share where that is more, not
        // to two figures: these shares are averages of discrete clip and flush decisions, and
        // the CPU engine's float32 GEMM rounds a little differently with 1 or 2 threads (Eigen
        // sizes its k-panels by the thread count) and with the CPU's vector width (AVX2 or
        // AVX-512 kernels), which moved dense_1's NVFP4 weight share by 0.01 points (0.35%
        // against 0.34%) and dense_3's by 0.02 (0.39% on an AVX-512 Xeon, 0.37% on an AVX2
        // EPYC): about 5 of its 1,280 weights clip, so a quarter of a value is 0.02 points.
        for (const Claim& c : claims) {
            const double measured = c.run->mean_percent(c.layer, c.role, c.clipped);
            const double text_value = quoted(l, c.pattern);
            const auto count = static_cast<double>(c.run->count_of(c.layer, c.role));
            const double tolerance = std::max(0.05 * text_value, count > 0 ? 50.0 / count : 0.0);
            std::printf("INFO   : %s: the text says %g, measured %.4f\n", c.pattern, text_value,
                        measured);
            CHECK_MSG(std::abs(measured - text_value) <= tolerance,
                      (std::string(c.pattern) + ": the text says " + number(text_value, 6) +
                       ", measured " + fixed4(measured)));
        }
        // The claims themselves: NVFP4's blocks clip far less than MXFP4's, and stochastic
        // rounding flushes fewer gradients to zero than nearest rounding, in every layer that
        // quantises them row-wise (all but the first, which computes no dX).
        for (const char* role : {"activation", "weight"})
            CHECK(stochastic.mean_percent("dense_1", role, true) <
                  mx.mean_percent("dense_1", role, true) / 4);
        CHECK_EQ(stochastic.count_of("dense_1", "gradient"), std::int64_t{0});
        for (const char* layer : {"dense_2", "dense_3"})
            CHECK_MSG(stochastic.mean_percent(layer, "gradient", false) <
                          nearest.mean_percent(layer, "gradient", false),
                      (std::string(layer)));
        CHECK(mx.summary.val_accuracy < stochastic.summary.val_accuracy);
        CHECK(mx.summary.val_accuracy < nearest.summary.val_accuracy);
    }

    // Lesson 9 (issue 27): the TensorFlow guide's model as the classic lab ran it, tf.keras 2.x
    // RMSprop. Five runs of 4 steps at batch 8192 on a 20-million-parameter model take minutes
    // under AddressSanitizer; the same engine paths run in the lessons above.
    void lesson9_classicLab() {
#if MANTISSA_UNDER_ASAN
        SKIP_TEST("the classic lab's five seed-mlp runs are too slow under AddressSanitizer");
#else
        const std::string id = "09-classic-lab";
        const Lesson& l = lesson(id);
        const Outcome& f32 = run(id, 0, 0, -1, true);
        const Outcome& mixed = run(id, 1, 0, -1, true);
        const Outcome& tf2 = run(id, 2, 0, -1, true);
        const Outcome& keras = run(id, 3, 0, -1, true);
        const Outcome& f64 = run(id, 4, 0, -1, true);
        CHECK_EQ(l.experiments[2].experiment.optimizer.convention, OptimizerConvention::TfKeras2);
        CHECK_EQ(l.experiments[3].experiment.optimizer.convention, OptimizerConvention::Keras);

        // Step 1's weight gradients below 2^-11 or zero: each leaves v = 0 in float16
        // (0.1001 * g^2 <= 0.1001 * 2^-22 < 2^-25 rounds to 0). The run is the same at step 1.
        const ExponentCounts& w = tf2.histogram_at(1).all_weight;
        CHECK(w == keras.histogram_at(1).all_weight);
        std::int64_t below = w.zeros();
        for (int e = -200; e < -11; ++e) below += w.at_exponent(e);
        const double below_percent = 100.0 * double(below) / double(w.total());
        CHECK_EQ(number(below_percent, 3), number(quoted(l, R"(at step 1, (\d+\.\d)%)"), 3));

        // tf.keras 2.x: NaN at step 2, diverged, chance accuracy.
        CHECK_EQ(tf2.summary.status, RunStatus::Diverged);
        CHECK_EQ(tf2.steps.size(), std::size_t{2});
        CHECK_EQ(number(tf2.steps[0].loss, 3),
                 number(quoted(l, R"(loss is (\d\.\d+) at step 1)"), 3));
        CHECK(std::isnan(tf2.steps[1].loss));
        CHECK_EQ(fixed4(tf2.summary.val_accuracy * 100).substr(0, 4),
                 fixed4(quoted(l, R"(diverged \(test accuracy (\d+\.\d+)%)")).substr(0, 4));
        CHECK(contains(tf2.summary.message, "the keras optimizer convention"));
        // Keras 3: finite throughout, and it learns.
        CHECK_EQ(keras.summary.status, RunStatus::Completed);
        CHECK_EQ(keras.steps.size(), std::size_t{4});
        for (const StepRecord& r : keras.steps) CHECK(std::isfinite(r.loss));
        CHECK_EQ(number(keras.steps.back().loss, 3),
                 number(quoted(l, R"(finite loss \((\d\.\d+) at step 4\))"), 3));

        // Test accuracies as quoted, within 0.1 points: the float32 GEMMs round a little
        // differently with the thread count and the CPU's vector width (see lesson 8).
        const auto accuracy_as_quoted = [&](const Outcome& o, const std::string& pattern) {
            const double measured = 100.0 * o.summary.val_accuracy;
            const double text_value = quoted(l, pattern);
            std::printf("INFO   : %s: the text says %g, measured %.4f\n", pattern.c_str(),
                        text_value, measured);
            CHECK_MSG(std::abs(measured - text_value) <= 0.1, pattern + ": the text says " +
                                                                  number(text_value, 6) +
                                                                  ", measured " + fixed4(measured));
        };
        accuracy_as_quoted(keras, R"(reaches a test accuracy of (\d+\.\d+)%)");
        accuracy_as_quoted(f32, R"(test accuracy (\d+\.\d+)% and)");
        accuracy_as_quoted(mixed, R"(% and (\d+\.\d+)% after 4 steps)");
        accuracy_as_quoted(f64, R"(float64: (\d+\.\d+)%)");
        CHECK(keras.summary.val_accuracy > 4 * tf2.summary.val_accuracy);
        CHECK(std::abs(mixed.summary.val_accuracy - f32.summary.val_accuracy) < 0.005);
        CHECK(std::abs(f64.summary.val_accuracy - f32.summary.val_accuracy) < 0.005);

        // float64 doubles the weights (exact, from the plan).
        const auto mib = [](std::size_t bytes) { return number(double(bytes) / 1048576.0, 3); };
        const std::size_t w64 = f64.steps.front().memory[MemCategory::Weights];
        const std::size_t w32 = f32.steps.front().memory[MemCategory::Weights];
        CHECK_EQ(w64, 2 * w32);
        CHECK_EQ(mib(w64), number(quoted(l, R"(weights (\d+\.\d) MiB against)"), 3));
        CHECK_EQ(mib(w32), number(quoted(l, R"(against (\d+\.\d) MiB for float32)"), 3));
        // The step-time ratio is the CPU's (not asserted: timing belongs to benchmarks).
        std::printf("INFO   : float64 / float32 step time on this machine: %.2f (the text says "
                    "about %g)\n",
                    f64.summary.median_step_ms / f32.summary.median_step_ms,
                    quoted(l, R"(about (\d\.\d) times the step time)"));
#endif
    }

    // Lesson 10 (issue 29): the record's recipe. The full-epoch accuracies it quotes were measured
    // with mantissa-cli (bench/RESULTS.md); here, on a 100-step budget (OneCycle then spans those
    // 100 steps), the schedule's shape as recorded and its effect against a constant max_lr.
    void lesson10_oneCycleBeatsAConstantRate() {
        const std::string id = "10-mnist-fast";
        const Lesson& l = lesson(id);
        CHECK_EQ(l.experiments.size(), std::size_t{3});
        const Experiment& preset = l.experiments[0].experiment;
        CHECK(preset.optimizer.schedule.kind == ScheduleKind::OneCycle);
        CHECK(l.experiments[1].experiment.optimizer.schedule.kind == ScheduleKind::Constant);
        CHECK_EQ(l.experiments[1].experiment.optimizer.learning_rate, 0.01);
        CHECK_EQ(l.experiments[2].experiment.policy, std::string("mixed_bfloat16"));
        // The quoted one-epoch figures: the schedule ahead of the constant rate.
        CHECK(quoted(l, R"(OneCycle reaches (\d+\.\d+)%)") >
              quoted(l, R"(constant 0\.01 reaches (\d+\.\d+)%)"));
#if MANTISSA_UNDER_ASAN
        SKIP_TEST("two 100-step convolutional runs take minutes under AddressSanitizer");
#else
        const Outcome& cycle = run(id, 0, 100, 0);
        const Outcome& constant = run(id, 1, 100, 0);
        CHECK_EQ(cycle.steps.size(), std::size_t{100});
        // PyTorch's OneCycleLR as the pytorch convention passes it on (a double): up from
        // 0.01 / 25 over 30% of the steps, then down to 0.01 / 25 / 1e4.
        CHECK(std::abs(cycle.steps.front().learning_rate - 0.0004) < 1e-15);
        CHECK_EQ(cycle.steps[29].learning_rate, 0.01); // step 30: schedule step 29 = 0.3*100 - 1
        CHECK_EQ(cycle.steps.back().learning_rate, 0.01 / 25 / 1e4);
        for (const StepRecord& r : constant.steps) CHECK_EQ(r.learning_rate, 0.01);
        const auto tail_loss = [](const Outcome& o) {
            double sum = 0;
            for (std::size_t i = o.steps.size() - 20; i < o.steps.size(); ++i)
                sum += o.steps[i].loss;
            return sum / 20;
        };
        std::printf("INFO   : 100 steps: OneCycle loss %.4f, test loss %.4f, test accuracy %.4f; "
                    "constant 0.01 loss %.4f, test loss %.4f, test accuracy %.4f\n",
                    tail_loss(cycle), cycle.summary.val_loss, cycle.summary.val_accuracy,
                    tail_loss(constant), constant.summary.val_loss, constant.summary.val_accuracy);
        // The text's "settles instead of bouncing": a lower training loss over the last 20
        // steps. The one-epoch accuracies it quotes come from full runs (bench/RESULTS.md);
        // after 100 steps both runs classify about 98% of the test images, and which is ahead
        // moves with the CPU's vector width (AVX-512: OneCycle; AVX2: 98.20% both, and a lower
        // test loss for the constant rate), so here both need only have learned.
        CHECK(tail_loss(cycle) < tail_loss(constant));
        CHECK(cycle.summary.val_accuracy > 0.97);
        CHECK(constant.summary.val_accuracy > 0.97);
#endif
    }

    // Lesson 11 (issue 29): BatchNormalization forced to float16 under Adam. Four one-epoch runs
    // of a 784-256-256-10 model take minutes under AddressSanitizer (and clang's build rounds a
    // few sums differently, which moves this chaotic run's figures); every op it uses runs in the
    // op-case table and the gradient checks there.
    void lesson11_float16StatisticsUnderAdam() {
        const std::string id = "11-batchnorm-statistics";
        const Lesson& l = lesson(id);
        CHECK_EQ(l.experiments.size(), std::size_t{4});
        const auto bn_dtypes = [&](std::size_t run_index) {
            std::string dtypes;
            for (const LayerSpec& layer : l.experiments[run_index].experiment.model.layers)
                if (layer.type == LayerType::BatchNormalization)
                    dtypes += (layer.dtype ? *layer.dtype : std::string("-")) + " ";
            return dtypes;
        };
        CHECK_EQ(bn_dtypes(0), std::string("- - "));
        CHECK_EQ(bn_dtypes(1), std::string("float16 float16 "));
        CHECK_EQ(bn_dtypes(3), std::string("float16 float16 "));
        CHECK(l.experiments[2].experiment.optimizer.type == OptimizerType::SGD);
#if MANTISSA_UNDER_ASAN
        SKIP_TEST("four one-epoch runs are too slow under AddressSanitizer");
#else
        const Outcome& adam32 = run(id, 0, 0, -1, true);
        const Outcome& adam16 = run(id, 1, 0, -1, true);
        const Outcome& sgd32 = run(id, 2, 0, -1, true);
        const Outcome& sgd16 = run(id, 3, 0, -1, true);
        const auto check_quote = [&](const std::string& pattern, double measured) {
            const double said = quoted(l, pattern);
            std::printf("INFO   : %s: the text says %g, measured %.4f\n", pattern.c_str(), said,
                        measured);
            CHECK_MSG(two_figures(measured) == two_figures(said),
                      (pattern + ": the text says " + number(said, 6) + ", measured " +
                       fixed4(measured)));
        };
        check_quote(R"(it reaches a test accuracy of (\d+\.\d+)%)",
                    100.0 * adam32.summary.val_accuracy);
        // The collapsed run predicts one digit for every test image, so it scores that digit's
        // share of the test set. Which digit is chaotic (1 where the text was measured, 7 on an
        // AVX2 machine), so the text's figure and the measurement are each checked to be one
        // digit's share, not equal to each other.
        const auto one_digit_share = [](double percent) {
            const std::vector<std::uint8_t>& labels = mnist_full().test.labels;
            for (int digit = 0; digit < 10; ++digit) {
                const auto images = std::count(labels.begin(), labels.end(), digit);
                if (std::abs(percent - 100.0 * double(images) / double(labels.size())) < 1e-9)
                    return true;
            }
            return false;
        };
        const double collapsed = quoted(l, R"(float16 it ends at (\d+\.\d+)%)");
        std::printf("INFO   : float16 statistics under Adam end at %.2f%% (the text: %.2f%%)\n",
                    100.0 * adam16.summary.val_accuracy, collapsed);
        CHECK(one_digit_share(collapsed));
        CHECK(one_digit_share(100.0 * adam16.summary.val_accuracy));
        check_quote(R"(harm on this model: (\d+\.\d+)%)", 100.0 * sgd16.summary.val_accuracy);
        check_quote(R"(against (\d+\.\d+)% with float32 statistics)",
                    100.0 * sgd32.summary.val_accuracy);
        check_quote(R"(loss at step 2 is (\d+\.\d+))", adam16.steps.at(1).loss);
        // The look-at line: after the jump the run recovers below 1, then climbs back above 2.
        std::size_t lowest = 2;
        for (std::size_t i = 2; i < adam16.steps.size(); ++i)
            if (adam16.steps[i].loss < adam16.steps[lowest].loss) lowest = i;
        std::size_t climbs = lowest;
        while (climbs < adam16.steps.size() && !(adam16.steps[climbs].loss > 2)) ++climbs;
        std::printf("INFO   : float16 statistics under Adam: lowest loss %.3f at step %zu, above 2 "
                    "again from step %zu of %zu\n",
                    adam16.steps[lowest].loss, lowest + 1, climbs + 1, adam16.steps.size());
        CHECK(adam16.steps[lowest].loss < 1);
        CHECK(climbs < adam16.steps.size());
        check_quote(R"(float32 statistics: (\d+\.\d+)\)\.)", adam32.steps.at(1).loss);

        // After one step: the float16 gammas leapt, the float32 ones moved by Adam's usual 0.01.
        // (NaN, NaN) when the run has no such tensor, which fails every comparison below.
        const auto range_of = [](const Outcome& o, const std::string& name) {
            const WeightTensor* t = o.normalization.find(name);
            const std::vector<double> v =
                t ? values_as_double(*t) : std::vector<double>{std::nan("")};
            return std::pair{*std::min_element(v.begin(), v.end()),
                             *std::max_element(v.begin(), v.end())};
        };
        const auto [low16, high16] = range_of(run(id, 1, 1), "batch_normalization_1.gamma");
        CHECK_EQ(std::round(low16), quoted(l, R"(lie between (-\d+) and)"));
        CHECK_EQ(std::round(high16), quoted(l, R"(lie between -\d+ and (\d+))"));
        const auto [low32, high32] = range_of(run(id, 0, 1), "batch_normalization_1.gamma");
        CHECK_EQ(number(low32, 2), number(quoted(l, R"(between (0\.\d+) and)"), 2));
        CHECK_EQ(number(high32, 3), number(quoted(l, R"(and (1\.\d+)\))"), 3));

        // At the end: batch_normalization_2's float16 moving variance overflowed in most channels.
        const WeightTensor* mv = adam16.normalization.find("batch_normalization_2.moving_variance");
        CHECK(mv != nullptr);
        if (mv) {
            const std::vector<double> v = values_as_double(*mv);
            const auto inf =
                std::count_if(v.begin(), v.end(), [](double x) { return std::isinf(x); });
            // "Most": the count itself is chaotic (233 where the text was measured, 235 on an
            // AVX2 machine), so the text quotes it as that machine's figure.
            std::printf("INFO   : moving variance inf in %d of 256 channels (the text: %g)\n",
                        static_cast<int>(inf), quoted(l, R"(most of its 256 channels \((\d+) )"));
            CHECK_EQ(v.size(), std::size_t{256});
            CHECK(inf > 128);
        }
        const WeightTensor* mv32 =
            adam32.normalization.find("batch_normalization_2.moving_variance");
        CHECK(mv32 != nullptr);
        if (mv32)
            for (double x : values_as_double(*mv32)) CHECK(std::isfinite(x) && x < 100.0);
#endif
    }
};

MANTISSA_TEST_MAIN(TestLessons, shippedLessonsLoad, setMergesIntoThePreset, badLesson,
                   lesson1_overflowAndUnderflow, lesson2_pureFloat16Fails,
                   lesson3_underflowAndDynamicScaling, lesson4_bfloat16NeedsNoScaling,
                   lesson5_memoryOfMixedPrecision, quotedFiguresMatchTheMeasurement,
                   lesson6_float16SoftmaxBreaksTheLoss, lesson7_delayedScalingClipsWhatItHasNotSeen,
                   lesson8_nvfp4KeepsMoreOfEachBlock, lesson9_classicLab,
                   lesson10_oneCycleBeatsAConstantRate, lesson11_float16StatisticsUnderAdam)
