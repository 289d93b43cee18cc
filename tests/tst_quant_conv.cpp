// Quantised convolutions under the frontier policies (issue 18) on the CPU engine: the quantise
// steps in front of every Conv2D input, their 2-D views along the reduction (X as N·H·W × C, W as
// kh·kw·in_c × out_c, dZ as N·OH·OW × out_c) bit for bit against the block-quant reference, the
// padding named and counted, the bfloat16 override, and a short cnn training under mixed_float8.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/backend/cpu/cpu_backend.h"
#include "core/data/synthetic_mnist.h"
#include "core/error.h"
#include "core/nn/model.h"
#include "core/numeric/block_quant.h"
#include "core/numeric/element_format.h"
#include "core/numeric/half.h"
#include "core/numeric/policy.h"
#include "core/numeric/tensor_quant.h"
#include "core/plan/compile.h"
#include "core/train/experiment.h"
#include "core/train/trainer.h"
#include "tests/plan_steps.h"
#include "tests/test_support.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;
using namespace mantissa::test;

namespace {

std::uint32_t bits(float v) {
    std::uint32_t b;
    std::memcpy(&b, &v, 4);
    return b;
}

// Values on a 1/16 grid up to 12.5 (exact in bfloat16, so the input cast changes nothing), with
// one large value per pixel so that blocks differ.
std::vector<float> grid_input(std::int64_t pixels, std::int64_t channels) {
    std::vector<float> x(static_cast<std::size_t>(pixels * channels));
    for (std::int64_t i = 0; i < pixels * channels; ++i) {
        const int k = static_cast<int>((i * 37 + 11) % 201) - 100; // -100 .. 100
        x[static_cast<std::size_t>(i)] = static_cast<float>(k) / 16.0f;
    }
    for (std::int64_t p = 0; p < pixels; p += 3)
        x[static_cast<std::size_t>(p * channels + p % channels)] = 12.5f;
    return x;
}

// A cnn like the preset's (two convolutions, pooling, a Dense head, a float32 softmax).
ModelSpec small_cnn(std::int64_t filters1, std::int64_t filters2) {
    ModelSpec m;
    m.layers = {conv(filters1, 3, Activation::Relu),
                maxpool(),
                conv(filters2, 3, Activation::Relu),
                maxpool(),
                flatten(),
                dense(10),
                activation(Activation::Softmax, "float32")};
    return m;
}

std::unique_ptr<Plan> compile_plan(Backend& be, const ModelSpec& spec, const Policy& policy,
                                   std::int64_t batch) {
    static std::vector<std::unique_ptr<Model>> models; // kept alive for the plans' lifetimes
    models.push_back(std::make_unique<Model>(spec, policy));
    CompileOptions options;
    options.policy = policy;
    options.batch_size = batch;
    auto plan = compile(*models.back(), options, be);
    plan->initialize(be, 7);
    return plan;
}

// Per-tensor FP8, current scaling, written out from TE's definition: scale = 448 / amax in
// float32, code = E4M3(v * scale), value = code * (1 / scale).
std::vector<double> current_fp8_reference(const std::vector<float>& v) {
    float amax = 0;
    for (float x : v) amax = std::max(amax, std::fabs(x));
    const float scale = 448.0f / amax, inv = 1.0f / scale;
    std::vector<double> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
        const std::uint32_t code =
            encode_element(static_cast<double>(v[i]) * scale, ElementFormat::Float8E4M3);
        out[i] = static_cast<float>(decode_element(code, ElementFormat::Float8E4M3) * inv);
    }
    return out;
}

RecipeOptions with_kind(const std::string& kind) {
    RecipeOptions o;
    o.kind = kind;
    return o;
}

} // namespace

class TestQuantConv {

public:
    void convInputsMatchTheReference_data() {
        add_column<std::string>("policy");
        add_column<int>("channels");
        new_row("mxfp8_e4m3, 40 channels (a padded block per pixel)") << "mxfp8_e4m3" << 40;
        new_row("mxfp8_e4m3, 1 channel (MNIST's first conv)") << "mxfp8_e4m3" << 1;
        new_row("mxfp4, 40 channels") << "mxfp4" << 40;
        new_row("nvfp4, 48 channels (16x16 weight tiles)") << "nvfp4" << 48;
        new_row("mixed_float8 current, 40 channels") << "mixed_float8 current" << 40;
    }

    // The quantised X and W a convolution reads equal the reference encoders (tst_block_quant
    // checks those against exact rational arithmetic) applied on the views along the reduction:
    // X's blocks run along the channels of each pixel, W's down each column of kh·kw·in_c.
    void convInputsMatchTheReference() {
        FETCH(std::string, policy);
        FETCH(int, channels);
        CpuBackend be;
        const bool current = policy == "mixed_float8 current";
        const Policy p = current ? policy_with_recipe("mixed_float8", with_kind("current"))
                                 : policy_from_name(policy);
        const std::int64_t batch = 2, side = 6, filters = 20, c = channels;
        ModelSpec spec;
        spec.input = {side, side, c};
        spec.layers = {conv(filters, 3), flatten(), dense(10)};
        auto plan = compile_plan(be, spec, p, batch);
        const std::int64_t pixels = batch * side * side, k = 9 * c;
        const std::vector<float> x = grid_input(pixels, c);
        run_forward(*plan, be, x);
        std::vector<float> xq = download(be, find_tensor(*plan, "input:bfloat16:q"));
        const Tensor& wt = plan->tensor(plan->params[0].variable); // the conv's float32 kernel
        CHECK_EQ(wt.shape, (Shape{3, 3, c, filters}));
        const std::vector<float> w = download(be, wt);
        std::vector<float> wq = download(be, find_tensor(*plan, wt.name + ":q"));
        if (policy == "nvfp4") {
            // The copies leave the tensor scale to the convolution (issue 26): each holds
            // bfloat16 values, and each value times its scale is the decoded value.
            const float x_scale =
                download(be, find_tensor(*plan, "input:bfloat16:q tensor scale"))[0];
            const float w_scale = download(be, find_tensor(*plan, wt.name + ":q tensor scale"))[0];
            CHECK(x_scale > 0 && w_scale > 0);
            for (std::vector<float>* copy : {&xq, &wq}) {
                const float factor = copy == &xq ? x_scale : w_scale;
                for (float& v : *copy) {
                    CHECK_EQ(bits(bfloat16_bits_to_float(float_to_bfloat16_bits(v))), bits(v));
                    v = static_cast<float>(static_cast<double>(v) * factor);
                }
            }
        }
        const QuantSpec& as = p.quant->activation;
        const QuantSpec& ws = p.quant->weight;
        std::vector<double> ref_x(x.size()), ref_w(w.size());
        if (current) {
            ref_x = current_fp8_reference(x);
            ref_w = current_fp8_reference(w);
        } else if (as.block.format == BlockFormat::NvFp4) {
            // One float32 scale per tensor; 48 channels are 3 whole 16-blocks per pixel, so the
            // 1-D blocks of the whole tensor are the per-pixel ones.
            ref_x = quantize_blocks(std::vector<double>(x.begin(), x.end()), as.block).decoded;
            ref_w = quantize_blocks_2d(std::vector<double>(w.begin(), w.end()),
                                       static_cast<std::size_t>(k),
                                       static_cast<std::size_t>(filters), ws.block, 16)
                        .decoded;
        } else {
            for (std::int64_t px = 0; px < pixels; ++px) { // blocks along one pixel's channels
                std::vector<double> run(x.begin() + px * c, x.begin() + (px + 1) * c);
                const auto q = quantize_blocks(run, as.block);
                std::copy(q.decoded.begin(), q.decoded.end(), ref_x.begin() + px * c);
            }
            for (std::int64_t col = 0; col < filters; ++col) { // down each (kh·kw·in_c) column
                std::vector<double> run;
                for (std::int64_t r = 0; r < k; ++r)
                    run.push_back(w[static_cast<std::size_t>(r * filters + col)]);
                const auto q = quantize_blocks(run, ws.block);
                for (std::int64_t r = 0; r < k; ++r)
                    ref_w[static_cast<std::size_t>(r * filters + col)] =
                        q.decoded[static_cast<std::size_t>(r)];
            }
        }
        int changed_x = 0, changed_w = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            CHECK_EQ(bits(xq[i]), bits(static_cast<float>(ref_x[i])));
            changed_x += xq[i] != x[i];
        }
        for (std::size_t i = 0; i < w.size(); ++i) {
            CHECK_EQ(bits(wq[i]), bits(static_cast<float>(ref_w[i])));
            changed_w += wq[i] != w[i];
        }
        CHECK(changed_x > 0 && changed_w > 0); // the format did round something

        // The convolution multiplies the decoded values, accumulates in float32 and rounds its
        // bfloat16 output once: compare with a direct convolution of the references.
        const Tensor& yt = find_tensor(*plan, plan->quant.front().layer + "/output");
        std::vector<std::uint16_t> y(static_cast<std::size_t>(yt.numel()));
        be.download(yt, y.data());
        const std::int64_t out = side - 2;
        for (std::int64_t n = 0; n < batch; ++n)
            for (std::int64_t oh = 0; oh < out; ++oh)
                for (std::int64_t ow = 0; ow < out; ++ow)
                    for (std::int64_t f = 0; f < filters; ++f) {
                        double ref = 0, mag = 0;
                        for (std::int64_t i = 0; i < 3; ++i)
                            for (std::int64_t j = 0; j < 3; ++j)
                                for (std::int64_t ch = 0; ch < c; ++ch) {
                                    const auto xi = static_cast<std::size_t>(
                                        ((n * side + oh + i) * side + ow + j) * c + ch);
                                    const auto wi = static_cast<std::size_t>(
                                        ((i * 3 + j) * c + ch) * filters + f);
                                    const double t = ref_x[xi] * ref_w[wi];
                                    ref += t;
                                    mag += std::fabs(t);
                                }
                        const auto yi =
                            static_cast<std::size_t>(((n * out + oh) * out + ow) * filters + f);
                        const std::uint32_t b = static_cast<std::uint32_t>(y[yi]) << 16;
                        float got;
                        std::memcpy(&got, &b, 4);
                        CHECK_MSG(std::fabs(got - ref) <= mag * (1.0 / 128 + 1e-5),
                                  "y = " + describe_value(got) + ", reference " +
                                      describe_value(ref));
                    }
    }

    // The cnn preset's plan at batch 32: every convolution input has its quantise step, on the
    // view the plan view names, with the padding of MNIST's one-channel input named and counted.
    void cnnPlanListsTheQuantiseSteps() {
        CpuBackend be;
        const Experiment e =
            load_experiment(std::string(MANTISSA_SOURCE_DIR) + "/resources/experiments/cnn.json");
        const Policy policy = policy_from_name("mxfp8_e4m3");
        const Model model(e.model, policy);
        CompileOptions options;
        options.policy = policy;
        options.batch_size = 32;
        auto plan = compile(model, options, be);
        // Two Conv2D and two Dense layers, three roles each, and the column-wise copies the
        // backward products read (X and dZ for dW, W for dX); conv2d_1 computes no dX, so it
        // has neither W's column-wise copy nor dZ's row-wise one.
        CHECK_EQ(plan->quant.size(), std::size_t(12 + 2 * 4 + 3 - 1));
        std::vector<std::string> producer(plan->tensors.size());
        for (const PlanStep& s : plan->steps)
            for (TensorId o : s.outputs) producer[static_cast<std::size_t>(o)] = s.op;
        int convs = 0, bias_grads = 0;
        for (const PlanStep& s : plan->steps) {
            if (s.op.rfind("conv2d", 0) == 0) {
                ++convs;
                for (std::size_t i = 0; i < 2; ++i) {
                    const std::string& from = producer[static_cast<std::size_t>(s.inputs[i])];
                    CHECK_MSG(from.rfind("quantize ", 0) == 0, s.op + " reads " + from);
                }
                CHECK(s.op != "conv2d dW,db"); // the bias gradient is its own step
                // Each product reads copies blocked along its own reduction.
                const std::string& a = producer[static_cast<std::size_t>(s.inputs[0])];
                const std::string& b = producer[static_cast<std::size_t>(s.inputs[1])];
                // A column-wise copy is made by its row-wise copy's step ("quantize activation:
                // …, and column-wise for dW: …"), or alone where no row-wise copy is made (the
                // first layer's gradient: no dX).
                const auto made_by = [](const std::string& from, const std::string& role,
                                        const std::string& usage) {
                    return from.rfind("quantize " + role + " " + usage, 0) == 0 ||
                           (from.rfind("quantize " + role + ": ", 0) == 0 &&
                            from.find(", and " + usage) != std::string::npos);
                };
                if (s.op == "conv2d dW") {
                    CHECK_MSG(made_by(a, "activation", "column-wise for dW"), a);
                    CHECK_MSG(made_by(b, "gradient", "column-wise for dW"), b);
                } else if (s.op == "conv2d dX") {
                    CHECK_MSG(a.rfind("quantize gradient: ", 0) == 0, a);
                    CHECK_MSG(made_by(b, "weight", "column-wise for dX"), b);
                } else {
                    CHECK_MSG(a.rfind("quantize activation: ", 0) == 0, a);
                    CHECK_MSG(b.rfind("quantize weight: ", 0) == 0, b);
                }
            }
            if (s.op == "bias_grad" && s.layer.rfind("conv2d", 0) == 0) {
                ++bias_grads; // it reads dZ itself, not its quantised copy
                const std::string& from = producer[static_cast<std::size_t>(s.inputs[0])];
                CHECK_MSG(from.rfind("quantize ", 0) != 0, "bias_grad reads " + from);
            }
        }
        CHECK_EQ(convs, 5); // forward, dW and dX of each; conv2d_1 has no dX (it reads the data)
        CHECK_EQ(bias_grads, 2);
        // conv2d_1's input: 32·28·28 = 25088 pixels of one channel, one 1×32 block each.
        auto has_step = [&](const std::string& text) {
            for (const PlanStep& s : plan->steps)
                if (s.op.find(text) != std::string::npos) return true;
            return false;
        };
        CHECK(has_step("blocks on N·H·W×C = 25088×1, padded 25088×1→25088×32"));
        CHECK(has_step("blocks on kh·kw·in_c×out_c = 9×32, padded 9×32→32×32"));
        CHECK(has_step("blocks on N·H·W×out_c = 21632×32")); // 32·26·26, whole blocks
        CHECK(has_step("blocks on kh·kw·in_c×out_c = 288×64"));
        CHECK_EQ(find_tensor(*plan, "input:bfloat16:q scales").numel(), std::int64_t(25088));
        CHECK_EQ(find_tensor(*plan, "conv2d_1/kernel:q scales").numel(), std::int64_t(32));
        CHECK_EQ(find_tensor(*plan, "conv2d_2/kernel:q scales").numel(), std::int64_t(9 * 64));
        // Under mixed_bfloat16 nothing is quantised and dW,db stay one step.
        CompileOptions plain = options;
        plain.policy = policy_from_name("mixed_bfloat16");
        auto unquantised = compile(Model(e.model, plain.policy), plain, be);
        CHECK(unquantised->quant.empty());
        int fused = 0;
        for (const PlanStep& s : unquantised->steps) fused += s.op == "conv2d dW,db";
        CHECK_EQ(fused, 2);
    }

    // A convolution kept in bfloat16 (the per-layer override) reads its inputs unquantised.
    void bfloat16ConvStaysUnquantised() {
        CpuBackend be;
        ModelSpec spec = small_cnn(8, 16);
        spec.layers[0].dtype = "bfloat16";
        const Policy policy = policy_from_name("nvfp4");
        const Model model(spec, policy);
        CompileOptions options;
        options.policy = policy;
        options.batch_size = 8;
        auto plan = compile(model, options, be);
        const std::string first = model.layer(0).name(), second = model.layer(2).name();
        int second_quant = 0;
        for (const PlanQuant& q : plan->quant) {
            CHECK_MSG(q.layer != first, q.tensor);
            second_quant += q.layer == second;
        }
        CHECK_EQ(second_quant, 5); // X, dZ and their column-wise copies; one W (16×16 tiles)
        for (const PlanStep& s : plan->steps)
            if (s.layer == first) CHECK_MSG(s.op.rfind("quantize", 0) != 0, s.op);
    }

    void cnnTrainsUnderMixedFloat8_data() {
        add_column<std::string>("policy");
        add_column<int>("conv_tensors");
        // Per-tensor FP8: 3 roles x 2 convs. Blocks: + column-wise X and dZ, and W for conv2d_2's
        // dX (nvfp4's 16×16 weight tiles serve both products).
        new_row("mixed_float8 (delayed)") << "mixed_float8" << 6;
        // conv2d_1 computes no dX: no row-wise dZ copy where there is a column-wise one.
        new_row("mxfp8_e4m3") << "mxfp8_e4m3" << 10;
        new_row("nvfp4") << "nvfp4" << 9;
    }

    // A short cnn training: the loss stays finite and falls, and the quant records cover the
    // convolutions' three inputs.
    void cnnTrainsUnderMixedFloat8() {
        FETCH(std::string, policy);
        FETCH(int, conv_tensors);
        static const Mnist data = synthetic_mnist(640, 64);
        Experiment e;
        e.model = small_cnn(8, 16);
        e.policy = policy;
        e.batch_size = 32;
        e.epochs = 1;
        e.max_steps = 20;
        e.quant_every = 10;
        e.device = "cpu";
        CpuBackend be;
        Trainer trainer(e, data, be);
        TrainControl control;
        TrainerCallbacks callbacks;
        std::vector<double> losses;
        std::vector<QuantRecord> records;
        callbacks.on_step = [&](const StepRecord& r) { losses.push_back(r.loss); };
        callbacks.on_quant = [&](const QuantRecord& q) { records.push_back(q); };
        const RunSummary summary = trainer.run(control, callbacks);
        CHECK_EQ(summary.status, RunStatus::Completed);
        CHECK_EQ(losses.size(), std::size_t(20));
        for (double l : losses) CHECK(std::isfinite(l));
        CHECK_MSG(losses.back() < losses.front(),
                  std::to_string(losses.front()) + " → " + std::to_string(losses.back()));
        CHECK(!records.empty());
        int recorded = 0;
        for (const QuantTensorRecord& t : records.back().tensors) {
            if (t.layer.rfind("conv2d", 0) != 0) continue;
            ++recorded;
            CHECK_MSG(t.amax > 0 && t.scale > 0, t.layer + " " + t.role);
            CHECK(t.count > 0 && t.blocks > 0);
        }
        CHECK_EQ(recorded, conv_tensors);
    }
};

MANTISSA_TEST_MAIN(TestQuantConv, convInputsMatchTheReference, cnnPlanListsTheQuantiseSteps,
                   bfloat16ConvStaysUnquantised, cnnTrainsUnderMixedFloat8)
