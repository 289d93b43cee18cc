// Training under the frontier policies (issue 18) on the CPU engine: recipe parsing and its
// field-path errors, quantise steps in front of every Dense input, the engine's quantised GEMM
// inputs against the block-quant reference bit for bit, delayed scaling's lag behind a spike, and
// a few training steps under every quantised policy with their `quant` records.

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend/cpu/cpu_backend.h"
#include "core/data/synthetic_mnist.h"
#include "core/error.h"
#include "core/nn/model.h"
#include "core/numeric/block_quant.h"
#include "core/numeric/element_format.h"
#include "core/numeric/policy.h"
#include "core/numeric/tensor_quant.h"
#include "core/plan/compile.h"
#include "core/records/metrics_jsonl.h"
#include "core/train/experiment.h"
#include "core/train/trainer.h"
#include "tests/test_support.h"
#include "tests/unit/files.h"
#include "tests/unit/temp_dir.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;
using namespace mantissa::test;

namespace {

const char* const kQuantPolicies[] = {"mixed_float8", "mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e3m2",
                                      "mxfp6_e2m3",   "mxfp4",      "nvfp4"};

std::string experiment_json(const std::string& policy, const std::string& recipe) {
    return R"({"model": {"input": [28, 28, 1], "layers": [{"type": "Flatten"},
              {"type": "Dense", "units": 10}]}, "policy": ")" +
           policy + "\"" + (recipe.empty() ? std::string() : ", \"recipe\": " + recipe) + "}";
}

std::string parse_error(const std::string& policy, const std::string& recipe) {
    try {
        experiment_from_json(experiment_json(policy, recipe), "x.json");
    } catch (const Error& e) {
        return e.what();
    }
    return {};
}

const Tensor& find_tensor(const Plan& plan, const std::string& name) {
    for (const Tensor& t : plan.tensors)
        if (t.name == name) return t;
    throw Error(ErrorKind::Internal, "no tensor " + name);
}

std::vector<float> download(Backend& be, const Tensor& t) {
    std::vector<float> out(static_cast<std::size_t>(t.numel()));
    be.download(t, out.data());
    return out;
}

// Runs the forward steps of `plan` (after the data steps, before the loss) on the input `x`.
void run_forward(Plan& plan, Backend& be, const std::vector<float>& x) {
    be.upload(x.data(), plan.tensor(plan.input));
    RunContext ctx;
    ctx.step = 1;
    for (PlanStep& step : plan.steps) {
        if (step.phase != StepPhase::Forward || step.op == "begin_step" ||
            step.op == "gather+normalize")
            continue;
        if (step.op == "softmax_xent") break;
        step.run(be, ctx);
    }
}

std::unique_ptr<Plan> dense_plan(Backend& be, const Policy& policy, std::int64_t in,
                                 std::int64_t units, std::int64_t batch, const Model** keep) {
    ModelSpec spec;
    spec.input = {in};
    spec.layers = {dense(units)};
    static std::vector<std::unique_ptr<Model>> models; // the plan's steps point into nothing of it
    models.push_back(std::make_unique<Model>(spec, policy));
    *keep = models.back().get();
    CompileOptions options;
    options.policy = policy;
    options.batch_size = batch;
    auto plan = compile(*models.back(), options, be);
    plan->initialize(be, 7);
    return plan;
}

// Values on a 1/16 grid up to 12.5: exact in bfloat16, so the input cast changes nothing, with
// ties and one large value per row so blocks differ.
std::vector<float> grid_input(std::int64_t rows, std::int64_t cols) {
    std::vector<float> x(static_cast<std::size_t>(rows * cols));
    for (std::int64_t i = 0; i < rows * cols; ++i) {
        const int k = static_cast<int>((i * 37 + 11) % 201) - 100; // -100 .. 100
        x[static_cast<std::size_t>(i)] = static_cast<float>(k) / 16.0f;
    }
    for (std::int64_t r = 0; r < rows; ++r)
        x[static_cast<std::size_t>(r * cols + r % cols)] = 12.5f;
    return x;
}

RecipeOptions with_kind(const std::string& kind) {
    RecipeOptions o;
    o.kind = kind;
    return o;
}

std::uint32_t bits(float v) {
    std::uint32_t b;
    std::memcpy(&b, &v, 4);
    return b;
}

} // namespace

class TestQuantTrain {

public:
    void policiesCarryTheirRecipes() {
        for (const char* name : kQuantPolicies) {
            const Policy p = policy_from_name(name);
            CHECK_MSG(p.quant.has_value(), name);
            CHECK_EQ(p.compute, DType::BFloat16);
            CHECK_EQ(p.variable, DType::Float32);
            CHECK(!loss_scaling_recommended(p));
        }
        CHECK(!policy_from_name("mixed_bfloat16").quant);
        const QuantRecipe fp8 = *policy_from_name("mixed_float8").quant;
        CHECK_EQ(fp8.name, std::string("delayed"));
        CHECK(fp8.activation.scaling == QuantScaling::Delayed);
        CHECK_EQ(fp8.activation.history_len, 1024);
        CHECK(fp8.activation.element == ElementFormat::Float8E4M3);
        CHECK(fp8.gradient.element == ElementFormat::Float8E5M2); // HYBRID
        const QuantRecipe nv = *policy_from_name("nvfp4").quant;
        CHECK_EQ(nv.weight.block_rows, 16);
        CHECK_EQ(nv.weight.block_cols, 16);
        CHECK_EQ(nv.activation.block_cols, 16);
        CHECK(nv.gradient.block.stochastic);
        CHECK(!nv.activation.block.stochastic);
        const QuantRecipe mx = *policy_from_name("mxfp8_e4m3").quant;
        CHECK_EQ(mx.activation.block_cols, 32);
        CHECK_EQ(mx.weight.block_rows, 32); // along the reduction dimension of X·W
        CHECK_EQ(quant_bits_per_element(mx.activation), 8.25);
        CHECK_EQ(quant_bits_per_element(policy_from_name("mxfp4").quant->activation), 4.25);
        const QuantRecipe block = make_recipe("mixed_float8", with_kind("block"));
        CHECK_EQ(block.activation.block_cols, 128);
        CHECK_EQ(block.weight.block_rows, 128);
        CHECK_EQ(block.weight.block_cols, 128);
        CHECK(block.weight.block.rule == ScaleRule::Ceil); // power-of-two scales, no clipping
        CHECK(block.gradient.block.format == BlockFormat::MxFp8E5M2);
        RecipeOptions e4m3_options;
        e4m3_options.fp8_format = "e4m3";
        const QuantRecipe e4m3 = make_recipe("mixed_float8", e4m3_options);
        CHECK(e4m3.gradient.element == ElementFormat::Float8E4M3);
    }

    void recipeReadsAndRoundTrips() {
        const Experiment e = experiment_from_json(
            experiment_json("mixed_float8",
                            R"({"kind": "delayed", "history_len": 16, "margin": 1,
                                "amax_compute": "most_recent"})"),
            "x.json");
        CHECK(e.recipe.has_value());
        CHECK_EQ(*e.recipe->history_len, 16);
        const Policy p = policy_with_recipe(e.policy, e.recipe);
        CHECK_EQ(p.quant->activation.history_len, 16);
        CHECK_EQ(p.quant->activation.margin, 1);
        CHECK(p.quant->activation.amax_most_recent);
        CHECK_EQ(experiment_from_json(experiment_to_json(e), "y.json"), e);
        const Experiment nv = experiment_from_json(
            experiment_json("nvfp4", R"({"weight_2d": false, "stochastic_gradients": false})"),
            "x.json");
        const Policy pn = policy_with_recipe(nv.policy, nv.recipe);
        CHECK_EQ(pn.quant->weight.block_rows, 16);
        CHECK_EQ(pn.quant->weight.block_cols, 1);
        CHECK(!pn.quant->gradient.block.stochastic);
    }

    void badRecipesNameTheField_data() {
        add_column<std::string>("policy");
        add_column<std::string>("recipe");
        add_column<std::string>("expected");
        new_row("history 0") << "mixed_float8"
                             << R"({"history_len": 0})"
                             << "recipe.history_len: must be ≥ 1";
        new_row("margin") << "mixed_float8"
                          << R"({"margin": -1})"
                          << "recipe.margin";
        new_row("kind") << "mixed_float8"
                        << R"({"kind": "lazy"})"
                        << "recipe.kind";
        new_row("history under current") << "mixed_float8"
                                         << R"({"kind": "current", "history_len": 4})"
                                         << "recipe.history_len: only for kind 'delayed'";
        new_row("fp8 format") << "mixed_float8"
                              << R"({"fp8_format": "e5m2"})"
                              << "recipe.fp8_format";
        new_row("amax rule on nvfp4") << "nvfp4"
                                      << R"({"scale_rule": "floor"})"
                                      << "recipe.scale_rule";
        new_row("amax rule on mx") << "mxfp4"
                                   << R"({"scale_rule": "amax"})"
                                   << "recipe.scale_rule";
        new_row("2d on mx") << "mxfp8_e4m3"
                            << R"({"weight_2d": true})"
                            << "recipe.weight_2d";
        new_row("kind on mx") << "mxfp4"
                              << R"({"kind": "current"})"
                              << "recipe.kind";
        new_row("unknown field") << "nvfp4"
                                 << R"({"tile": 8})"
                                 << "recipe.tile: unknown";
        new_row("wrong type") << "nvfp4"
                              << R"({"weight_2d": 1})"
                              << "recipe.weight_2d";
        new_row("no recipe policy") << "mixed_bfloat16"
                                    << "{}"
                                    << "quantises nothing";
    }

    void badRecipesNameTheField() {
        FETCH(std::string, policy);
        FETCH(std::string, recipe);
        FETCH(std::string, expected);
        const std::string message = parse_error(policy, recipe);
        CHECK_MSG(contains(message, expected), message);
        CHECK_MSG(message.starts_with("x.json: "), message);
    }

    void planQuantisesEveryDenseInput() {
        CpuBackend be;
        ModelSpec spec = mlp_small();
        spec.layers[1].dtype = "bfloat16"; // the first Dense stays high-precision (a TE habit)
        const Policy policy = policy_from_name("mxfp8_e4m3");
        const Model model(spec, policy);
        CompileOptions options;
        options.policy = policy;
        options.batch_size = 32;
        auto plan = compile(model, options, be);
        // dense_2 and dense_3: activation, weight, gradient each; dense_1 (bfloat16): none.
        CHECK_EQ(plan->quant.size(), std::size_t(6));
        for (const PlanQuant& q : plan->quant) CHECK(q.layer != model.layer(1).name());
        std::vector<std::string> producer(plan->tensors.size());
        for (const PlanStep& s : plan->steps)
            for (TensorId o : s.outputs) producer[static_cast<std::size_t>(o)] = s.op;
        int gemms = 0;
        for (const PlanStep& s : plan->steps) {
            if (s.op.rfind("gemm", 0) != 0 || s.layer == model.layer(1).name()) continue;
            ++gemms;
            for (std::size_t i = 0; i < 2; ++i) {
                const std::string& from = producer[static_cast<std::size_t>(s.inputs[i])];
                CHECK_MSG(from.rfind("quantize ", 0) == 0, (s.op + " reads " + from).c_str());
            }
        }
        CHECK_EQ(gemms, 6); // forward, dW and dX of two layers
        // Under mixed_bfloat16 nothing is quantised.
        CompileOptions plain = options;
        plain.policy = policy_from_name("mixed_bfloat16");
        CHECK(compile(Model(spec, plain.policy), plain, be)->quant.empty());
    }

    void paddingIsNamedAndCounted() {
        CpuBackend be;
        const Model* model = nullptr;
        auto plan = dense_plan(be, policy_from_name("mxfp8_e4m3"), 784, 10, 8, &model);
        bool named = false;
        for (const PlanStep& s : plan->steps)
            named = named || (s.op.rfind("quantize activation", 0) == 0 &&
                              s.op.find("8×784→8×800") != std::string::npos);
        CHECK(named);
        // 8 rows x 25 blocks of the activation's E8M0 scales, the 25th padded.
        CHECK_EQ(find_tensor(*plan, "input:bfloat16:q scales").numel(), std::int64_t(8 * 25));
    }

    void forwardMatchesBlockReference_data() {
        add_column<std::string>("policy");
        add_column<int>("in");
        new_row("mxfp8_e4m3, 40 inputs (a padded block)") << "mxfp8_e4m3" << 40;
        new_row("mxfp4") << "mxfp4" << 40;
        new_row("mxfp6_e2m3") << "mxfp6_e2m3" << 40;
        new_row("nvfp4, 16x16 weight tiles") << "nvfp4" << 48;
    }

    void forwardMatchesBlockReference() {
        FETCH(std::string, policy);
        FETCH(int, in);
        CpuBackend be;
        const Policy p = policy_from_name(policy);
        const std::int64_t batch = 4, units = 10;
        const Model* model = nullptr;
        auto plan = dense_plan(be, p, in, units, batch, &model);
        const std::vector<float> x = grid_input(batch, in);
        run_forward(*plan, be, x);
        const std::vector<float> xq = download(be, find_tensor(*plan, "input:bfloat16:q"));
        const std::vector<float> w = download(be, plan->tensor(plan->params[0].variable));
        const std::string wname = plan->tensor(plan->params[0].variable).name + ":q";
        const std::vector<float> wq = download(be, find_tensor(*plan, wname));
        const QuantSpec& as = p.quant->activation;
        const QuantSpec& ws = p.quant->weight;
        // Reference: the slice-1 encoders on doubles (tst_block_quant checks them against exact
        // rational arithmetic). Activation blocks run along rows; MX per row, NVFP4 over the
        // whole tensor (its float32 scale is per tensor; 48 = 3 whole blocks per row).
        std::vector<double> ref_x(x.size()), ref_w(w.size());
        if (as.block.format == BlockFormat::NvFp4) {
            const auto r = quantize_blocks(std::vector<double>(x.begin(), x.end()), as.block);
            ref_x = r.decoded;
            const auto rw = quantize_blocks_2d(std::vector<double>(w.begin(), w.end()),
                                               static_cast<std::size_t>(in), units, ws.block, 16);
            ref_w = rw.decoded;
        } else {
            for (std::int64_t r = 0; r < batch; ++r) {
                std::vector<double> row(x.begin() + r * in, x.begin() + (r + 1) * in);
                const auto q = quantize_blocks(row, as.block);
                std::copy(q.decoded.begin(), q.decoded.end(), ref_x.begin() + r * in);
            }
            for (std::int64_t c = 0; c < units; ++c) { // weight blocks run down each column
                std::vector<double> col;
                for (int r = 0; r < in; ++r)
                    col.push_back(w[static_cast<std::size_t>(r * units + c)]);
                const auto q = quantize_blocks(col, ws.block);
                for (int r = 0; r < in; ++r)
                    ref_w[static_cast<std::size_t>(r * units + c)] =
                        q.decoded[static_cast<std::size_t>(r)];
            }
        }
        int changed = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            CHECK_EQ(bits(xq[i]), bits(static_cast<float>(ref_x[i])));
            changed += xq[i] != x[i];
        }
        CHECK(changed > 0); // the format did round something
        for (std::size_t i = 0; i < w.size(); ++i)
            CHECK_EQ(bits(wq[i]), bits(static_cast<float>(ref_w[i])));
        // The GEMM multiplies the decoded values and accumulates in float32; the output is
        // rounded once to bfloat16.
        const Tensor& yt = find_tensor(*plan, model->layer(0).name() + "/output");
        std::vector<std::uint16_t> y(static_cast<std::size_t>(yt.numel()));
        be.download(yt, y.data());
        for (std::int64_t r = 0; r < batch; ++r)
            for (std::int64_t c = 0; c < units; ++c) {
                double ref = 0, mag = 0;
                for (int k = 0; k < in; ++k) {
                    const double t = ref_x[static_cast<std::size_t>(r * in + k)] *
                                     ref_w[static_cast<std::size_t>(k * units + c)];
                    ref += t;
                    mag += std::fabs(t);
                }
                const std::uint32_t b =
                    static_cast<std::uint32_t>(y[static_cast<std::size_t>(r * units + c)]) << 16;
                float got;
                std::memcpy(&got, &b, 4);
                CHECK_MSG(std::fabs(got - ref) <= mag * (1.0 / 128 + 1e-5),
                          "y(" + std::to_string(r) + "," + std::to_string(c) +
                              ") = " + describe_value(got) + ", reference " + describe_value(ref));
            }
    }

    void perTensorFp8MatchesTheFormula() {
        // Current scaling: scale = 448 / amax in float32, code = E4M3(v * scale), value = code *
        // (1 / scale), written out here from TE's definition.
        CpuBackend be;
        const Policy p = policy_with_recipe("mixed_float8", with_kind("current"));
        const Model* model = nullptr;
        auto plan = dense_plan(be, p, 40, 10, 4, &model);
        const std::vector<float> x = grid_input(4, 40);
        run_forward(*plan, be, x);
        const std::vector<float> xq = download(be, find_tensor(*plan, "input:bfloat16:q"));
        const float scale = 448.0f / 12.5f, inv = 1.0f / scale;
        for (std::size_t i = 0; i < x.size(); ++i) {
            const std::uint32_t code =
                encode_element(static_cast<double>(x[i]) * scale, ElementFormat::Float8E4M3);
            const float ref =
                static_cast<float>(decode_element(code, ElementFormat::Float8E4M3) * inv);
            CHECK_EQ(bits(xq[i]), bits(ref));
        }
    }

    void delayedScalingLagsASpike() {
        // The lesson "FP8 and delayed scaling": three steps with amax 1, then a spike of 100.
        // The delayed scale was set from the history (448 / 1), so the spike saturates; current
        // scaling sees it and clips nothing. One step later the delayed scale has caught up.
        QuantSpec delayed = make_recipe("mixed_float8").activation;
        QuantSpec current = make_recipe("mixed_float8", with_kind("current")).activation;
        std::vector<float> state(quant_state_floats(delayed), 0.0f);
        auto tensor = [](float spike) {
            std::vector<float> v(256);
            for (std::size_t i = 0; i < v.size(); ++i)
                v[i] = static_cast<float>(static_cast<int>(i % 17) - 8) / 8.0f; // amax 1
            v[100] = spike;
            v[101] = -spike / 2;
            return v;
        };
        for (int step = 1; step <= 3; ++step) {
            std::vector<float> v = tensor(1.0f);
            const auto s = fake_quantize_tensor(v, 16, 16, delayed, state, step, true);
            CHECK_EQ(s.clipped, std::size_t(0));
            // The decode factor: 1 before any history (TE starts at scale 1), then 1 / (448 / 1).
            CHECK_EQ(s.scale, step == 1 ? 1.0 : static_cast<double>(1.0f / 448.0f));
        }
        std::vector<float> spike = tensor(100.0f);
        std::vector<float> spike_copy = spike;
        const auto d = fake_quantize_tensor(spike, 16, 16, delayed, state, 4, true);
        CHECK_EQ(d.amax, 100.0);
        CHECK_EQ(d.clipped, std::size_t(2));         // 100 and -50 saturate at 448 / 448 = ±1
        CHECK(std::fabs(spike[100] - 1.0f) < 1e-6f); // 100 came out as 448 x (1 / 448)
        CHECK(std::fabs(spike[101] + 1.0f) < 1e-6f);
        const auto c = fake_quantize_tensor(spike_copy, 16, 16, current, {}, 4, true);
        CHECK_EQ(c.clipped, std::size_t(0));
        CHECK(std::fabs(spike_copy[100] - 100.0f) < 1e-4f);
        std::vector<float> after = tensor(100.0f);
        const auto next = fake_quantize_tensor(after, 16, 16, delayed, state, 5, true);
        CHECK_EQ(next.clipped, std::size_t(0));
        CHECK_EQ(next.scale, static_cast<double>(1.0f / (448.0f / 100.0f)));
        // An evaluation pass (record = false) uses the scale but leaves the history alone.
        const std::vector<float> before = state;
        std::vector<float> eval = tensor(1000.0f);
        fake_quantize_tensor(eval, 16, 16, delayed, state, 6, false);
        CHECK_EQ(state, before);
    }

    void trainingRunsUnderEveryQuantisedPolicy_data() {
        add_column<std::string>("policy");
        add_column<std::string>("kind");
        for (const char* p : kQuantPolicies) new_row(p) << p << "";
        new_row("mixed_float8 current") << "mixed_float8"
                                        << "current";
        new_row("mixed_float8 block") << "mixed_float8"
                                      << "block";
    }

    void trainingRunsUnderEveryQuantisedPolicy() {
        FETCH(std::string, policy);
        FETCH(std::string, kind);
        static const Mnist data = synthetic_mnist(256, 64);
        Experiment e;
        e.model.layers = {flatten(), dense(32, Activation::Relu), dense(10),
                          activation(Activation::Softmax, "float32")};
        e.policy = policy;
        if (!kind.empty()) e.recipe = with_kind(kind);
        e.batch_size = 32;
        e.epochs = 1;
        e.max_steps = 6;
        e.quant_every = 3;
        e.device = "cpu";
        CpuBackend be;
        Trainer trainer(e, data, be);
        TrainControl control;
        TrainerCallbacks callbacks;
        std::vector<QuantRecord> records;
        double last_loss = NAN;
        callbacks.on_step = [&](const StepRecord& r) { last_loss = r.loss; };
        callbacks.on_quant = [&](const QuantRecord& q) { records.push_back(q); };
        const RunSummary summary = trainer.run(control, callbacks);
        CHECK_EQ(summary.status, RunStatus::Completed);
        CHECK(std::isfinite(last_loss));
        CHECK_EQ(records.size(), std::size_t(3)); // steps 1, 3 and 6
        CHECK_EQ(records[1].step, std::int64_t(3));
        CHECK_EQ(records.back().tensors.size(), std::size_t(6)); // 2 Dense x 3 roles
        for (const QuantTensorRecord& t : records.back().tensors) {
            CHECK_MSG(t.amax > 0 && t.scale > 0, t.format.c_str());
            CHECK(t.clipped >= 0 && t.clipped <= 1 && t.flushed >= 0 && t.flushed <= 1);
            CHECK(t.count > 0 && t.blocks > 0);
        }
    }

    void initializeResetsDelayedScaling() {
        CpuBackend be;
        const Model* model = nullptr;
        auto plan = dense_plan(be, policy_from_name("mixed_float8"), 40, 10, 4, &model);
        run_forward(*plan, be, grid_input(4, 40));
        bool recorded = false;
        for (const PlanQuant& q : plan->quant)
            if (q.state != kNoTensor && q.role == QuantRole::Activation) {
                const std::vector<float> st = download(be, plan->tensor(q.state));
                CHECK_EQ(st[0], 448.0f / 12.5f); // the next step's scale, from this amax
                CHECK_EQ(st[2], 12.5f);          // the history's first entry
                recorded = true;
            }
        CHECK(recorded);
        plan->initialize(be, 7);
        for (const PlanQuant& q : plan->quant)
            if (q.state != kNoTensor)
                for (float v : download(be, plan->tensor(q.state))) CHECK_EQ(v, 0.0f);
    }

    void quantRecordIsWrittenAsJsonl() {
        TempDir dir;
        const std::string path = dir.file("m.jsonl");
        {
            MetricsJsonlWriter w(path);
            QuantRecord r;
            r.step = 50;
            r.tensors.push_back({"dense_1", "gradient", "float8_e5m2 per tensor", 0.5, 1.0 / 448,
                                 0.25, 0.125, 64, 1});
            r.tensors.push_back({"dense_1", "weight", "x", NAN, 1, 0, 0, 4, 1});
            w.write_quant(r);
        }
        std::ifstream in(path);
        std::string line;
        std::getline(in, line);
        const nlohmann::json o = nlohmann::json::parse(line);
        CHECK_EQ(o["type"].get<std::string>(), std::string("quant"));
        CHECK_EQ(o["step"].get<int>(), 50);
        const nlohmann::json& t = o["tensors"];
        CHECK_EQ(t.size(), std::size_t(2));
        CHECK_EQ(t[0]["role"].get<std::string>(), std::string("gradient"));
        CHECK_EQ(t[0]["clipped"].get<double>(), 0.25);
        CHECK_EQ(t[0]["flushed"].get<double>(), 0.125);
        CHECK(t[1]["amax"].is_null()); // NaN is written as null
    }
};

MANTISSA_TEST_MAIN(TestQuantTrain, policiesCarryTheirRecipes, recipeReadsAndRoundTrips,
                   badRecipesNameTheField, planQuantisesEveryDenseInput, paddingIsNamedAndCounted,
                   forwardMatchesBlockReference, perTensorFp8MatchesTheFormula,
                   delayedScalingLagsASpike, trainingRunsUnderEveryQuantisedPolicy,
                   initializeResetsDelayedScaling, quantRecordIsWrittenAsJsonl)
