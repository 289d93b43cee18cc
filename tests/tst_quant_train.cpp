// Training under the frontier policies (issue 18) on the CPU engine: recipe parsing and its
// field-path errors, quantise steps in front of every Dense input, the engine's quantised GEMM
// inputs against the block-quant reference bit for bit, delayed scaling's lag behind a spike, and
// a few training steps under every quantised policy with their `quant` records.

#include <array>
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
#include "core/numeric/convert.h"
#include "core/numeric/element_format.h"
#include "core/numeric/hadamard.h"
#include "core/numeric/hadamard_math.h"
#include "core/numeric/half.h"
#include "core/numeric/policy.h"
#include "core/numeric/tensor_quant.h"
#include "core/plan/compile.h"
#include "core/records/metrics_jsonl.h"
#include "core/train/experiment.h"
#include "core/train/trainer.h"
#include "tests/ops/forwarding_backend.h"
#include "tests/plan_steps.h"
#include "tests/test_support.h"
#include "tests/unit/error_of.h"
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

// Two Dense layers, so the second computes dX (and needs W's column-wise copy).
std::unique_ptr<Plan> mlp2_plan(Backend& be, const Policy& policy, std::int64_t in,
                                std::int64_t hidden, std::int64_t units, std::int64_t batch,
                                const Model** keep) {
    ModelSpec spec;
    spec.input = {in};
    spec.layers = {dense(hidden), dense(units)};
    static std::vector<std::unique_ptr<Model>> models;
    models.push_back(std::make_unique<Model>(spec, policy));
    *keep = models.back().get();
    CompileOptions options;
    options.policy = policy;
    options.batch_size = batch;
    auto plan = compile(*models.back(), options, be);
    plan->initialize(be, 7);
    return plan;
}

// Runs every op on the CPU engine and notes, for each GEMM, whether the plan said its operands
// hold bfloat16 values only (GemmArgs::exact_in_bfloat16) and whether they do.
class GemmFlagRecorder final : public ForwardingBackend {
public:
    using ForwardingBackend::ForwardingBackend;
    bool supports_fake_quantize() const override { return true; }
    void fake_quantize(const FakeQuantArgs& a) override { m_inner.fake_quantize(a); }
    void gemm(const GemmArgs& args) override {
        flags.push_back(args.exact_in_bfloat16);
        bfloat16_operands.push_back(args.a->dtype == DType::BFloat16 &&
                                    args.b->dtype == DType::BFloat16);
        bool exact = args.a->dtype == DType::Float32 && args.b->dtype == DType::Float32;
        for (const Tensor* t : {args.a, args.b}) {
            if (!exact) break;
            std::vector<float> v(static_cast<std::size_t>(t->numel()));
            m_inner.download(*t, v.data());
            for (float x : v)
                exact = exact && bfloat16_bits_to_float(float_to_bfloat16_bits(x)) == x;
        }
        operands_exact.push_back(exact);
        scaled.push_back(args.a_scale && args.b_scale);
        m_inner.gemm(args);
    }
    std::vector<bool> flags, operands_exact, bfloat16_operands, scaled;
};

PlanStep& layer_step(Plan& plan, const std::string& layer, const std::string& prefix) {
    for (PlanStep& s : plan.steps)
        if (s.layer == layer && s.op.rfind(prefix, 0) == 0) return s;
    throw Error(ErrorKind::Internal, "no step " + prefix + " in " + layer);
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

// Writes `values` into `t` (any float dtype) and runs `step` alone, returning its float32 output.
// A column-wise copy's step in `layer` (`usage`: "column-wise for dW") and the copy it writes:
// the row-wise copy's step, which makes both ("quantize gradient: …, and column-wise for dW: …"),
// or its own where no row-wise copy is made.
struct CopyStep {
    PlanStep& step;
    TensorId copy;
};
CopyStep column_copy_step(Plan& plan, const std::string& layer, const std::string& role,
                          const std::string& usage) {
    for (PlanStep& s : plan.steps) {
        if (s.layer != layer || s.op.rfind("quantize " + role, 0) != 0 ||
            s.op.find(usage) == std::string::npos)
            continue;
        for (TensorId out : s.outputs)
            if (plan.tensor(out).name.ends_with(":q colwise")) return {s, out};
    }
    throw Error(ErrorKind::Internal,
                "no step making the " + role + " copy " + usage + " in " + layer);
}

// Runs `step` on `values` uploaded into its input; returns its output `out` (its first when
// kNoTensor), decoded.
std::vector<float> run_step_on(Backend& be, Plan& plan, PlanStep& step,
                               const std::vector<float>& values, TensorId out = kNoTensor) {
    Tensor& in = plan.tensor(step.inputs[0]);
    std::vector<double> v(values.begin(), values.end());
    std::vector<unsigned char> bytes(in.bytes());
    convert_from_double(v.data(), bytes.data(), in.dtype, v.size());
    be.upload(bytes.data(), in);
    RunContext ctx;
    ctx.step = 1;
    step.run(be, ctx);
    return download_decoded(be, plan, plan.tensor(out == kNoTensor ? step.outputs[0] : out).name);
}

// The reference for blocks running down the columns of a rows x cols matrix: each column's
// values in order through quantize_blocks (MX: one call per column; NVFP4: the whole transposed
// matrix in one call, so its float32 tensor scale is the tensor's; rows must then be a multiple
// of 16 so its 1-D blocks are the 16x1 blocks). Back in row-major order.
std::vector<double> column_blocks_reference(const std::vector<double>& m, std::size_t rows,
                                            std::size_t cols, const BlockQuantConfig& config) {
    std::vector<double> t(rows * cols), out(rows * cols);
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) t[c * rows + r] = m[r * cols + c];
    std::vector<double> decoded;
    if (config.format == BlockFormat::NvFp4) {
        decoded = quantize_blocks(t, config).decoded;
    } else {
        for (std::size_t c = 0; c < cols; ++c) {
            const auto q = quantize_blocks(
                std::vector<double>(t.begin() + static_cast<std::ptrdiff_t>(c * rows),
                                    t.begin() + static_cast<std::ptrdiff_t>((c + 1) * rows)),
                config);
            decoded.insert(decoded.end(), q.decoded.begin(), q.decoded.end());
        }
    }
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) out[r * cols + c] = decoded[c * rows + r];
    return out;
}

// The same along the rows (1 x n blocks; NVFP4 over the whole matrix, cols a multiple of 16).
std::vector<double> row_blocks_reference(const std::vector<double>& m, std::size_t rows,
                                         std::size_t cols, const BlockQuantConfig& config) {
    std::vector<double> t(rows * cols);
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) t[c * rows + r] = m[r * cols + c];
    const std::vector<double> q = column_blocks_reference(t, cols, rows, config); // t's layout
    std::vector<double> out(rows * cols);
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) out[r * cols + c] = q[c * rows + r];
    return out;
}

// H16 by Sylvester's construction, H(2n) = [[H, H], [H, -H]], written out here apart from the
// engine's butterfly.
std::vector<std::vector<double>> sylvester_h16() {
    std::vector<std::vector<double>> h{{1.0}};
    while (h.size() < 16) {
        const std::size_t n = h.size();
        std::vector<std::vector<double>> next(2 * n, std::vector<double>(2 * n));
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                next[i][j] = next[i][j + n] = next[i + n][j] = h[i][j];
                next[i + n][j + n] = -h[i][j];
            }
        h = std::move(next);
    }
    return h;
}

// (1/4) H16 · diag(signs) applied to each group of 16 rows of a rows x cols matrix (rows padded
// with zeros to a multiple of 16), in float64.
std::vector<double> reference_hadamard(const std::vector<double>& m, std::size_t rows,
                                       std::size_t cols, const std::array<float, 16>& signs) {
    const auto h = sylvester_h16();
    const std::size_t padded = (rows + 15) / 16 * 16;
    std::vector<double> in(padded * cols, 0.0), out(padded * cols, 0.0);
    std::copy(m.begin(), m.end(), in.begin());
    for (std::size_t g = 0; g < padded; g += 16)
        for (std::size_t c = 0; c < cols; ++c)
            for (std::size_t i = 0; i < 16; ++i) {
                double sum = 0;
                for (std::size_t j = 0; j < 16; ++j)
                    sum += h[i][j] * static_cast<double>(signs[j]) * in[(g + j) * cols + c];
                out[(g + i) * cols + c] = sum / 4;
            }
    return out;
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
        CHECK(!pn.quant->hadamard);
        const Experiment h =
            experiment_from_json(experiment_json("nvfp4", R"({"hadamard": true})"), "x.json");
        CHECK(*h.recipe->hadamard);
        CHECK(policy_with_recipe(h.policy, h.recipe).quant->hadamard);
        CHECK_EQ(experiment_from_json(experiment_to_json(h), "y.json"), h);
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
        new_row("hadamard on mxfp4") << "mxfp4"
                                     << R"({"hadamard": true})"
                                     << "recipe.hadamard: only for policy nvfp4 (this is mxfp4)";
        new_row("hadamard on fp8") << "mixed_float8"
                                   << R"({"hadamard": false})"
                                   << "recipe.hadamard: only for policy nvfp4";
        new_row("hadamard type") << "nvfp4"
                                 << R"({"hadamard": "yes"})"
                                 << "recipe.hadamard";
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
        // dense_2 and dense_3: activation, weight, gradient each, and each a column-wise copy
        // (MX blocks run along one dimension); dense_1 (bfloat16): none.
        CHECK_EQ(plan->quant.size(), std::size_t(12));
        int columnwise = 0;
        for (const PlanQuant& q : plan->quant) columnwise += q.columnwise ? 1 : 0;
        CHECK_EQ(columnwise, 6);
        for (const PlanQuant& q : plan->quant) CHECK(q.layer != model.layer(1).name());
        std::vector<std::string> producer(plan->tensors.size());
        for (const PlanStep& s : plan->steps)
            for (TensorId o : s.outputs) producer[static_cast<std::size_t>(o)] = s.op;
        int gemms = 0;
        for (const PlanStep& s : plan->steps) {
            if (s.op.rfind("gemm", 0) != 0 || s.layer == model.layer(1).name()) continue;
            ++gemms;
            // Each GEMM reads the copies blocked along its own reduction dimension.
            // A column-wise copy is made by its row-wise copy's step (one pass over the source
            // where the engine can: "quantize activation: mxfp8_e4m3 1×32, and column-wise for
            // dW: mxfp8_e4m3 32×1"), or alone where there is no row-wise copy (a first layer's
            // gradient: no dX reads one).
            const auto made_by = [](const std::string& from, const std::string& role,
                                    const std::string& usage) {
                if (usage.rfind(":", 0) == 0) return from.rfind("quantize " + role + usage, 0) == 0;
                return from.rfind("quantize " + role + " " + usage, 0) == 0 ||
                       (from.rfind("quantize " + role + ": ", 0) == 0 &&
                        from.find(", and " + usage) != std::string::npos);
            };
            std::string role[2] = {"activation", "weight"}, usage[2] = {": ", ": "};
            if (s.op == "gemm dW=Xᵀ·dZ")
                role[1] = "gradient", usage[0] = usage[1] = "column-wise for dW: mxfp8_e4m3 32×1";
            else if (s.op == "gemm dX=dZ·Wᵀ")
                role[0] = "gradient", usage[0] = ": mxfp8_e4m3 1×32",
                usage[1] = "column-wise for dX: mxfp8_e4m3 1×32";
            for (std::size_t i = 0; i < 2; ++i) {
                const std::string& from = producer[static_cast<std::size_t>(s.inputs[i])];
                CHECK_MSG(made_by(from, role[i], usage[i]), (s.op + " reads " + from).c_str());
            }
        }
        CHECK_EQ(gemms, 6); // forward, dW and dX of two layers
        // An inference plan makes no column-wise copies (nothing would read them).
        CompileOptions eval = options;
        eval.inference_only = true;
        const auto inference = compile(model, eval, be); // kept: the loop reads into it
        CHECK(!inference->quant.empty());
        for (const PlanQuant& q : inference->quant) CHECK(!q.columnwise);
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
        const std::vector<float> xq = download_decoded(be, *plan, "input:bfloat16:q");
        const std::vector<float> w = download(be, plan->tensor(plan->params[0].variable));
        const std::string wname = plan->tensor(plan->params[0].variable).name + ":q";
        const std::vector<float> wq = download_decoded(be, *plan, wname);
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

    void columnwiseCopiesMatchBlockReference_data() {
        add_column<std::string>("policy");
        new_row("mxfp8_e4m3") << "mxfp8_e4m3";
        new_row("mxfp4") << "mxfp4";
        new_row("nvfp4 (16x16 weight tiles serve both GEMMs)") << "nvfp4";
    }

    void columnwiseCopiesMatchBlockReference() {
        // dW = Xᵀ·dZ reduces over the batch, dX = dZ·Wᵀ over the units: the engine's copies for
        // them are blocked down the batch (X, dZ) and along the units (W), quantised from the
        // high-precision tensors, and equal the block reference on those blocks bit for bit.
        // 48 rows: MX blocks of 32 leave a partial one, NVFP4's 16 divide them; 10 units: a
        // partial MX block along the units.
        FETCH(std::string, policy);
        CpuBackend be;
        RecipeOptions o;
        if (policy == "nvfp4") o.stochastic_gradients = false; // nearest, for a bit-exact check
        const Policy p = policy_with_recipe(policy, o);
        const bool nv = policy == "nvfp4";
        const std::int64_t batch = 48, in = 32, hidden = 40, units = 10;
        const Model* model = nullptr;
        auto plan = mlp2_plan(be, p, in, hidden, units, batch, &model);
        const std::string l1 = model->layer(0).name(), l2 = model->layer(1).name();
        const auto as = p.quant->columnwise(QuantRole::Activation);
        const auto gs = p.quant->columnwise(QuantRole::Gradient);
        const auto ws = p.quant->columnwise(QuantRole::Weight);
        CHECK(as.has_value() && gs.has_value());
        CHECK_EQ(as->block_rows, nv ? 16 : 32);
        CHECK_EQ(as->block_cols, 1);
        CHECK_EQ(gs->block_rows, nv ? 16 : 32);
        CHECK_EQ(ws.has_value(), !nv);

        // X: the forward's training-only column-wise step, from the bfloat16 input. Rows scaled
        // by 2^0 .. 2^-15: the power-of-two MX scales make a row's rounding scale-free, so only
        // blocks spanning rows (down a column) reach the subnormals and flush to zero.
        std::vector<float> x = grid_input(batch, in);
        for (std::int64_t r = 0; r < batch; ++r)
            for (std::int64_t c = 0; c < in; ++c)
                x[static_cast<std::size_t>(r * in + c)] *= std::ldexp(1.0f, -3 * (r % 6));
        run_forward(*plan, be, x);
        const std::vector<float> xc = download_decoded(be, *plan, "input:bfloat16:q colwise");
        const std::vector<double> ref_x =
            column_blocks_reference(std::vector<double>(x.begin(), x.end()), batch, in, as->block);
        int differs = 0;
        const std::vector<float> xr = download_decoded(be, *plan, "input:bfloat16:q");
        for (std::size_t i = 0; i < x.size(); ++i) {
            CHECK_EQ(bits(xc[i]), bits(static_cast<float>(ref_x[i])));
            differs += xc[i] != xr[i];
        }
        CHECK(differs > 0); // not the row-wise copy

        // W (dense_2, 40 x 10): blocks along the units for dX; NVFP4's tiles need no copy.
        const Tensor& w_master = plan->tensor(plan->params[2].variable);
        const std::vector<float> w = download(be, w_master);
        const PlanStep& fwd = layer_step(*plan, l2, "gemm+bias");
        const PlanStep& dx = layer_step(*plan, l2, "gemm dX");
        if (nv) {
            bool copy = false;
            for (const Tensor& t : plan->tensors)
                copy = copy || t.name == w_master.name + ":q colwise";
            CHECK(!copy);
            CHECK_EQ(dx.inputs[1], fwd.inputs[1]); // the one 16x16-tiled copy
        } else {
            const std::vector<float> wc =
                download(be, find_tensor(*plan, w_master.name + ":q colwise"));
            const std::vector<double> ref_w = row_blocks_reference(
                std::vector<double>(w.begin(), w.end()), hidden, units, ws->block);
            for (std::size_t i = 0; i < w.size(); ++i)
                CHECK_EQ(bits(wc[i]), bits(static_cast<float>(ref_w[i])));
            CHECK(dx.inputs[1] != fwd.inputs[1]);
            CHECK_EQ(plan->tensor(dx.inputs[1]).name, w_master.name + ":q colwise");
        }

        // dZ (dense_2, 48 x 10): down the batch for dW; the row-wise copy along the units for dX.
        const std::vector<float> dz = grid_input(batch, units);
        const CopyStep dz_col = column_copy_step(*plan, l2, "gradient", "column-wise for dW");
        const std::vector<float> dzc = run_step_on(be, *plan, dz_col.step, dz, dz_col.copy);
        const std::vector<double> dzd(dz.begin(), dz.end());
        const std::vector<double> ref_dzc = column_blocks_reference(dzd, batch, units, gs->block);
        for (std::size_t i = 0; i < dz.size(); ++i)
            CHECK_EQ(bits(dzc[i]), bits(static_cast<float>(ref_dzc[i])));
        PlanStep& dz_row = layer_step(*plan, l2, "quantize gradient: ");
        if (!nv) { // (NVFP4's 1x16 blocks over 10 units would not line up with a 1-D reference)
            const std::vector<float> dzr = run_step_on(be, *plan, dz_row, dz);
            const std::vector<double> ref_dzr =
                row_blocks_reference(dzd, batch, units, p.quant->gradient.block);
            for (std::size_t i = 0; i < dz.size(); ++i)
                CHECK_EQ(bits(dzr[i]), bits(static_cast<float>(ref_dzr[i])));
        }
        // The GEMMs read them: dW the two column-wise copies, dX the row-wise dZ.
        const PlanStep& dw = layer_step(*plan, l2, "gemm dW");
        CHECK_EQ(dw.inputs[1], dz_col.copy);
        CHECK_EQ(plan->tensor(dw.inputs[0]).name, l1 + "/output:q colwise");
        CHECK_EQ(dx.inputs[0], dz_row.outputs[0]);
        // Memory counts each copy and its scales: 48 x 32 X values in 32x1 (or 16x1) blocks.
        CHECK_EQ(find_tensor(*plan, "input:bfloat16:q colwise scales").numel(),
                 std::int64_t(nv ? 3 * 32 : 2 * 32));
    }

    // A column-wise copy joins its row-wise copy's step: in training the step makes both in one
    // fake_quantize_pair call (the row-wise copy first, as its step's first output), in
    // evaluation only the row-wise copy (no backward GEMM reads the other).
    void joinedCopiesAreOnePairCallInTraining() {
        class CallRecorder final : public ForwardingBackend {
        public:
            using ForwardingBackend::ForwardingBackend;
            bool supports_fake_quantize() const override { return true; }
            void fake_quantize(const FakeQuantArgs& a) override {
                singles.push_back(a.dst);
                m_inner.fake_quantize(a);
            }
            void fake_quantize_pair(const FakeQuantArgs& r, const FakeQuantArgs& c) override {
                pairs.push_back({r.dst, c.dst});
                m_inner.fake_quantize_pair(r, c);
            }
            std::vector<const Tensor*> singles;
            std::vector<std::pair<const Tensor*, const Tensor*>> pairs;
        };
        CpuBackend cpu;
        CallRecorder be(cpu);
        const Model* model = nullptr;
        auto plan = mlp2_plan(be, policy_from_name("mxfp8_e4m3"), 64, 48, 10, 40, &model);
        be.upload(grid_input(40, 64).data(), plan->tensor(plan->input));
        int joined = 0;
        for (PlanStep& s : plan->steps) {
            if (s.op.rfind("quantize", 0) != 0 ||
                s.op.find(", and column-wise") == std::string::npos)
                continue;
            ++joined;
            CHECK_EQ(s.outputs.size(), std::size_t{2});
            const Tensor* row = &plan->tensor(s.outputs[0]);
            const Tensor* col = &plan->tensor(s.outputs[1]);
            CHECK_MSG(col->name.ends_with(":q colwise"), col->name.c_str());
            RunContext ctx;
            ctx.step = 1;
            be.pairs.clear();
            be.singles.clear();
            s.run(be, ctx);
            CHECK_EQ(be.pairs.size(), std::size_t{1});
            CHECK(be.singles.empty());
            if (!be.pairs.empty()) {
                CHECK(be.pairs[0].first == row);
                CHECK(be.pairs[0].second == col);
            }
            ctx.training = false;
            be.pairs.clear();
            s.run(be, ctx);
            CHECK(be.pairs.empty());
            CHECK_EQ(be.singles.size(), std::size_t{1});
            if (!be.singles.empty()) CHECK(be.singles[0] == row);
        }
        // X1 and X2, W2 (dense_1 computes no dX: no column-wise W1), and dZ2 (dZ1 has only its
        // column-wise copy).
        CHECK_EQ(joined, 4);
    }

    // MX copies hold bfloat16 values only (an E8M0 power of two times an element of at most 4
    // significant bits), so a Dense layer computing in bfloat16 stores them in bfloat16 and its
    // GEMMs read bfloat16 operands, as mixed_bfloat16's do (issue 26: tensor cores at half the
    // bytes). The same copies in float32 (the Dense layers of a float32-compute policy) hold the
    // same values: the plan marks their GEMMs exact_in_bfloat16, and the CUDA engine multiplies
    // them in bfloat16. NVFP4's copies leave their float32 tensor scale to the GEMM, so they hold
    // bfloat16 values too; per-tensor FP8's scale makes values of up to 24 bits, which stay
    // float32.
    void mxGemmOperandsAreBfloat16Exact_data() {
        add_column<std::string>("policy");
        add_column<bool>("exact");
        new_row("mxfp8_e4m3") << "mxfp8_e4m3" << true;
        new_row("mxfp8_e5m2") << "mxfp8_e5m2" << true;
        new_row("mxfp6_e3m2") << "mxfp6_e3m2" << true;
        new_row("mxfp4") << "mxfp4" << true;
        new_row("nvfp4") << "nvfp4" << true;
        new_row("mixed_float8 (fake quantisation)") << "mixed_float8" << false;
    }
    void mxGemmOperandsAreBfloat16Exact() {
        FETCH(std::string, policy);
        FETCH(bool, exact);
        CpuBackend cpu;
        GemmFlagRecorder be(cpu);
        const Policy p = policy_from_name(policy);
        const Model* model = nullptr;
        auto plan = mlp2_plan(be, p, 64, 48, 10, 40, &model);
        // Every quantise step and GEMM in plan order on a spread of magnitudes: the forward
        // steps from an input, then the backward GEMMs and quantisations on what they hold.
        std::vector<float> x = grid_input(40, 64);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] *= std::ldexp(1.0f, int(i % 13) - 6);
        be.upload(x.data(), plan->tensor(plan->input));
        RunContext ctx;
        ctx.step = 1;
        for (PlanStep& s : plan->steps)
            if (s.op.rfind("quantize", 0) == 0 || s.op.find("gemm") != std::string::npos)
                s.run(be, ctx);
        CHECK_EQ(be.flags.size(), std::size_t{5}); // 2 forward, dW twice, dX once
        for (std::size_t i = 0; i < be.flags.size(); ++i) {
            CHECK_MSG(be.flags[i] == exact, "GEMM " + std::to_string(i));
            CHECK_MSG(be.bfloat16_operands[i] == exact, "GEMM " + std::to_string(i) + " dtypes");
        }
        // The same policy computing in float32: float32 copies holding bfloat16 values.
        Policy wide = p;
        wide.compute = DType::Float32;
        GemmFlagRecorder be32(cpu);
        auto plan32 = mlp2_plan(be32, wide, 64, 48, 10, 40, &model);
        be32.upload(x.data(), plan32->tensor(plan32->input));
        for (PlanStep& s : plan32->steps)
            if (s.op.rfind("quantize", 0) == 0 || s.op.find("gemm") != std::string::npos)
                s.run(be32, ctx);
        CHECK_EQ(be32.flags.size(), std::size_t{5});
        for (std::size_t i = 0; i < be32.flags.size(); ++i) {
            CHECK_MSG(be32.flags[i] == exact, "float32 compute, GEMM " + std::to_string(i));
            CHECK_MSG(!be32.bfloat16_operands[i], "float32 compute, GEMM " + std::to_string(i));
            if (exact)
                CHECK_MSG(be32.operands_exact[i],
                          "float32 compute, GEMM " + std::to_string(i) + " operands");
        }
        // (NVFP4's and FP8's copies may happen to be exact for some data, e.g. a power-of-two
        // amax; only a format's guarantee lets the engine rely on it.)
        QuantSpec dense = p.quant->activation; // as a Dense layer's copy (PlanBuilder)
        if (dense.scaling == QuantScaling::Block) dense.block.tensor_scale_in_gemm = true;
        CHECK(!decodes_exactly_in_bfloat16(dense) == !exact);
        for (bool scaled : be.scaled) // NVFP4's tensor scales reach every GEMM
            CHECK_EQ(scaled, policy == "nvfp4");
    }

    void hadamardMatchesSylvesterReference() {
        // nvfp4 with recipe.hadamard: the column-wise X and dZ copies are (1/4) H16 · diag(s)
        // applied down the batch in runs of 16 (40 rows padded with zeros to 48), then cast in
        // 16x1 NVFP4 blocks. Against H16 built here by Sylvester's construction, bit for bit.
        RecipeOptions o;
        o.hadamard = true;
        o.stochastic_gradients = false;
        o.seed = 5;
        const Policy p = policy_with_recipe("nvfp4", o);
        CHECK(p.quant->hadamard);
        const auto as = p.quant->columnwise(QuantRole::Activation);
        const auto gs = p.quant->columnwise(QuantRole::Gradient);
        CHECK(as->hadamard && gs->hadamard);
        CHECK_EQ(as->hadamard_seed, gs->hadamard_seed); // one M for both: Mᵀ·M = I cancels
        CHECK(!p.quant->activation.hadamard);           // the forward's copies are untouched
        CHECK(!p.quant->columnwise(QuantRole::Weight).has_value());
        const std::array<float, 16> signs = hadamard_signs(o.seed.value());
        int negative = 0;
        for (float v : signs) {
            CHECK(v == 1.0f || v == -1.0f);
            negative += v < 0;
        }
        CHECK(negative > 0 && negative < 16);
        CHECK(hadamard_signs(5) == signs);
        CHECK(hadamard_signs(6) != signs);

        CpuBackend be;
        const std::int64_t batch = 40, in = 24, hidden = 32, units = 10;
        const Model* model = nullptr;
        auto plan = mlp2_plan(be, p, in, hidden, units, batch, &model);
        const std::string l2 = model->layer(1).name();
        const PlanStep& xs =
            column_copy_step(*plan, model->layer(0).name(), "activation", "column-wise for dW")
                .step;
        CHECK_MSG(xs.op.find("random Hadamard 16, tensor scale in the GEMM, rows padded 40→48") !=
                      std::string::npos,
                  xs.op.c_str());
        const std::vector<float> x = grid_input(batch, in);
        run_forward(*plan, be, x);
        const Tensor& xct = find_tensor(*plan, "input:bfloat16:q colwise");
        CHECK_EQ(xct.rows(), std::int64_t(48));
        const std::vector<float> xc = download_decoded(be, *plan, xct.name);
        // Grid values k/16: the float64 sums are exact, so both sides hold the exact transform.
        const std::vector<double> hx =
            reference_hadamard(std::vector<double>(x.begin(), x.end()), batch, in, signs);
        const std::vector<double> ref_x = column_blocks_reference(hx, 48, in, as->block);
        for (std::size_t i = 0; i < ref_x.size(); ++i)
            CHECK_EQ(bits(xc[i]), bits(static_cast<float>(ref_x[i])));
        const CopyStep dzs = column_copy_step(*plan, l2, "gradient", "column-wise for dW");
        const std::vector<float> dz = grid_input(batch, units);
        const std::vector<float> dzc = run_step_on(be, *plan, dzs.step, dz, dzs.copy);
        CHECK_EQ(dzc.size(), std::size_t(48 * units));
        const std::vector<double> hdz =
            reference_hadamard(std::vector<double>(dz.begin(), dz.end()), batch, units, signs);
        const std::vector<double> ref_dz = column_blocks_reference(hdz, 48, units, gs->block);
        for (std::size_t i = 0; i < ref_dz.size(); ++i)
            CHECK_EQ(bits(dzc[i]), bits(static_cast<float>(ref_dz[i])));
        // dW's GEMM reads the two padded copies (48 rows each).
        const PlanStep& dw = layer_step(*plan, l2, "gemm dW");
        CHECK_EQ(plan->tensor(dw.inputs[0]).rows(), std::int64_t(48));
        CHECK_EQ(dw.inputs[1], dzs.copy);
    }

    // An engine that quantises but has no Hadamard kernel (an engine added later, say) is refused
    // when the plan is bound, naming the layer and the field; without the transform it binds.
    void hadamardNeedsAnEngineThatHasIt() {
        class NoHadamard final : public ForwardingBackend {
        public:
            using ForwardingBackend::ForwardingBackend;
            bool supports_fake_quantize() const override { return true; }
        };
        CpuBackend cpu;
        NoHadamard engine(cpu);
        RecipeOptions o;
        o.hadamard = true;
        const Model* model = nullptr;
        const std::string message = error_of(
            [&] { mlp2_plan(engine, policy_with_recipe("nvfp4", o), 24, 32, 10, 40, &model); },
            ErrorKind::Config);
        CHECK_MSG(message.find("layer 'dense_") != std::string::npos &&
                      message.find("recipe.hadamard") != std::string::npos,
                  message);
        o.hadamard = false;
        CHECK(mlp2_plan(engine, policy_with_recipe("nvfp4", o), 24, 32, 10, 40, &model) != nullptr);
        o.hadamard = true;
        CHECK(mlp2_plan(cpu, policy_with_recipe("nvfp4", o), 24, 32, 10, 40, &model) != nullptr);
    }

    void hadamardPreservesTheProduct() {
        // Quantisation off: Hᵀ·H = 16 I exactly, so (MX)ᵀ·(MdZ) = Xᵀ·dZ over a zero-padded batch
        // (float64, to rounding); the engine's float32 transform keeps it to float32 rounding.
        const auto h = sylvester_h16();
        for (std::size_t i = 0; i < 16; ++i)
            for (std::size_t j = 0; j < 16; ++j) {
                double dot = 0;
                for (std::size_t k = 0; k < 16; ++k) dot += h[k][i] * h[k][j];
                CHECK_EQ(dot, i == j ? 16.0 : 0.0);
            }
        const std::size_t batch = 40, in = 6, units = 5, padded = 48;
        std::vector<double> x(batch * in), dz(batch * units);
        for (std::size_t i = 0; i < x.size(); ++i)
            x[i] = std::sin(0.7 * static_cast<double>(i) + 0.3) * (i % 37 == 0 ? 40.0 : 1.0);
        for (std::size_t i = 0; i < dz.size(); ++i)
            dz[i] = std::cos(1.3 * static_cast<double>(i)) * 1e-3;
        const std::array<float, 16> signs = hadamard_signs(11);
        const std::vector<double> hx = reference_hadamard(x, batch, in, signs);
        const std::vector<double> hdz = reference_hadamard(dz, batch, units, signs);
        // The engine's transform on float32 copies of the same (zero-padded) values.
        std::vector<float> fx(padded * in, 0.0f), fdz(padded * units, 0.0f);
        for (std::size_t i = 0; i < x.size(); ++i) fx[i] = static_cast<float>(x[i]);
        for (std::size_t i = 0; i < dz.size(); ++i) fdz[i] = static_cast<float>(dz[i]);
        std::vector<double> x32(fx.begin(), fx.begin() + static_cast<std::ptrdiff_t>(x.size()));
        std::vector<double> dz32(fdz.begin(), fdz.begin() + static_cast<std::ptrdiff_t>(dz.size()));
        random_hadamard_rows(fx, padded, in, signs);
        random_hadamard_rows(fdz, padded, units, signs);
        for (std::size_t a = 0; a < in; ++a)
            for (std::size_t b = 0; b < units; ++b) {
                double plain = 0, transformed = 0, engine = 0, plain32 = 0, mag = 0;
                for (std::size_t r = 0; r < batch; ++r) {
                    plain += x[r * in + a] * dz[r * units + b];
                    plain32 += x32[r * in + a] * dz32[r * units + b];
                    mag += std::fabs(x[r * in + a] * dz[r * units + b]);
                }
                for (std::size_t r = 0; r < padded; ++r) {
                    transformed += hx[r * in + a] * hdz[r * units + b];
                    engine += static_cast<double>(fx[r * in + a]) * fdz[r * units + b];
                }
                CHECK_MSG(std::fabs(transformed - plain) <= mag * 1e-14,
                          describe_value(transformed) + " vs " + describe_value(plain));
                // float32 rounding of each transformed value: a few units of 2^-24 of the sum
                CHECK_MSG(std::fabs(engine - plain32) <= mag * 4 * 0x1p-24,
                          describe_value(engine) + " vs " + describe_value(plain32));
            }
        // Its outliers are spread: the 40 at row 0 no longer stands alone in its column.
        double before = 0, after = 0;
        for (std::size_t r = 0; r < 16; ++r) {
            before = std::max(before, std::fabs(x[r * in]));
            after = std::max(after, std::fabs(hx[r * in]));
        }
        CHECK(after < before / 2);
    }

    void hadamardRunMatchesRows() {
        // The CUDA kernel transforms one run of 16 rows of a column at a time with
        // hadamard_math::random_hadamard_run; the CPU engine's random_hadamard_rows works on
        // chunks of 64 columns. Both must give the same bits, also where the float64 sums round
        // (values over more than 29 binades) and across a chunk boundary (70 columns).
        const std::size_t rows = 32, cols = 70;
        std::vector<float> rows_data(rows * cols);
        for (std::size_t i = 0; i < rows_data.size(); ++i)
            rows_data[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i) + 0.1) *
                                              std::ldexp(1.0, static_cast<int>(i % 61) - 30));
        rows_data[3] = 0x1p-140f; // a float32 subnormal
        rows_data[5 * cols] = -3.0e38f;
        std::vector<float> run_data = rows_data;
        const std::array<float, 16> signs = hadamard_signs(23);
        float s[16];
        std::copy(signs.begin(), signs.end(), s);
        random_hadamard_rows(rows_data, rows, cols, signs);
        for (std::size_t g = 0; g < rows; g += 16)
            for (std::size_t c = 0; c < cols; ++c) {
                float v[16];
                for (std::size_t i = 0; i < 16; ++i) v[i] = run_data[(g + i) * cols + c];
                hadamard_math::random_hadamard_run(v, s);
                for (std::size_t i = 0; i < 16; ++i) run_data[(g + i) * cols + c] = v[i];
            }
        for (std::size_t i = 0; i < rows_data.size(); ++i)
            CHECK_MSG(bits(rows_data[i]) == bits(run_data[i]),
                      "element " + std::to_string(i) + ": " + describe_value(rows_data[i]) +
                          " vs " + describe_value(run_data[i]));
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
        // quant records per step: 2 Dense x 3 roles, plus the column-wise copies (MX: X and dZ
        // of both, W of the second only; NVFP4: its 16x16 weight tiles need none; per-tensor
        // FP8: none), less the first layer's row-wise dZ where it has a column-wise one: the
        // first computes no dX.
        add_column<int>("tensors");
        for (const char* p : kQuantPolicies)
            new_row(p) << p << ""
                       << (std::string(p) == "mixed_float8" ? 6
                           : std::string(p) == "nvfp4"      ? 9
                                                            : 10);
        new_row("mixed_float8 current") << "mixed_float8"
                                        << "current" << 6;
        new_row("mixed_float8 block") << "mixed_float8"
                                      << "block" << 9; // 128x128 weights serve both GEMMs
        new_row("nvfp4 hadamard, batch 40") << "nvfp4"
                                            << "hadamard" << 9;
    }

    void trainingRunsUnderEveryQuantisedPolicy() {
        FETCH(std::string, policy);
        FETCH(std::string, kind);
        FETCH(int, tensors);
        static const Mnist data = synthetic_mnist(256, 64);
        Experiment e;
        e.model.layers = {flatten(), dense(32, Activation::Relu), dense(10),
                          activation(Activation::Softmax, "float32")};
        e.policy = policy;
        e.batch_size = 32;
        if (kind == "hadamard") {
            e.recipe = RecipeOptions{};
            e.recipe->hadamard = true;
            e.batch_size = 40; // the transform pads the batch to 48
        } else if (!kind.empty()) {
            e.recipe = with_kind(kind);
        }
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
        CHECK_EQ(records.back().tensors.size(), static_cast<std::size_t>(tensors));
        int columnwise = 0;
        for (const QuantTensorRecord& t : records.back().tensors) {
            CHECK_MSG(t.role == "activation" || t.role == "weight" || t.role == "gradient" ||
                          t.role == "activation_columnwise" || t.role == "weight_columnwise" ||
                          t.role == "gradient_columnwise",
                      t.role.c_str());
            columnwise += t.role.ends_with("_columnwise") ? 1 : 0;
            CHECK_MSG(t.amax > 0 && t.scale > 0, t.format.c_str());
            CHECK(t.clipped >= 0 && t.clipped <= 1 && t.flushed >= 0 && t.flushed <= 1);
            CHECK(t.count > 0 && t.blocks > 0);
        }
        // Row-wise: 2 Dense x 3 roles, but the first layer's dZ where it has a column-wise copy.
        CHECK_EQ(tensors - columnwise, columnwise > 0 ? 5 : 6);
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

MANTISSA_TEST_MAIN(TestQuantTrain, mxGemmOperandsAreBfloat16Exact, policiesCarryTheirRecipes,
                   recipeReadsAndRoundTrips, badRecipesNameTheField, planQuantisesEveryDenseInput,
                   paddingIsNamedAndCounted, forwardMatchesBlockReference,
                   columnwiseCopiesMatchBlockReference, joinedCopiesAreOnePairCallInTraining,
                   hadamardMatchesSylvesterReference, hadamardNeedsAnEngineThatHasIt,
                   hadamardPreservesTheProduct, hadamardRunMatchesRows,
                   perTensorFp8MatchesTheFormula, delayedScalingLagsASpike,
                   trainingRunsUnderEveryQuantisedPolicy, initializeResetsDelayedScaling,
                   quantRecordIsWrittenAsJsonl)
