// The gradient histograms of the teaching lab: the probe finds every layer's gradients, the
// unscaled view is an exact shift for power-of-two scales, the trainer's cadence and the JSONL
// record.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <fstream>

#include "core/backend/cpu/cpu_backend.h"
#include "core/data/synthetic_mnist.h"
#include "core/records/metrics_jsonl.h"
#include "core/train/gradient_histogram.h"
#include "core/train/trainer.h"
#include "tests/test_support.h"

using namespace mantissa;
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

class TestGradientHistogram : public QObject {
    Q_OBJECT

private slots:
    void everyLayerWithAGradient_data() {
        QTest::addColumn<QString>("policy");
        QTest::newRow("float32") << "float32";
        QTest::newRow("mixed_float16") << "mixed_float16";
        QTest::newRow("float16") << "float16";
    }
    void everyLayerWithAGradient() {
        QFETCH(QString, policy);
        CpuBackend backend;
        Trainer trainer(experiment(policy.toUtf8().constData()), data(), backend);
        const GradientHistogram h = trainer.gradient_histogram(0);
        QCOMPARE(h.step, std::int64_t{1});
        // mlp-small: flatten (no gradient), three Dense layers, the fused float32 softmax.
        QCOMPARE(int(h.layers.size()), 3);
        const std::int64_t units[] = {128, 128, 10};
        const std::int64_t inputs[] = {784, 128, 128};
        for (int i = 0; i < 3; ++i) {
            const LayerGradientHistogram& l = h.layers[static_cast<std::size_t>(i)];
            QVERIFY(l.has_weights);
            QCOMPARE(l.activation.total(), 64 * units[i]);
            QCOMPARE(l.weight.total(), inputs[i] * units[i] + units[i]); // kernel + bias
        }
        QCOMPARE(h.all_activation.total(), 64 * (128 + 128 + 10));
        ExponentCounts sum;
        for (const auto& l : h.layers) sum += l.weight;
        QVERIFY(sum == h.all_weight);
    }
    void histogramIsOfTheComingStepsScaledGradients() {
        // float32 has room for every scale used here, so a power-of-two scale moves every
        // gradient's exponent exactly: the unscaled view of a scaled run is the unscaled run.
        CpuBackend b1, b2;
        Trainer plain(experiment("float32", fixed(1.0)), data(), b1);
        Trainer scaled(experiment("float32", fixed(1024.0)), data(), b2);
        const GradientHistogram a = plain.gradient_histogram(0);
        const GradientHistogram s = scaled.gradient_histogram(0);
        QCOMPARE(s.loss_scale, 1024.0);
        QCOMPARE(loss_scale_shift(s.loss_scale), 10);
        for (int e = -60; e <= 30; ++e) {
            QCOMPARE(s.all_weight.at_exponent(e + 10), a.all_weight.at_exponent(e));
            QCOMPARE(s.all_activation.at_exponent(e + 10), a.all_activation.at_exponent(e));
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
        QCOMPARE(with, 8);
        QCOMPARE(without, 0);
        QCOMPARE(a, b);
    }
    void cadence_data() {
        QTest::addColumn<int>("every");
        QTest::addColumn<QList<qint64>>("steps");
        QTest::newRow("every 5") << 5 << QList<qint64>{1, 6, 11};
        QTest::newRow("every 50") << 50 << QList<qint64>{1};
        QTest::newRow("off") << 0 << QList<qint64>{};
    }
    void cadence() {
        QFETCH(int, every);
        QFETCH(QList<qint64>, steps);
        Experiment e = experiment("float32");
        e.epochs = 2; // 8 steps an epoch on this data
        e.max_steps = 12;
        e.histogram_every = every;
        CpuBackend backend;
        Trainer trainer(e, data(), backend);
        TrainControl control;
        QList<qint64> seen;
        TrainerCallbacks callbacks;
        callbacks.on_histogram = [&](const GradientHistogram& h) { seen << h.step; };
        trainer.run(control, callbacks);
        QCOMPARE(seen, steps);
    }
    void float16Fractions_data() {
        QTest::addColumn<int>("shift");
        QTest::addColumn<double>("underflow");
        QTest::addColumn<double>("subnormal");
        QTest::addColumn<double>("overflow");
        // 1 zero, 1 at 2^-25, 2 at 2^-20, 4 at 2^0, 1 at 2^15, 1 inf: 10 values.
        QTest::newRow("as computed") << 0 << 0.1 << 0.2 << 0.1;
        QTest::newRow("shifted up by 1") << 1 << 0.0 << 0.3 << 0.2;
        QTest::newRow("shifted down by 5") << -5 << 0.3 << 0.0 << 0.1;
    }
    void float16Fractions() {
        QFETCH(int, shift);
        QFETCH(double, underflow);
        QFETCH(double, subnormal);
        QFETCH(double, overflow);
        ExponentCounts c = with_exponents({{-25, 1}, {-20, 2}, {0, 4}, {15, 1}});
        c.bins[kHistogramZeroBin] = 1;
        c.bins[kHistogramNonFiniteBin] = 1;
        const Float16Fractions f = float16_fractions(c, shift);
        QCOMPARE(f.total, std::int64_t{10});
        QCOMPARE(f.zero, 0.1);
        QCOMPARE(f.underflow, underflow);
        QCOMPARE(f.subnormal, subnormal);
        QCOMPARE(f.overflow, overflow);
    }
    void lossScaleShift_data() {
        QTest::addColumn<double>("scale");
        QTest::addColumn<int>("shift");
        QTest::addColumn<bool>("exact");
        QTest::newRow("1") << 1.0 << 0 << true;
        QTest::newRow("2^15") << 32768.0 << 15 << true;
        QTest::newRow("2^-3") << 0.125 << -3 << true;
        QTest::newRow("1000") << 1000.0 << 10 << false;
    }
    void lossScaleShift() {
        QFETCH(double, scale);
        QFETCH(int, shift);
        QFETCH(bool, exact);
        QCOMPARE(loss_scale_shift(scale), shift);
        QCOMPARE(loss_scale_is_power_of_two(scale), exact);
    }
    void metricsRecord() {
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/run.jsonl").toStdString();
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
        QVERIFY(std::getline(in, line));
        const QJsonObject o = QJsonDocument::fromJson(QByteArray::fromStdString(line)).object();
        QCOMPARE(o["type"].toString(), QString("histogram"));
        QCOMPARE(o["step"].toInteger(), qint64{1});
        QCOMPARE(o["loss_scale"].toDouble(), 32768.0);
        QCOMPARE(o["bins"].toObject()["min_exponent"].toInt(), kHistogramMinExp);
        const QJsonArray layers = o["layers"].toArray();
        QCOMPARE(layers.size(), 3);
        QCOMPARE(layers[0].toObject()["name"].toString(),
                 QString::fromStdString(h.layers[0].layer));
        const QJsonArray weight = layers[2].toObject()["weight"].toArray();
        QCOMPARE(weight.size(), kHistogramBins);
        for (int b = 0; b < kHistogramBins; ++b)
            QCOMPARE(weight[b].toInteger(), h.layers[2].weight.bins[static_cast<std::size_t>(b)]);
        QCOMPARE(o["all"].toObject()["activation"].toArray().size(), kHistogramBins);
    }
};

QTEST_GUILESS_MAIN(TestGradientHistogram)
#include "tst_gradient_histogram.moc"
