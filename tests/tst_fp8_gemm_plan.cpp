// Per-tensor FP8 recipes on FP8 GEMMs (issue 18, recipe.gemm): the Dense lowering onto float8
// codes in cuBLASLt's TN layout (row-wise and transposed copies of the same codes, one decode
// scale each), at every size (a 10-unit layer too: the CUDA engine pads), the codes' exactness
// against fake quantisation (code · scale_inv is the fake-quantised value, bit for bit), training
// that follows the fake-quantised run, recipe.gemm's resolution against the engine, and the errors.
// The CPU engine emulates the FP8 GEMM (codes multiplied, scales after the float32 sum), so the
// lowering the CUDA engine takes on sm_89+ runs here too.

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/data/synthetic_mnist.h"
#include "core/error.h"
#include "core/nn/model.h"
#include "core/numeric/convert.h"
#include "core/numeric/element_format.h"
#include "core/numeric/policy.h"
#include "core/numeric/tensor_quant.h"
#include "core/plan/compile.h"
#include "core/plan/fp8_lowering.h"
#include "core/train/experiment.h"
#include "core/train/trainer.h"
#include "tests/ops/forwarding_backend.h"
#include "tests/plan_steps.h"
#include "tests/test_support.h"
#include "tests/unit/error_of.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;
using namespace mantissa::test;

namespace {

// An engine that says it has FP8 hardware (as the CUDA engine on sm_89+ does) and runs every op
// on the CPU engine: recipe.gemm "auto" lowers onto FP8 GEMMs there.
class NativeFp8 final : public ForwardingBackend {
public:
    using ForwardingBackend::ForwardingBackend;
    bool supports_fake_quantize() const override { return true; }
    void fake_quantize(const FakeQuantArgs& a) override { m_inner.fake_quantize(a); }
    bool supports_fp8_gemm() const override { return true; }
    bool native_fp8_gemm() const override { return true; }
    void quantize_fp8(const Fp8QuantArgs& a) override { m_inner.quantize_fp8(a); }
};

// An engine that quantises but has no FP8 GEMM.
class NoFp8Gemm final : public ForwardingBackend {
public:
    using ForwardingBackend::ForwardingBackend;
    bool supports_fake_quantize() const override { return true; }
    void fake_quantize(const FakeQuantArgs& a) override { m_inner.fake_quantize(a); }
};

Policy fp8_policy(const std::string& gemm, const std::string& kind = "delayed") {
    RecipeOptions o;
    o.kind = kind;
    o.gemm = gemm;
    return policy_with_recipe("mixed_float8", o);
}

// 48 -> Dense 32 (relu) -> Dense 10, batch 16: the first layer's sizes are multiples of 16, the
// second's 10 units are not (cuBLASLt's FP8 rule, which the CUDA engine meets by padding).
std::unique_ptr<Plan> mlp_plan(Backend& be, const Policy& policy, bool fp8_gemm,
                               std::unique_ptr<Model>& model) {
    ModelSpec spec;
    spec.input = {48};
    spec.layers = {dense(32, Activation::Relu), dense(10)};
    model = std::make_unique<Model>(spec, policy);
    CompileOptions options;
    options.policy = policy;
    options.batch_size = 16;
    options.fp8_gemm = fp8_gemm;
    auto plan = compile(*model, options, be);
    plan->initialize(be, 7);
    return plan;
}

bool has_step(const Plan& plan, const std::string& layer, const std::string& op) {
    for (const PlanStep& s : plan.steps)
        if (s.layer == layer && s.op.starts_with(op)) return true;
    return false;
}

std::vector<double> download_doubles(Backend& be, const Tensor& t) {
    std::vector<unsigned char> bytes(t.bytes());
    be.download(t, bytes.data());
    std::vector<double> out(static_cast<std::size_t>(t.numel()));
    convert_to_double(bytes.data(), t.dtype, out.data(), out.size());
    return out;
}

std::vector<float> input_values() {
    std::vector<float> x(16 * 48);
    for (std::size_t i = 0; i < x.size(); ++i)
        x[i] = static_cast<float>(std::sin(0.61 * static_cast<double>(i)) * 3.0);
    x[5] = 11.0f; // sets the tensor's amax
    return x;
}

std::uint64_t bits_of(double v) {
    std::uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
}

class TestFp8GemmPlan {
public:
    void lowersDenseOntoCodes() {
        CpuBackend cpu;
        std::unique_ptr<Model> model;
        auto plan = mlp_plan(cpu, fp8_policy("fp8"), true, model);
        // dense_1 (48 -> 32, batch 16): codes, FP8 GEMMs, no float32 copies.
        CHECK(has_step(*plan, "dense_1", "quantize activation to FP8 codes and transposed"));
        CHECK(has_step(*plan, "dense_1", "quantize weight to FP8 codes transposed"));
        // Delayed scaling: dZ's codes come from the step that forms dZ and db (one pass on the
        // CUDA engine, which never stores dZ), so no quantise step of its own.
        CHECK(has_step(*plan, "dense_1",
                       "drelu+bias_grad, quantize gradient to FP8 codes transposed"));
        CHECK(!has_step(*plan, "dense_1", "quantize gradient"));
        CHECK(has_step(*plan, "dense_1", "fp8 gemm+bias+relu"));
        CHECK(has_step(*plan, "dense_1", "fp8 gemm dW"));
        CHECK(!has_step(*plan, "dense_1", "fp8 gemm dX")); // the first layer computes no dX
        // X row-wise for the forward, Xᵀ for dW (TN: both contiguous along the reduction).
        const Tensor& x = find_tensor(*plan, "input:bfloat16:fp8");
        CHECK_EQ(x.dtype, DType::Float8E4M3);
        CHECK_EQ(x.shape, (Shape{16, 48}));
        CHECK_EQ(find_tensor(*plan, "input:bfloat16:fp8 transposed").shape, (Shape{48, 16}));
        // Wᵀ (units, in) for the forward; the weight is cast from its float32 master.
        const Tensor& wt = find_tensor(*plan, "dense_1/kernel:fp8 transposed");
        CHECK_EQ(wt.dtype, DType::Float8E4M3);
        CHECK_EQ(wt.shape, (Shape{32, 48}));
        CHECK_EQ(find_tensor(*plan, "dense_1/kernel:fp8 scale_inv").shape, (Shape{1}));
        // dense_2 (10 units, not a multiple of 16): FP8 GEMMs too, dX among them (the CUDA
        // engine pads its codes to cuBLASLt's multiples of 16; issue 26).
        CHECK(has_step(*plan, "dense_2", "fp8 gemm+bias"));
        CHECK(has_step(*plan, "dense_2", "fp8 gemm dW"));
        CHECK(has_step(*plan, "dense_2", "fp8 gemm dX"));
        CHECK_EQ(find_tensor(*plan, "dense_2/kernel:fp8 transposed").shape, (Shape{10, 32}));
        int codes = 0, decoded = 0;
        for (const PlanQuant& q : plan->quant) {
            (q.fp8_codes ? codes : decoded) += 1;
            if (q.role == QuantRole::Gradient)
                CHECK_EQ(q.spec.element, ElementFormat::Float8E5M2); // HYBRID
        }
        CHECK_EQ(codes, 6);
        CHECK_EQ(decoded, 0);
        // Current scaling reads dZ's amax before its codes: dZ is stored, then quantised.
        std::unique_ptr<Model> model_current;
        auto current = mlp_plan(cpu, fp8_policy("fp8", "current"), true, model_current);
        CHECK(has_step(*current, "dense_1", "drelu+bias_grad"));
        CHECK(has_step(*current, "dense_1", "quantize gradient to FP8 codes transposed"));
        // Without fp8_gemm nothing changes: every GEMM reads float32 copies.
        std::unique_ptr<Model> model2;
        auto fake = mlp_plan(cpu, fp8_policy("fp8"), false, model2);
        for (const PlanQuant& q : fake->quant) CHECK(!q.fp8_codes);
        CHECK(!has_step(*fake, "dense_1", "fp8 "));
    }

    void codesDecodeToTheFakeQuantisedValues() {
        // The same weights and input through both lowerings: each code times its decode scale is
        // the fake-quantised float32 value bit for bit, in both layouts, for X and W. The GEMM
        // output differs only by where the scales enter (after the sum, not before): bfloat16's
        // rounding.
        for (const char* kind : {"delayed", "current"}) {
            CpuBackend cpu;
            std::unique_ptr<Model> m1, m2;
            auto fp8 = mlp_plan(cpu, fp8_policy("fp8", kind), true, m1);
            auto fake = mlp_plan(cpu, fp8_policy("fake_quant", kind), false, m2);
            const std::vector<float> x = input_values();
            run_forward(*fp8, cpu, x);
            run_forward(*fake, cpu, x);
            struct Pair {
                const char* codes;
                const char* fake;
                bool transposed;
                std::int64_t rows, cols; // of the fake copy
            };
            const Pair pairs[] = {
                {"input:bfloat16:fp8", "input:bfloat16:q", false, 16, 48},
                {"input:bfloat16:fp8 transposed", "input:bfloat16:q", true, 16, 48},
                {"dense_1/kernel:fp8 transposed", "dense_1/kernel:q", true, 48, 32},
            };
            for (const Pair& p : pairs) {
                const std::vector<double> codes = download_doubles(cpu, find_tensor(*fp8, p.codes));
                const std::string scale_name =
                    std::string(p.codes).substr(0, std::string(p.codes).find(":fp8") + 4) +
                    " scale_inv";
                const double scale_inv = download_doubles(cpu, find_tensor(*fp8, scale_name))[0];
                const std::vector<double> want = download_doubles(cpu, find_tensor(*fake, p.fake));
                int mismatches = 0;
                for (std::int64_t r = 0; r < p.rows; ++r)
                    for (std::int64_t c = 0; c < p.cols; ++c) {
                        const double code = p.transposed
                                                ? codes[static_cast<std::size_t>(c * p.rows + r)]
                                                : codes[static_cast<std::size_t>(r * p.cols + c)];
                        const double value = static_cast<double>(
                            static_cast<float>(code * scale_inv)); // fake_quantize's one rounding
                        mismatches += bits_of(value) !=
                                      bits_of(want[static_cast<std::size_t>(r * p.cols + c)]);
                    }
                CHECK_MSG(mismatches == 0, std::string(kind) + " " + p.codes + ": " +
                                               std::to_string(mismatches) + " values differ");
            }
            const std::vector<double> y8 =
                download_doubles(cpu, find_tensor(*fp8, "dense_1/output"));
            const std::vector<double> yf =
                download_doubles(cpu, find_tensor(*fake, "dense_1/output"));
            double scale = 0, worst = 0;
            for (double v : yf) scale = std::max(scale, std::fabs(v));
            for (std::size_t i = 0; i < y8.size(); ++i)
                worst = std::max(worst, std::fabs(y8[i] - yf[i]));
            CHECK_MSG(scale > 0 && worst <= scale * 0x1p-7,
                      std::to_string(worst) + " of " + std::to_string(scale));
        }
    }

    void codesEqualFakeQuantisationOnEveryPath() {
        // fp8_codes_tensor against fake_quantize_tensor, element for element: code · scale_inv
        // rounded once to float32 is the fake-quantised value, in both layouts, with the same
        // stats and the same delayed-scaling state after it. Values over 60 binades (subnormal
        // codes, flushes), a signed zero, a spike the delayed scale clips, and a NaN (which
        // takes the per-value path).
        for (ElementFormat f : {ElementFormat::Float8E4M3, ElementFormat::Float8E5M2})
            for (QuantScaling scaling : {QuantScaling::Current, QuantScaling::Delayed})
                for (bool with_nan : {false, true}) {
                    QuantSpec spec;
                    spec.scaling = scaling;
                    spec.element = f;
                    spec.history_len = 4;
                    const std::size_t rows = 24, cols = 40, n = rows * cols;
                    std::vector<float> x(n);
                    for (std::size_t i = 0; i < n; ++i)
                        x[i] = static_cast<float>(std::sin(0.77 * static_cast<double>(i) + 0.2) *
                                                  std::ldexp(1.0, static_cast<int>(i % 61) - 40));
                    x[7] = -0.0f;
                    x[100] = 3.0e4f; // the spike
                    if (with_nan) x[200] = std::nanf("");
                    // Delayed scaling starts from a scale the history chose for far smaller
                    // values: the spike and its neighbours clip.
                    std::vector<float> state_a(quant_state_floats(spec), 0.0f);
                    if (!state_a.empty()) state_a[0] = 1.0e3f;
                    std::vector<float> state_b = state_a;
                    std::vector<float> fake = x;
                    const QuantTensorStats want =
                        fake_quantize_tensor(fake, rows, cols, spec, state_a, 3, true);
                    std::vector<std::uint8_t> codes(n), codes_t(n);
                    float scale_inv = 0;
                    const QuantTensorStats got = fp8_codes_tensor(x, rows, cols, spec, state_b,
                                                                  true, codes, codes_t, scale_inv);
                    const std::string what =
                        std::string(element_format_name(f)) +
                        (scaling == QuantScaling::Current ? " current" : " delayed") +
                        (with_nan ? " with NaN" : "");
                    int mismatches = 0;
                    for (std::size_t r = 0; r < rows; ++r)
                        for (std::size_t c = 0; c < cols; ++c) {
                            const std::uint8_t code = codes[r * cols + c];
                            mismatches += code != codes_t[c * rows + r];
                            const auto value = static_cast<float>(decode_element(code, f) *
                                                                  static_cast<double>(scale_inv));
                            std::uint32_t a, b;
                            std::memcpy(&a, &value, 4);
                            std::memcpy(&b, &fake[r * cols + c], 4);
                            mismatches += a != b;
                        }
                    CHECK_MSG(mismatches == 0, what + ": " + std::to_string(mismatches));
                    CHECK_MSG(bits_of(got.amax) == bits_of(want.amax), what);
                    CHECK_EQ(got.scale, want.scale);
                    CHECK_EQ(got.clipped, want.clipped);
                    CHECK_EQ(got.zeros, want.zeros);
                    // Bitwise: a NaN amax is recorded in the history as NaN by both.
                    // (Current scaling keeps no state: empty vectors, no memcmp on null.)
                    CHECK_MSG(
                        state_a.size() == state_b.size() &&
                            (state_a.empty() || std::memcmp(state_a.data(), state_b.data(),
                                                            state_a.size() * sizeof(float)) == 0),
                        what);
                    if (scaling == QuantScaling::Delayed) CHECK_MSG(got.clipped > 0, what);
                    CHECK_MSG(got.zeros > 0, what);
                }
    }

    void trainingFollowsFakeQuantisation() {
        // A few steps each way: the same first loss (the forward differs below bfloat16's
        // rounding there), losses that stay close, and the same delayed-scaling statistics at the
        // first record (the quantise arithmetic is shared).
        static const Mnist data = synthetic_mnist(256, 64);
        std::vector<double> losses[2];
        std::vector<QuantRecord> records[2];
        for (int side = 0; side < 2; ++side) {
            Experiment e;
            e.model.layers = {flatten(), dense(32, Activation::Relu), dense(10),
                              activation(Activation::Softmax, "float32")};
            e.policy = "mixed_float8";
            e.recipe = RecipeOptions{};
            e.recipe->gemm = side ? "fp8" : "fake_quant";
            e.batch_size = 32;
            e.epochs = 1;
            e.max_steps = 6;
            e.quant_every = 3;
            e.device = "cpu";
            CpuBackend be;
            Trainer trainer(e, data, be);
            TrainControl control;
            TrainerCallbacks callbacks;
            callbacks.on_step = [&](const StepRecord& r) { losses[side].push_back(r.loss); };
            callbacks.on_quant = [&](const QuantRecord& q) { records[side].push_back(q); };
            CHECK_EQ(trainer.run(control, callbacks).status, RunStatus::Completed);
        }
        CHECK_EQ(losses[0].size(), std::size_t(6));
        CHECK_EQ(losses[1].size(), std::size_t(6));
        CHECK_EQ(losses[0][0], losses[1][0]);
        for (std::size_t i = 0; i < losses[0].size(); ++i)
            CHECK_MSG(std::fabs(losses[1][i] - losses[0][i]) <= 0.02 * losses[0][i],
                      std::to_string(losses[1][i]) + " vs " + std::to_string(losses[0][i]));
        CHECK(losses[1].back() < losses[1].front());
        const auto& a = records[0].front().tensors;
        const auto& b = records[1].front().tensors;
        CHECK_EQ(a.size(), b.size());
        for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
            CHECK_EQ(a[i].layer + a[i].role, b[i].layer + b[i].role);
            CHECK_EQ(a[i].amax, b[i].amax);
            CHECK_EQ(a[i].scale, b[i].scale);
            CHECK_EQ(a[i].clipped, b[i].clipped);
        }
    }

    void autoFollowsTheEngine() {
        CpuBackend cpu;
        NativeFp8 native(cpu);
        CHECK(!resolve_fp8_gemm(fp8_policy("auto"), &cpu)); // the CPU emulates: fake quant
        CHECK(resolve_fp8_gemm(fp8_policy("auto"), &native));
        CHECK(!resolve_fp8_gemm(fp8_policy("auto"), nullptr)); // the Plan view, no engine yet
        CHECK(resolve_fp8_gemm(fp8_policy("fp8"), &cpu));
        CHECK(!resolve_fp8_gemm(fp8_policy("fake_quant"), &native));
        CHECK(!resolve_fp8_gemm(policy_from_name("mixed_bfloat16"), &native));
        CHECK(!resolve_fp8_gemm(policy_with_recipe("nvfp4", std::nullopt), &native));
        RecipeOptions block;
        block.kind = "block";
        CHECK(!resolve_fp8_gemm(policy_with_recipe("mixed_float8", block), &native));
        CHECK_EQ(make_recipe("mixed_float8").gemm, std::string("auto"));
        // The default recipe on an FP8 engine trains through the FP8 GEMMs.
        static const Mnist data = synthetic_mnist(64, 32);
        Experiment e;
        e.model.layers = {flatten(), dense(16, Activation::Relu), dense(10),
                          activation(Activation::Softmax, "float32")};
        e.policy = "mixed_float8";
        e.batch_size = 16;
        e.epochs = 1;
        e.max_steps = 2;
        Trainer trainer(e, data, native);
        TrainControl control;
        CHECK_EQ(trainer.run(control, {}).status, RunStatus::Completed);
    }

    void fp8NeedsAnEngineThatHasIt() {
        CpuBackend cpu;
        NoFp8Gemm engine(cpu);
        std::unique_ptr<Model> model;
        const std::string message =
            error_of([&] { mlp_plan(engine, fp8_policy("fp8"), true, model); }, ErrorKind::Config);
        CHECK_MSG(message.find("layer 'dense_1'") != std::string::npos &&
                      message.find("recipe.gemm") != std::string::npos,
                  message);
        // "auto" falls back to quantise-dequantise there.
        CHECK(!resolve_fp8_gemm(fp8_policy("auto"), &engine));
        CHECK(mlp_plan(engine, fp8_policy("auto"), false, model) != nullptr);
    }

    void badGemmFieldsNameTheField() {
        auto message = [](const std::string& policy, const std::string& recipe) {
            try {
                experiment_from_json(
                    R"({"model": {"input": [28, 28, 1], "layers": [{"type": "Flatten"},
                       {"type": "Dense", "units": 10}]}, "policy": ")" +
                        policy + R"(", "recipe": )" + recipe + "}",
                    "x.json");
            } catch (const Error& e) {
                return std::string(e.what());
            }
            return std::string();
        };
        const std::string bad_value = message("mixed_float8", R"({"gemm": "int8"})");
        CHECK_MSG(bad_value.find("recipe.gemm") != std::string::npos &&
                      bad_value.find("\"fake_quant\"") != std::string::npos,
                  bad_value);
        const std::string on_block = message("mixed_float8", R"({"kind": "block", "gemm": "fp8"})");
        CHECK_MSG(on_block.find("recipe.gemm: only for kind 'delayed' or 'current'") !=
                      std::string::npos,
                  on_block);
        const std::string on_mx = message("mxfp4", R"({"gemm": "fp8"})");
        CHECK_MSG(on_mx.find("recipe.gemm: only for policy mixed_float8") != std::string::npos,
                  on_mx);
        const std::string wrong_type = message("mixed_float8", R"({"gemm": true})");
        CHECK_MSG(wrong_type.find("recipe.gemm") != std::string::npos, wrong_type);
        // And it round-trips through the experiment file.
        const Experiment e = experiment_from_json(
            R"({"model": {"input": [28, 28, 1], "layers": [{"type": "Flatten"},
               {"type": "Dense", "units": 16}]}, "policy": "mixed_float8",
               "recipe": {"gemm": "fp8"}})",
            "x.json");
        CHECK_EQ(e.recipe->gemm, std::optional<std::string>("fp8"));
        CHECK_EQ(experiment_from_json(experiment_to_json(e), "y.json").recipe->gemm,
                 std::optional<std::string>("fp8"));
    }
};

} // namespace

MANTISSA_TEST_MAIN(TestFp8GemmPlan, lowersDenseOntoCodes, codesDecodeToTheFakeQuantisedValues,
                   codesEqualFakeQuantisationOnEveryPath, trainingFollowsFakeQuantisation,
                   autoFollowsTheEngine, fp8NeedsAnEngineThatHasIt, badGemmFieldsNameTheField)
