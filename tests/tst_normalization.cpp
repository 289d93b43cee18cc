// BatchNormalization and LayerNormalization beyond the op-case table and the gradient checks:
// the 16-bit statistics exactly as a direct transcription of Backend's NormArgs formulas computes
// them (with core/numeric/float_format's encoder, not the engine's conversions), where a plan
// keeps its float32 statistics, training against inference behaviour, the moving statistics in
// the weights, and the errors a bad layer gets.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/data/synthetic_mnist.h"
#include "core/nn/model.h"
#include "core/numeric/float_format.h"
#include "core/plan/compile.h"
#include "core/plan/plan_weights.h"
#include "tests/host_tensor.h"
#include "tests/test_support.h"
#include "tests/unit/error_of.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::test;
using mantissa::unit::error_of;

namespace {

// The contract's S(v): one rounding of a float32 value to the statistics dtype.
float s_round(float v, DType s) {
    return static_cast<float>(round_to_dtype(static_cast<double>(v), s));
}

struct Columns {
    std::vector<float> mean, var, inv_std;
};

// BatchNormalization's training statistics per column, transcribed from backend.h (float32
// arithmetic, sums in row order over the valid rows).
Columns batch_statistics(const std::vector<double>& x, int rows, int cols, int valid, DType s,
                         float epsilon) {
    Columns c;
    for (int j = 0; j < cols; ++j) {
        float sum = 0;
        for (int r = 0; r < valid; ++r) sum += static_cast<float>(x[r * cols + j]);
        const float mean = s_round(sum / static_cast<float>(valid), s);
        float squares = 0;
        for (int r = 0; r < valid; ++r) {
            const float d = s_round(static_cast<float>(x[r * cols + j]) - mean, s);
            squares += s_round(d * d, s);
        }
        const float var = s_round(squares / static_cast<float>(valid), s);
        c.mean.push_back(mean);
        c.var.push_back(var);
        c.inv_std.push_back(s_round(1.0f / std::sqrt(var + epsilon), s));
    }
    (void)rows;
    return c;
}

// NormArgs over host tensors (nullptr: left out); epsilon and momentum keep their defaults.
NormArgs host_args(int rows, int cols, int valid, HostTensor& x, HostTensor& gamma,
                   HostTensor& beta, HostTensor& y, HostTensor& mean, HostTensor& inv_std,
                   HostTensor* moving_mean = nullptr, HostTensor* moving_variance = nullptr) {
    NormArgs a;
    a.rows = rows;
    a.cols = cols;
    a.valid_rows = valid;
    a.x = &x.tensor;
    a.gamma = &gamma.tensor;
    a.beta = &beta.tensor;
    a.y = &y.tensor;
    a.mean = &mean.tensor;
    a.inv_std = &inv_std.tensor;
    a.moving_mean = moving_mean ? &moving_mean->tensor : nullptr;
    a.moving_variance = moving_variance ? &moving_variance->tensor : nullptr;
    return a;
}

std::vector<double> as_double(const std::vector<float>& v) {
    return {v.begin(), v.end()};
}

// Bit-exact equality, NaN equal to NaN.
void check_same(const std::vector<double>& got, const std::vector<double>& want,
                const std::string& what) {
    CHECK_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size() && i < want.size(); ++i)
        CHECK_MSG(got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i])),
                  (what + "[" + std::to_string(i) + "]: engine " + std::to_string(got[i]) +
                   ", transcription " + std::to_string(want[i])));
}

// A model's compiled plan on the CPU engine with its first `count` synthetic examples as a batch.
struct Trained {
    CpuBackend backend;
    std::unique_ptr<Plan> plan;
    std::unique_ptr<DeviceSplit> data;
    RunContext ctx;

    Trained(const ModelSpec& spec, const std::string& policy_name, std::int64_t batch) {
        const Policy policy = policy_from_name(policy_name);
        Model model(spec, policy);
        CompileOptions options;
        options.policy = policy;
        options.batch_size = batch;
        options.optimizer = optimizer_defaults(OptimizerType::SGD);
        plan = compile(model, options, backend);
        plan->initialize(backend, 3);
        data = std::make_unique<DeviceSplit>(backend, synthetic_mnist_split(batch, 4));
        ctx.batch = data->batch(0, batch);
    }
    const Tensor& named(const std::string& name) const {
        for (const Tensor& t : plan->tensors)
            if (t.name == name) return t;
        throw Error(ErrorKind::Internal, "no tensor " + name);
    }
    std::vector<double> values(const std::string& name) {
        const Tensor& t = named(name);
        std::vector<double> raw(static_cast<std::size_t>(t.numel()));
        std::vector<unsigned char> bytes(t.bytes());
        backend.download(t, bytes.data());
        convert_to_double(bytes.data(), t.dtype, raw.data(), raw.size());
        return raw;
    }
};

} // namespace

class TestNormalization {
public:
    // Float16 statistics as the lesson describes them: a column of activations around ±300
    // squares past float16's 65504, so its variance is inf, 1/sqrt(inf) = 0 and every output is
    // beta; a column near 1000 with a spread of 0.25 loses its spread to float16's 0.5 spacing
    // there. Every value exactly as the transcription computes it.
    void batchNormFloat16StatisticsExactly() {
        const int rows = 6, cols = 3, valid = 5;
        std::vector<double> x;
        for (int r = 0; r < rows; ++r) {
            x.push_back(0.1 * r - 0.2);
            x.push_back(r % 2 ? 300.0 + r : -300.0 - r);
            x.push_back(1000.0 + 0.25 * r);
        }
        CpuBackend be;
        const DType s = DType::Float16;
        HostTensor hx(DType::Float16, x, "x"), gamma(s, {1.5, 0.5, 2.0}, "gamma"),
            beta(s, {0.25, -1.0, 0.5}, "beta"), y(DType::Float16, std::vector<double>(18), "y"),
            mean(s, {0, 0, 0}, "mean"), inv(s, {0, 0, 0}, "inv_std"),
            mm(s, {0.5, 0.5, 0.5}, "moving_mean"), mv(s, {2, 2, 2}, "moving_variance");
        const NormArgs a = host_args(rows, cols, valid, hx, gamma, beta, y, mean, inv, &mm, &mv);
        CHECK(a.epsilon == 1e-3 && a.momentum == 0.99); // Keras's defaults, which the text uses
        be.batch_norm_forward(a);

        const std::vector<double> xs = hx.values(); // x as float16 stored it
        const Columns c = batch_statistics(xs, rows, cols, valid, s, 1e-3f);
        check_same(mean.values(), as_double(c.mean), "mean");
        check_same(inv.values(), as_double(c.inv_std), "inv_std");
        std::vector<double> want_y, want_mm, want_mv;
        const std::vector<double> g = gamma.values(), b = beta.values();
        for (int r = 0; r < rows; ++r)
            for (int j = 0; j < cols; ++j) {
                const float xhat = s_round(
                    s_round(static_cast<float>(xs[r * cols + j]) - c.mean[j], s) * c.inv_std[j], s);
                want_y.push_back(round_to_dtype(
                    static_cast<double>(static_cast<float>(g[j]) * xhat + static_cast<float>(b[j])),
                    DType::Float16));
            }
        const float keep = 0.99f, take = static_cast<float>(1.0 - 0.99);
        for (int j = 0; j < cols; ++j) {
            want_mm.push_back(s_round(0.5f * keep + c.mean[j] * take, s));
            want_mv.push_back(s_round(2.0f * keep + c.var[j] * take, s));
        }
        check_same(y.values(), want_y, "y");
        check_same(mm.values(), want_mm, "moving_mean");
        check_same(mv.values(), want_mv, "moving_variance");
        // What the lesson reads off: the ±300 column's variance overflowed, so it outputs beta.
        CHECK(std::isinf(c.var[1]));
        CHECK_EQ(inv.values()[1], 0.0);
        for (int r = 0; r < rows; ++r) CHECK_EQ(y.values()[r * cols + 1], -1.0);
        CHECK(std::isinf(mv.values()[1]));
        // The column near 1000: float16 holds x to 0.5 there, so the 0.25 steps collapse.
        CHECK(c.var[2] < 0.25f);
    }

    // The backward pass from the saved float16 statistics, transcribed (sums in float32, dx, dγ
    // and dβ rounded once); padding rows get dx = 0.
    void batchNormBackwardFromFloat16StatisticsExactly() {
        const int rows = 5, cols = 2, valid = 4;
        std::vector<double> x, dy;
        for (int i = 0; i < rows * cols; ++i) {
            x.push_back(std::sin(1.7 * i) * 3.0 + 1.0);
            dy.push_back(std::cos(0.9 * i));
        }
        const DType s = DType::Float16;
        CpuBackend be;
        HostTensor hx(DType::Float16, x, "x"), hdy(DType::Float16, dy, "dy"),
            gamma(s, {1.25, -0.75}, "gamma"), beta(s, {0, 0}, "beta"),
            y(DType::Float16, std::vector<double>(10), "y"), mean(s, {0, 0}, "mean"),
            inv(s, {0, 0}, "inv_std"), mm(s, {0, 0}, "mm"), mv(s, {1, 1}, "mv"),
            dx(DType::Float16, std::vector<double>(10, 7.0), "dx"), dg(s, {0, 0}, "dgamma"),
            db(s, {0, 0}, "dbeta");
        const NormArgs a = host_args(rows, cols, valid, hx, gamma, beta, y, mean, inv, &mm, &mv);
        be.batch_norm_forward(a);
        be.batch_norm_backward(a, hdy.tensor, dx.tensor, dg.tensor, db.tensor);

        const std::vector<double> xs = hx.values(), dys = hdy.values(), g = gamma.values();
        const std::vector<double> m = mean.values(), iv = inv.values();
        std::vector<double> want_dx(rows * cols, 0.0), want_dg, want_db;
        for (int j = 0; j < cols; ++j) {
            const float mj = static_cast<float>(m[j]), ij = static_cast<float>(iv[j]);
            auto xhat = [&](int r) {
                return s_round(s_round(static_cast<float>(xs[r * cols + j]) - mj, s) * ij, s);
            };
            float sum_dy = 0, sum_dyx = 0;
            for (int r = 0; r < valid; ++r) {
                sum_dy += static_cast<float>(dys[r * cols + j]);
                sum_dyx += static_cast<float>(dys[r * cols + j]) * xhat(r);
            }
            const float n = static_cast<float>(valid);
            for (int r = 0; r < valid; ++r)
                want_dx[r * cols + j] =
                    round_to_dtype(static_cast<double>(static_cast<float>(g[j]) * ij / n *
                                                       (n * static_cast<float>(dys[r * cols + j]) -
                                                        sum_dy - xhat(r) * sum_dyx)),
                                   DType::Float16);
            want_dg.push_back(round_to_dtype(sum_dyx, s));
            want_db.push_back(round_to_dtype(sum_dy, s));
        }
        check_same(dx.values(), want_dx, "dx");
        check_same(dg.values(), want_dg, "dgamma");
        check_same(db.values(), want_db, "dbeta");
    }

    // LayerNormalization with float16 statistics, per row over the columns.
    void layerNormFloat16StatisticsExactly() {
        const int rows = 3, cols = 5;
        std::vector<double> x;
        for (int i = 0; i < rows * cols; ++i) x.push_back(std::sin(2.3 * i) * (i < 5 ? 400 : 2));
        const DType s = DType::Float16;
        CpuBackend be;
        HostTensor hx(DType::Float16, x, "x"), gamma(s, {1, 2, 0.5, -1, 1.5}, "gamma"),
            beta(s, {0.1, 0.2, 0.3, 0.4, 0.5}, "beta"),
            y(DType::Float16, std::vector<double>(15), "y"), mean(s, {0, 0, 0}, "mean"),
            inv(s, {0, 0, 0}, "inv_std");
        be.layer_norm_forward(host_args(rows, cols, rows, hx, gamma, beta, y, mean, inv));
        const std::vector<double> xs = hx.values(), g = gamma.values(), b = beta.values();
        std::vector<double> want_y, want_mean, want_inv;
        for (int r = 0; r < rows; ++r) {
            float sum = 0;
            for (int j = 0; j < cols; ++j) sum += static_cast<float>(xs[r * cols + j]);
            const float m = s_round(sum / cols, s);
            float squares = 0;
            for (int j = 0; j < cols; ++j) {
                const float d = s_round(static_cast<float>(xs[r * cols + j]) - m, s);
                squares += s_round(d * d, s);
            }
            const float iv = s_round(1.0f / std::sqrt(s_round(squares / cols, s) + 1e-3f), s);
            want_mean.push_back(m);
            want_inv.push_back(iv);
            for (int j = 0; j < cols; ++j) {
                const float xhat =
                    s_round(s_round(static_cast<float>(xs[r * cols + j]) - m, s) * iv, s);
                want_y.push_back(round_to_dtype(
                    static_cast<double>(static_cast<float>(g[j]) * xhat + static_cast<float>(b[j])),
                    DType::Float16));
            }
        }
        check_same(mean.values(), want_mean, "mean");
        check_same(inv.values(), want_inv, "inv_std");
        check_same(y.values(), want_y, "y");
        CHECK_EQ(inv.values()[0], 0.0); // the first row's ±400 overflows its variance
    }

    // Under mixed_float16 the statistics, gamma, beta and moving statistics are float32 (Keras's
    // rule) and the Plan says so; a per-layer float16 policy makes them float16.
    void planKeepsFloat32StatisticsUnderMixedPolicies() {
        ModelSpec spec;
        spec.layers = {flatten(), dense(16), batchnorm(), dense(16), layernorm(), dense(10)};
        Trained mixed(spec, "mixed_float16", 8);
        CHECK_EQ(mixed.named("batch_normalization_1/moving_mean").dtype, DType::Float32);
        CHECK_EQ(mixed.named("batch_normalization_1/moving_mean").category, MemCategory::Master);
        CHECK_EQ(mixed.named("batch_normalization_1/gamma").dtype, DType::Float32);
        CHECK_EQ(mixed.named("batch_normalization_1/mean").dtype, DType::Float32);
        CHECK_EQ(mixed.named("layer_normalization_1/inv_std").dtype, DType::Float32);
        CHECK_EQ(mixed.named("batch_normalization_1/output").dtype, DType::Float16);
        int noted = 0;
        for (const PlanStep& step : mixed.plan->steps)
            if (step.op.find("(float32 statistics)") != std::string::npos) ++noted;
        CHECK_EQ(noted, 4); // both layers, forward and backward
        CHECK_EQ(mixed.plan->state.size(), std::size_t{2});

        spec.layers[2].dtype = "float16";
        Trained forced(spec, "mixed_float16", 8);
        CHECK_EQ(forced.named("batch_normalization_1/moving_variance").dtype, DType::Float16);
        CHECK_EQ(forced.named("batch_normalization_1/mean").dtype, DType::Float16);
        for (const PlanStep& step : forced.plan->steps)
            if (step.layer == "batch_normalization_1")
                CHECK_MSG(step.op.find("statistics") == std::string::npos, step.op.c_str());
    }

    // Training normalizes with the batch's statistics and moves the moving ones; evaluation uses
    // the moving ones, and reading the weights returns them.
    void trainingAgainstInference() {
        ModelSpec spec;
        spec.layers = {flatten(), dense(6), batchnorm(0.5, 1e-3), dense(10)};
        Trained t(spec, "float64", 8);
        t.ctx.training = true;
        t.plan->forward_backward(t.backend, t.ctx);
        const std::vector<double> z = t.values("dense_1/output");
        const std::vector<double> mean = t.values("batch_normalization_1/mean");
        const std::vector<double> mm = t.values("batch_normalization_1/moving_mean");
        const std::vector<double> mv = t.values("batch_normalization_1/moving_variance");
        for (int j = 0; j < 6; ++j) {
            double sum = 0, squares = 0;
            for (int r = 0; r < 8; ++r) sum += z[r * 6 + j];
            const double m = sum / 8;
            for (int r = 0; r < 8; ++r) squares += (z[r * 6 + j] - m) * (z[r * 6 + j] - m);
            CHECK(std::fabs(mean[j] - m) <= 1e-12 * (1 + std::fabs(m)));
            CHECK(std::fabs(mm[j] - 0.5 * m) <= 1e-12 * (1 + std::fabs(m)));
            CHECK(std::fabs(mv[j] - (0.5 + 0.5 * squares / 8)) <= 1e-12 * (1 + squares));
        }
        // Evaluation: y = x̂·γ + β with the moving statistics (γ = 1, β = 0 untrained).
        t.ctx.training = false;
        t.plan->eval_batch(t.backend, t.ctx);
        const std::vector<double> z2 = t.values("dense_1/output");
        const std::vector<double> y = t.values("batch_normalization_1/output");
        for (int r = 0; r < 8; ++r)
            for (int j = 0; j < 6; ++j) {
                const double want = (z2[r * 6 + j] - mm[j]) / std::sqrt(mv[j] + 1e-3);
                CHECK(std::fabs(y[r * 6 + j] - want) <= 1e-12 * (1 + std::fabs(want)));
            }
        CHECK(t.values("batch_normalization_1/moving_mean") == mm); // evaluation moves nothing

        const ModelWeights w = read_model_weights(*t.plan, t.backend);
        std::vector<std::string> names;
        for (const WeightTensor& wt : w.tensors) names.push_back(wt.name);
        CHECK((names == std::vector<std::string>{
                            "dense_1.kernel", "dense_1.bias", "batch_normalization_1.gamma",
                            "batch_normalization_1.beta", "dense_2.kernel", "dense_2.bias",
                            "batch_normalization_1.moving_mean",
                            "batch_normalization_1.moving_variance"}));
        // Loaded into a fresh plan, the moving statistics come back.
        Trained fresh(spec, "float64", 8);
        load_model_weights(*fresh.plan, fresh.backend, w, "weights.safetensors");
        CHECK(fresh.values("batch_normalization_1/moving_variance") == mv);
        ModelWeights missing = w;
        missing.tensors.pop_back();
        const std::string msg =
            error_of([&] { load_model_weights(*fresh.plan, fresh.backend, missing, "w.npz"); },
                     ErrorKind::Config);
        CHECK_MSG(msg.find("'batch_normalization_1.moving_variance' is missing") !=
                      std::string::npos,
                  msg.c_str());
    }

    // A rank the layers do not take and a bad momentum are errors naming the layer.
    void badLayersNameThemselves() {
        ModelSpec spec;
        spec.input = {28, 28};
        spec.layers = {batchnorm(), flatten(), dense(10)};
        const ModelAnalysis a = Model(spec, policy_from_name("float32")).analyze();
        CHECK_EQ(a.error_layer, 0);
        CHECK_MSG(a.error.find("layer 'batch_normalization_1' (BatchNormalization)") !=
                          std::string::npos &&
                      a.error.find("normalizes over the last axis") != std::string::npos,
                  a.error.c_str());
        spec.input = {28, 28, 1};
        spec.layers = {batchnorm(1.0), flatten(), dense(10)};
        const ModelAnalysis b = Model(spec, policy_from_name("float32")).analyze();
        CHECK_MSG(b.error.find("momentum") != std::string::npos, b.error.c_str());
        spec.layers = {layernorm(0.0), flatten(), dense(10)};
        const ModelAnalysis c = Model(spec, policy_from_name("float32")).analyze();
        CHECK_MSG(c.error.find("layer 'layer_normalization_1' (LayerNormalization)") !=
                          std::string::npos &&
                      c.error.find("epsilon > 0") != std::string::npos,
                  c.error.c_str());
    }
};

MANTISSA_TEST_MAIN(TestNormalization, batchNormFloat16StatisticsExactly,
                   batchNormBackwardFromFloat16StatisticsExactly, layerNormFloat16StatisticsExactly,
                   planKeepsFloat32StatisticsUnderMixedPolicies, trainingAgainstInference,
                   badLayersNameThemselves)
