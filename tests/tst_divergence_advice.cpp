// Divergence advice: for every policy and loss-scaling mode, the advice offers only remedies the
// run did not already have (no "try loss scaling" to a run with dynamic scaling, no "a mixed
// policy" to a mixed run) and always a lower learning rate, quoting the one it used.

#include <string>

#include "core/numeric/policy.h"
#include "core/train/divergence_advice.h"
#include "tests/unit/files.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;

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

// Occurrences of `what` in `text`, overlapping ones included (QString::count's rule).
int count(const std::string& text, const std::string& what) {
    int n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

} // namespace

class TestDivergenceAdvice {
public:
    void everyPolicyAndScaling_data() {
        add_column<std::string>("policy");
        add_column<int>("mode");
        for (const Policy& p : all_policies())
            for (LossScaleMode mode : {LossScaleMode::Auto, LossScaleMode::Dynamic,
                                       LossScaleMode::Fixed, LossScaleMode::None})
                new_row(p.name + ", " + loss_scale_mode_name(mode))
                    << p.name << static_cast<int>(mode);
    }

    void everyPolicyAndScaling() {
        FETCH(std::string, policy);
        FETCH(int, mode);
        const Policy p = policy_from_name(policy);
        const auto m = static_cast<LossScaleMode>(mode);
        const std::string advice = divergence_advice(experiment(policy, m));
        const bool f16 = p.compute == DType::Float16;
        // Auto means dynamic for float16 compute and none otherwise.
        const bool dynamic = f16 && (m == LossScaleMode::Dynamic || m == LossScaleMode::Auto);
        const bool pure = p.variable == DType::Float16 || p.variable == DType::BFloat16;

        CHECK_MSG(contains(advice, "It used " + policy), advice);
        // Loss scaling is offered exactly when float16 computes without dynamic scaling.
        CHECK_EQ(contains(advice, "Try dynamic loss scaling"), f16 && !dynamic);
        CHECK_EQ(contains(advice, "with dynamic loss scaling"), dynamic);
        // A mixed policy is offered exactly to the pure 16-bit policies.
        CHECK_EQ(contains(advice, "mixed_float16 (") || contains(advice, "mixed_bfloat16 (float32 "
                                                                         "master"),
                 pure);
        // bfloat16's range is offered to mixed_float16 only.
        CHECK_EQ(contains(advice, "float32's range"), f16 && !pure);
        // Without 16-bit compute, the precision is not the cause.
        CHECK_EQ(contains(advice, "the precision is not the cause"),
                 p.compute != DType::Float16 && p.compute != DType::BFloat16);
        // Always the learning rate, once, with its value; never the old catch-all.
        CHECK_EQ(count(advice, "learning rate"), 1);
        CHECK_MSG(contains(advice, "(now 0.001)"), advice);
        CHECK_MSG(!contains(advice, "mixed policy"), advice);
        CHECK_MSG(!contains(advice, "softmax"), advice); // its softmax is float32
    }

    // Lesson 6: mixed_float16 with dynamic scaling and a float16 softmax. It already has loss
    // scaling and master weights; what is left is the softmax, the range and the learning rate.
    void lesson6_float16Softmax() {
        const std::string advice =
            divergence_advice(experiment("mixed_float16", LossScaleMode::Auto, ""));
        CHECK_EQ(
            advice,
            std::string("It used mixed_float16 with dynamic loss scaling. Try the final softmax "
                        "in float32 (its dtype), mixed_bfloat16 (float32's range in 16 bits) "
                        "or a lower learning rate (now 0.001)."));
    }

    // Lesson 1: a fixed scale of 2^24 overflows.
    void lesson1_fixedScale() {
        Experiment e = experiment("mixed_float16", LossScaleMode::Fixed);
        e.loss_scale.initial = 16777216;
        const std::string advice = divergence_advice(e);
        CHECK_MSG(advice.starts_with("It used mixed_float16 with a fixed loss scale of 16777216."),
                  (advice));
        CHECK_MSG(contains(advice, "Try dynamic loss scaling"), advice);
    }

    // The classic lab (issue 27): pure float16 with tf.keras 2.x's RMSprop, epsilon outside the
    // root. The convention is offered to RMSprop with epsilon outside only, and only when pure.
    void classicLab_epsilonOutsideTheRoot() {
        Experiment e = experiment("float16", LossScaleMode::None);
        e.optimizer.convention = OptimizerConvention::TfKeras2;
        const std::string advice = divergence_advice(e);
        CHECK_EQ(advice,
                 std::string("It used float16 without loss scaling. Try dynamic loss scaling "
                             "(Settings › Loss scaling), mixed_float16 (float32 master weights "
                             "and optimizer state), the keras optimizer convention (this run's "
                             "tf_keras_2 RMSprop adds epsilon after the square root: a velocity "
                             "that underflows to 0 leaves the update lr*g/epsilon) or a lower "
                             "learning rate (now 0.001)."));
        e.optimizer.momentum = 0.5; // ApplyRMSProp: epsilon inside
        CHECK(!contains(divergence_advice(e), "convention"));
        e.optimizer.momentum = 0.0;
        e.optimizer.convention = OptimizerConvention::PyTorch;
        CHECK(contains(divergence_advice(e), "this run's pytorch RMSprop"));
        e.policy = "mixed_float16";
        CHECK(!contains(divergence_advice(e), "convention"));
        e.policy = "float16";
        e.optimizer.convention = OptimizerConvention::Keras;
        CHECK(!contains(divergence_advice(e), "convention"));
    }
};

MANTISSA_TEST_MAIN(TestDivergenceAdvice, everyPolicyAndScaling, lesson6_float16Softmax,
                   lesson1_fixedScale, classicLab_epsilonOutsideTheRoot)
