// Divergence advice: for every policy and loss-scaling mode, the advice offers only remedies the
// run did not already have (no "try loss scaling" to a run with dynamic scaling, no "a mixed
// policy" to a mixed run) and always a lower learning rate, quoting the one it used.
#include <QtTest>

#include <string>

#include "core/numeric/policy.h"
#include "core/train/divergence_advice.h"

using namespace mantissa;

namespace {

// mlp-small's shape: Flatten, Dense, Dense(10), softmax; `softmax_dtype` empty: the global policy.
Experiment experiment(const std::string& policy, LossScaleMode mode,
                      const std::string& softmax_dtype = "float32") {
    Experiment e;
    e.policy = policy;
    e.loss_scale.mode = mode;
    e.loss_scale.initial = 32768;
    e.optimizer.learning_rate = 0.001;
    LayerSpec flatten, dense, out, softmax;
    flatten.type = LayerType::Flatten;
    dense.type = LayerType::Dense;
    dense.units = 64;
    out.type = LayerType::Dense;
    out.units = 10;
    softmax.type = LayerType::Activation;
    softmax.activation = Activation::Softmax;
    if (!softmax_dtype.empty()) softmax.dtype = softmax_dtype;
    e.model.input = {28, 28, 1};
    e.model.layers = {flatten, dense, out, softmax};
    return e;
}

int count(const QString& text, const QString& what) {
    return static_cast<int>(text.count(what));
}

} // namespace

class TestDivergenceAdvice : public QObject {
    Q_OBJECT

private slots:
    void everyPolicyAndScaling_data() {
        QTest::addColumn<QString>("policy");
        QTest::addColumn<int>("mode");
        for (const Policy& p : all_policies())
            for (LossScaleMode mode : {LossScaleMode::Auto, LossScaleMode::Dynamic,
                                       LossScaleMode::Fixed, LossScaleMode::None})
                QTest::addRow("%s, %s", p.name.c_str(), loss_scale_mode_name(mode))
                    << QString::fromStdString(p.name) << static_cast<int>(mode);
    }

    void everyPolicyAndScaling() {
        QFETCH(QString, policy);
        QFETCH(int, mode);
        const Policy p = policy_from_name(policy.toStdString());
        const auto m = static_cast<LossScaleMode>(mode);
        const QString advice =
            QString::fromStdString(divergence_advice(experiment(policy.toStdString(), m)));
        const bool f16 = p.compute == DType::Float16;
        // Auto means dynamic for float16 compute and none otherwise.
        const bool dynamic = f16 && (m == LossScaleMode::Dynamic || m == LossScaleMode::Auto);
        const bool pure = p.variable == DType::Float16 || p.variable == DType::BFloat16;

        QVERIFY2(advice.contains("It used " + policy), qPrintable(advice));
        // Loss scaling is offered exactly when float16 computes without dynamic scaling.
        QCOMPARE(advice.contains("Try dynamic loss scaling"), f16 && !dynamic);
        QCOMPARE(advice.contains("with dynamic loss scaling"), dynamic);
        // A mixed policy is offered exactly to the pure 16-bit policies.
        QCOMPARE(advice.contains("mixed_float16 (") || advice.contains("mixed_bfloat16 (float32 "
                                                                       "master"),
                 pure);
        // bfloat16's range is offered to mixed_float16 only.
        QCOMPARE(advice.contains("float32's range"), f16 && !pure);
        // Without 16-bit compute, the precision is not the cause.
        QCOMPARE(advice.contains("the precision is not the cause"),
                 p.compute != DType::Float16 && p.compute != DType::BFloat16);
        // Always the learning rate, once, with its value; never the old catch-all.
        QCOMPARE(count(advice, "learning rate"), 1);
        QVERIFY2(advice.contains("(now 0.001)"), qPrintable(advice));
        QVERIFY2(!advice.contains("mixed policy"), qPrintable(advice));
        QVERIFY2(!advice.contains("softmax"), qPrintable(advice)); // its softmax is float32
    }

    // Lesson 6: mixed_float16 with dynamic scaling and a float16 softmax. It already has loss
    // scaling and master weights; what is left is the softmax, the range and the learning rate.
    void lesson6_float16Softmax() {
        const std::string advice =
            divergence_advice(experiment("mixed_float16", LossScaleMode::Auto, ""));
        QCOMPARE(QString::fromStdString(advice),
                 QString("It used mixed_float16 with dynamic loss scaling. Try the final softmax "
                         "in float32 (its dtype), mixed_bfloat16 (float32's range in 16 bits) "
                         "or a lower learning rate (now 0.001)."));
    }

    // Lesson 1: a fixed scale of 2^24 overflows.
    void lesson1_fixedScale() {
        Experiment e = experiment("mixed_float16", LossScaleMode::Fixed);
        e.loss_scale.initial = 16777216;
        const QString advice = QString::fromStdString(divergence_advice(e));
        QVERIFY2(advice.startsWith("It used mixed_float16 with a fixed loss scale of 16777216."),
                 qPrintable(advice));
        QVERIFY2(advice.contains("Try dynamic loss scaling"), qPrintable(advice));
    }
};

QTEST_GUILESS_MAIN(TestDivergenceAdvice)
#include "tst_divergence_advice.moc"
