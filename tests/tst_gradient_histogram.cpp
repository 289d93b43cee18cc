// The gradient histograms of the teaching lab: the probe finds every layer's gradients, the
// unscaled view is an exact shift for power-of-two scales, the trainer's cadence and the JSONL
// record.

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend/cpu/cpu_backend.h"
#include "core/data/synthetic_mnist.h"
#include "core/records/metrics_jsonl.h"
#include "core/train/gradient_histogram.h"
#include "core/train/trainer.h"
#include "tests/test_support.h"
#include "tests/unit/files.h"
#include "tests/unit/temp_dir.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;
using namespace mantissa::test;

namespace {
const Mnist& data() {
    static const Mnist d = synthetic_mnist(512, 256);
    return d;
}

Experiment experiment(const char* policy, LossScaleConfig scale = {}) {
    Experiment e;
    e.model = mlp_small();
    e.policy = policy;
    e.loss_scale = scale;
    e.batch_size = 64;
    e.epochs = 1;
    e.max_steps = 3;
    e.device = "cpu";
    return e;
}

LossScaleConfig fixed(double value) {
    LossScaleConfig c;
    c.mode = LossScaleMode::Fixed;
    c.initial = value;
    return c;
}

ExponentCounts with_exponents(std::initializer_list<std::pair<int, std::int64_t>> at) {
    ExponentCounts c;
    for (auto [e, n] : at) c.bins[static_cast<std::size_t>(1 + e - kHistogramMinExp)] = n;
    return c;
}
} // namespace

class TestGradientHistogram {

public:
    void everyLayerWithAGradient_data() {
        add_column<std::string>("policy");
        new_row("float32") << "float32";
        new_row("mixed_float16") << "mixed_float16";
        new_row("float16") << "float16";
    }
    void everyLayerWithAGradient() {
        FETCH(std::string, policy);
        CpuBackend backend;
        Trainer trainer(experiment(policy.c_str()), data(), backend);
        const GradientHistogram h = trainer.gradient_histogram(0);
        CHECK_EQ(h.step, std::int64_t{1});
        // mlp-small: flatten (no gradient), three Dense layers, the fused float32 softmax.
        CHECK_EQ(int(h.layers.size()), 3);
        const std::int64_t units[] = {128, 128, 10};
        const std::int64_t inputs[] = {784, 128, 128};
        for (int i = 0; i < 3; ++i) {
            const LayerGradientHistogram& l = h.layers[static_cast<std::size_t>(i)];
            CHECK(l.has_weights);
            CHECK_EQ(l.activation.total(), 64 * units[i]);
            CHECK_EQ(l.weight.total(), inputs[i] * units[i] + units[i]); // kernel + bias
        }
        CHECK_EQ(h.all_activation.total(), 64 * (128 + 128 + 10));
        ExponentCounts sum;
        for (const auto& l : h.layers) sum += l.weight;
        CHECK(sum == h.all_weight);
    }
    void histogramIsOfTheComingStepsScaledGradients() {
        // float32 has room for every scale used here, so a power-of-two scale moves every
        // gradient's exponent exactly: the unscaled view of a scaled run is the unscaled run.
        CpuBackend b1, b2;
        Trainer plain(experiment("float32", fixed(1.0)), data(), b1);
        Trainer scaled(experiment("float32", fixed(1024.0)), data(), b2);
        const GradientHistogram a = plain.gradient_histogram(0);
        const GradientHistogram s = scaled.gradient_histogram(0);
        CHECK_EQ(s.loss_scale, 1024.0);
        CHECK_EQ(loss_scale_shift(s.loss_scale), 10);
        for (int e = -60; e <= 30; ++e) {
            CHECK_EQ(s.all_weight.at_exponent(e + 10), a.all_weight.at_exponent(e));
            CHECK_EQ(s.all_activation.at_exponent(e + 10), a.all_activation.at_exponent(e));
        }
    }
    void histogramLeavesTheRunUnchanged() {
        // The extra forward/backward pass must not change a single number of the run.
        auto losses = [](std::int64_t every, int* histograms) {
            Experiment e = experiment("mixed_float16");
            e.max_steps = 8;
            e.histogram_every = every;
            CpuBackend backend;
            Trainer trainer(e, data(), backend);
            TrainControl control;
            std::vector<double> out;
            TrainerCallbacks callbacks;
            callbacks.on_step = [&](const StepRecord& r) { out.push_back(r.loss); };
            callbacks.on_histogram = [&](const GradientHistogram&) { ++*histograms; };
            trainer.run(control, callbacks);
            return out;
        };
        int with = 0, without = 0;
        const auto a = losses(1, &with);
        const auto b = losses(0, &without);
        CHECK_EQ(with, 8);
        CHECK_EQ(without, 0);
        CHECK_EQ(a, b);
    }
    void cadence_data() {
        add_column<int>("every");
        add_column<std::vector<std::int64_t>>("steps");
        new_row("every 5") << 5 << std::vector<std::int64_t>{1, 6, 11};
        new_row("every 50") << 50 << std::vector<std::int64_t>{1};
        new_row("off") << 0 << std::vector<std::int64_t>{};
    }
    void cadence() {
        FETCH(int, every);
        FETCH(std::vector<std::int64_t>, steps);
        Experiment e = experiment("float32");
        e.epochs = 2; // 8 steps an epoch on this data
        e.max_steps = 12;
        e.histogram_every = every;
        CpuBackend backend;
        Trainer trainer(e, data(), backend);
        TrainControl control;
        std::vector<std::int64_t> seen;
        TrainerCallbacks callbacks;
        callbacks.on_histogram = [&](const GradientHistogram& h) { seen.push_back(h.step); };
        trainer.run(control, callbacks);
        CHECK_EQ(seen, steps);
    }
    void float16Fractions_data() {
        add_column<int>("shift");
        add_column<double>("underflow");
        add_column<double>("subnormal");
        add_column<double>("overflow");
        // 1 zero, 1 at 2^-25, 2 at 2^-20, 4 at 2^0, 1 at 2^15, 1 inf: 10 values.
        new_row("as computed") << 0 << 0.1 << 0.2 << 0.1;
        new_row("shifted up by 1") << 1 << 0.0 << 0.3 << 0.2;
        new_row("shifted down by 5") << -5 << 0.3 << 0.0 << 0.1;
    }
    void float16Fractions() {
        FETCH(int, shift);
        FETCH(double, underflow);
        FETCH(double, subnormal);
        FETCH(double, overflow);
        ExponentCounts c = with_exponents({{-25, 1}, {-20, 2}, {0, 4}, {15, 1}});
        c.bins[kHistogramZeroBin] = 1;
        c.bins[kHistogramNonFiniteBin] = 1;
        const Float16Fractions f = float16_fractions(c, shift);
        CHECK_EQ(f.total, std::int64_t{10});
        CHECK_EQ(f.zero, 0.1);
        CHECK_EQ(f.underflow, underflow);
        CHECK_EQ(f.subnormal, subnormal);
        CHECK_EQ(f.overflow, overflow);
    }
    void lossScaleShift_data() {
        add_column<double>("scale");
        add_column<int>("shift");
        add_column<bool>("exact");
        new_row("1") << 1.0 << 0 << true;
        new_row("2^15") << 32768.0 << 15 << true;
        new_row("2^-3") << 0.125 << -3 << true;
        new_row("1000") << 1000.0 << 10 << false;
    }
    void lossScaleShift() {
        FETCH(double, scale);
        FETCH(int, shift);
        FETCH(bool, exact);
        CHECK_EQ(loss_scale_shift(scale), shift);
        CHECK_EQ(loss_scale_is_power_of_two(scale), exact);
    }
    void metricsRecord() {
        TempDir dir;
        const std::string path = dir.file("run.jsonl");
        GradientHistogram h;
        {
            CpuBackend backend;
            Trainer trainer(experiment("mixed_float16"), data(), backend);
            h = trainer.gradient_histogram(0);
            MetricsJsonlWriter writer(path);
            writer.write_histogram(h);
        }
        std::ifstream in(path);
        std::string line;
        CHECK(std::getline(in, line));
        const nlohmann::json o = nlohmann::json::parse(line);
        CHECK_EQ(o["type"].get<std::string>(), std::string("histogram"));
        CHECK_EQ(o["step"].get<std::int64_t>(), std::int64_t{1});
        CHECK_EQ(o["loss_scale"].get<double>(), 32768.0);
        CHECK_EQ(o["bins"]["min_exponent"].get<int>(), kHistogramMinExp);
        const nlohmann::json& layers = o["layers"];
        CHECK_EQ(layers.size(), 3);
        CHECK_EQ(layers[0]["name"].get<std::string>(), h.layers[0].layer);
        const nlohmann::json& weight = layers[2]["weight"];
        CHECK_EQ(weight.size(), kHistogramBins);
        for (int b = 0; b < kHistogramBins; ++b)
            CHECK_EQ(weight[static_cast<std::size_t>(b)].get<std::int64_t>(),
                     h.layers[2].weight.bins[static_cast<std::size_t>(b)]);
        CHECK_EQ(o["all"]["activation"].size(), kHistogramBins);
    }
};

MANTISSA_TEST_MAIN(TestGradientHistogram, everyLayerWithAGradient,
                   histogramIsOfTheComingStepsScaledGradients, histogramLeavesTheRunUnchanged,
                   cadence, float16Fractions, lossScaleShift, metricsRecord)
