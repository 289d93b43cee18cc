// The compiled Plan: exact bytes per memory category, explicit casts per policy, shape errors
// that name the layer, lint messages, and FLOPs per step.

#include "core/backend/cpu/cpu_backend.h"
#include "core/error.h"
#include "core/nn/model.h"
#include "core/plan/bind.h"
#include "core/plan/compile.h"
#include "core/plan/describe.h"
#include "core/plan/plan_weights.h"
#include "core/train/experiment.h"
#include "tests/ops/forwarding_backend.h"
#include "tests/test_support.h"
#include "tests/unit/files.h"
#include "tests/unit/unit_test.h"
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

using namespace mantissa;
using namespace mantissa::unit;
using namespace mantissa::test;

namespace {
// mlp-small's parameters: 784·128+128 + 128·128+128 + 128·10+10
constexpr std::size_t kMlpSmallParams = 784 * 128 + 128 + 128 * 128 + 128 + 128 * 10 + 10;

std::unique_ptr<Plan> compile_policy(Backend& backend, const ModelSpec& spec, const char* policy,
                                     OptimizerType optimizer = OptimizerType::RMSprop) {
    Model model(spec, policy_from_name(policy));
    CompileOptions options;
    options.policy = policy_from_name(policy);
    options.batch_size = 128;
    options.optimizer = optimizer_defaults(optimizer);
    return compile(model, options, backend);
}

int count_casts(const Plan& plan, const std::string& op) {
    int n = 0;
    for (const PlanStep& step : plan.steps) n += step.is_cast && step.op == op ? 1 : 0;
    return n;
}
} // namespace

class TestPlan {
public:
    void memoryFloat32() {
        CpuBackend backend;
        auto plan = compile_policy(backend, mlp_small(), "float32");
        CHECK_EQ(plan->param_count, static_cast<std::int64_t>(kMlpSmallParams));
        CHECK_EQ(plan->memory[MemCategory::Weights], 4 * kMlpSmallParams);
        CHECK_EQ(plan->memory[MemCategory::Master], std::size_t(0));
        CHECK_EQ(plan->memory[MemCategory::Optimizer], 4 * kMlpSmallParams); // RMSprop: velocity
        // Activations: input, labels, 3 dense outputs, probabilities (the Flatten view is free).
        const std::size_t acts =
            4 * 128 * 784 + 4 * 128 + 4 * 128 * (128 + 128 + 10) + 4 * 128 * 10;
        CHECK_EQ(plan->memory[MemCategory::Activations], acts);
        // Gradients: the variables' plus each layer output's (dense outputs; the input has none).
        CHECK_EQ(plan->memory[MemCategory::Gradients],
                 4 * kMlpSmallParams + 4 * 128 * (128 + 128 + 10));
        CHECK(plan->arena.size() >= plan->memory.total());
        CHECK_EQ(count_casts(*plan, "cast float32→float16"), 0);
    }
    void memoryMixedFloat16() {
        CpuBackend backend;
        auto plan = compile_policy(backend, mlp_small(), "mixed_float16", OptimizerType::Adam);
        CHECK_EQ(plan->memory[MemCategory::Master], 4 * kMlpSmallParams);  // float32 variables
        CHECK_EQ(plan->memory[MemCategory::Weights], 2 * kMlpSmallParams); // float16 copies
        CHECK_EQ(plan->memory[MemCategory::Optimizer],
                 2 * 4 * kMlpSmallParams); // Adam m, v in float32
        CHECK_EQ(plan->loss_scale.mode, LossScaleMode::Dynamic);
        // Casts: the input to float16, the logits back to float32, and, backward, the logits'
        // gradient to float16. The 6 float16 weight copies are written by the optimizer's step
        // and the 6 float16 gradients widened and unscaled by it (issue 26), not by casts.
        CHECK_EQ(count_casts(*plan, "cast float32→float16"), 2);
        CHECK_EQ(count_casts(*plan, "cast float16→float32"), 1); // the logits
        // Gradients: the 6 variables' and each Dense output's in float16, and the float32
        // logits' (the float32 softmax's input, cast from the last Dense layer's output).
        CHECK_EQ(plan->memory[MemCategory::Gradients],
                 2 * kMlpSmallParams + 2 * 128 * (128 + 128 + 10) + 4 * 128 * 10);
        // One optimizer step updates the 6 variables and writes their 6 copies.
        int updates = 0;
        for (const PlanStep& step : plan->steps) {
            if (step.phase != StepPhase::Update || step.op.find("adam") == std::string::npos)
                continue;
            ++updates;
            CHECK_EQ(step.op, std::string("unscale+adam ×6+cast→float16"));
            for (const PlanParam& p : plan->params)
                CHECK(std::find(step.outputs.begin(), step.outputs.end(), p.compute_copy) !=
                      step.outputs.end());
        }
        CHECK_EQ(updates, 1);
        // An inference plan has no optimizer: its forward casts the 6 variables itself.
        Model model(mlp_small(), policy_from_name("mixed_float16"));
        CompileOptions options;
        options.policy = policy_from_name("mixed_float16");
        options.inference_only = true;
        const auto eval = compile(model, options, backend);
        CHECK_EQ(count_casts(*eval, "cast float32→float16"), 1 + 6);
        for (const PlanParam& p : eval->params) CHECK_EQ(p.compute_copy, kNoTensor);
    }
    // The compute copies the optimizer keeps (issue 26) hold their masters rounded once, as the
    // cast steps they replace wrote them: after initialize(), after each step, applied or skipped
    // (a loss scale of 2^30 overflows float16 at first: steps are skipped until it has halved
    // enough), and after load_model_weights().
    void computeCopiesFollowTheirMasters() {
        for (const char* policy : {"mixed_float16", "mixed_bfloat16"}) {
            CpuBackend backend;
            Model model(mlp_small(), policy_from_name(policy));
            CompileOptions options;
            options.policy = policy_from_name(policy);
            options.batch_size = 32;
            options.optimizer = optimizer_defaults(OptimizerType::Adam);
            options.loss_scale.mode = LossScaleMode::Dynamic;
            options.loss_scale.initial = 1073741824.0;
            const auto plan = compile(model, options, backend);
            int copies = 0;
            for (const PlanParam& p : plan->params) copies += p.compute_copy != kNoTensor;
            CHECK_EQ(copies, 6);
            plan->initialize(backend, 3);
            CHECK_EQ(stale_compute_copy(*plan), std::string());
            DeviceSplit data(backend, synthetic_mnist_split(64, 5));
            int skipped = 0, applied = 0;
            for (int step = 0; step < 24; ++step) {
                RunContext ctx;
                ctx.step = static_cast<std::uint64_t>(step);
                ctx.batch = data.batch((step % 2) * 32, 32);
                plan->train_step(backend, ctx);
                const bool skip = backend.read_scalars(plan->tensor(plan->scalars)).skipped != 0;
                (skip ? skipped : applied) += 1;
                CHECK_MSG(stale_compute_copy(*plan).empty(), std::string(policy) + " step " +
                                                                 std::to_string(step + 1) + ": " +
                                                                 stale_compute_copy(*plan));
            }
            // 2^30 overflows float16's gradients, not bfloat16's (its range is float32's).
            const bool float16 = std::string(policy) == "mixed_float16";
            CHECK_MSG((skipped > 0) == float16 && applied > 0,
                      std::string(policy) + ": " + std::to_string(skipped) + " skipped, " +
                          std::to_string(applied) + " applied");
            ModelWeights weights = read_model_weights(*plan, backend);
            for (WeightTensor& t : weights.tensors) // every master changed: 1.5 times its value
                for (std::size_t i = 0; i + 4 <= t.data.size(); i += 4) {
                    float v;
                    std::memcpy(&v, &t.data[i], 4);
                    v *= 1.5f;
                    std::memcpy(&t.data[i], &v, 4);
                }
            load_model_weights(*plan, backend, weights, "scaled.safetensors");
            CHECK_EQ(stale_compute_copy(*plan), std::string());
        }
    }
    void pureFloat16KeepsEverythingIn16Bits() {
        CpuBackend backend;
        auto plan = compile_policy(backend, mlp_small(), "float16");
        CHECK_EQ(plan->memory[MemCategory::Weights], 2 * kMlpSmallParams);
        CHECK_EQ(plan->memory[MemCategory::Master], std::size_t(0));
        CHECK_EQ(plan->memory[MemCategory::Optimizer], 2 * kMlpSmallParams);
        for (const PlanParam& p : plan->params)
            CHECK_EQ(plan->tensor(p.optimizer_slots[0]).dtype, DType::Float16);
    }
    void bfloat16NeedsNoLossScaling() {
        CpuBackend backend;
        CHECK_EQ(compile_policy(backend, mlp_small(), "mixed_bfloat16")->loss_scale.mode,
                 LossScaleMode::None);
        CHECK_EQ(compile_policy(backend, mlp_small(), "float32")->loss_scale.mode,
                 LossScaleMode::None);
    }
    // A mixed layer's gradient is not cast back: the optimizer reads the compute-dtype gradient,
    // widens it exactly and, under loss scaling, unscales it (the unscale step only checks it;
    // issue 26). So the plan has no gradient casts and no float32 gradient copies, and training
    // gives the very bits of the plan that keeps the casts (reduce_gradients, as data-parallel
    // training compiles it): mixed_bfloat16; mixed_float16 without scaling; and mixed_float16
    // under dynamic scaling from 2^30, whose first steps overflow float16 and are skipped
    // exactly as before, the ledger naming the same gradients.
    void optimizerWidensTheComputeGradients() {
        struct Case {
            const char* policy;
            LossScaleMode mode;
        };
        for (const Case& c : {Case{"mixed_bfloat16", LossScaleMode::None},
                              Case{"mixed_float16", LossScaleMode::None},
                              Case{"mixed_float16", LossScaleMode::Dynamic}}) {
            const bool scaled = c.mode != LossScaleMode::None;
            const std::string name = std::string(c.policy) + (scaled ? " scaled" : "");
            const DType compute = policy_from_name(c.policy).compute;
            const std::string d(dtype_name(compute));
            CpuBackend backend;
            Model model(mlp_small(), policy_from_name(c.policy));
            CompileOptions options;
            options.policy = policy_from_name(c.policy);
            options.batch_size = 32;
            options.optimizer = optimizer_defaults(OptimizerType::Adam);
            options.loss_scale.mode = c.mode;
            options.loss_scale.initial = 1073741824.0;
            const auto widened = compile(model, options, backend);
            options.reduce_gradients = true;
            const auto casts = compile(model, options, backend);

            CHECK_MSG(count_casts(*widened, "cast " + d + "→float32") == 1, name); // the logits
            CHECK_MSG(count_casts(*casts, "cast " + d + "→float32") == 1 + 6, name);
            for (const PlanParam& p : widened->params)
                CHECK_MSG(widened->tensor(p.grad).dtype == compute, name + " " + p.name);
            const auto update_ops = [](const Plan& plan) {
                std::string ops;
                for (const PlanStep& step : plan.steps)
                    if (step.phase == StepPhase::Update) ops += step.op + "; ";
                return ops;
            };
            CHECK_EQ(update_ops(*widened), (scaled ? "check_finite; unscale+" : "") +
                                               std::string("adam ×6+cast→") + d +
                                               "; update_loss_scale; ");
            CHECK_EQ(update_ops(*casts), (scaled ? "unscale+check_finite; " : "") +
                                             std::string("adam ×6+cast→") + d +
                                             "; update_loss_scale; ");
            // The float32 gradient of every variable is gone, nothing else.
            CHECK_EQ(casts->memory[MemCategory::Gradients] -
                         widened->memory[MemCategory::Gradients],
                     4 * kMlpSmallParams);

            widened->initialize(backend, 11);
            casts->initialize(backend, 11);
            DeviceSplit data(backend, synthetic_mnist_split(64, 7));
            int skipped = 0;
            for (int step = 0; step < 24; ++step) {
                RunContext ctx;
                ctx.step = static_cast<std::uint64_t>(step);
                ctx.batch = data.batch((step % 2) * 32, 32);
                widened->train_step(backend, ctx);
                casts->train_step(backend, ctx);
                const StepScalars a = backend.read_scalars(widened->tensor(widened->scalars));
                const StepScalars b = backend.read_scalars(casts->tensor(casts->scalars));
                CHECK_MSG(a.skipped == b.skipped && a.nonfinite_mask == b.nonfinite_mask &&
                              a.loss_scale == b.loss_scale && a.loss_sum == b.loss_sum,
                          name + " step " + std::to_string(step + 1));
                skipped += a.skipped;
            }
            CHECK_MSG((skipped > 0) == (scaled && compute == DType::Float16), name);
            const ModelWeights a = read_model_weights(*widened, backend);
            const ModelWeights b = read_model_weights(*casts, backend);
            CHECK_EQ(a.tensors.size(), b.tensors.size());
            for (std::size_t t = 0; t < a.tensors.size(); ++t)
                CHECK_MSG(a.tensors[t].data == b.tensors[t].data,
                          name + ": " + a.tensors[t].name + " differs");
            CHECK_EQ(stale_compute_copy(*widened), std::string());
        }
    }
    // A Dense layer's elementwise derivative and its bias gradient are one step for every
    // elementwise activation, GELU included (its derivative reads the pre-activation), so an
    // engine may fuse them; a linear layer has no derivative and keeps bias_grad alone.
    void derivativeAndBiasGradientAreOneStep() {
        CpuBackend backend;
        for (Activation act :
             {Activation::Relu, Activation::Gelu, Activation::Tanh, Activation::Sigmoid}) {
            ModelSpec spec;
            spec.layers = {flatten(), dense(128, act), dense(10),
                           activation(Activation::Softmax, "float32")};
            auto plan = compile_policy(backend, spec, "mixed_float16");
            const std::string fused = "d" + std::string(activation_name(act)) + "+bias_grad";
            int fused_steps = 0, bias_steps = 0, separate = 0;
            for (const PlanStep& step : plan->steps) {
                fused_steps += step.op == fused ? 1 : 0;
                bias_steps += step.op == "bias_grad" ? 1 : 0;
                separate += step.op == "d" + std::string(activation_name(act)) ? 1 : 0;
            }
            CHECK_MSG(fused_steps == 1 && separate == 0, fused);
            CHECK_MSG(bias_steps == 1, fused); // the linear output layer's
        }
    }
    void flopsPerStep() {
        CpuBackend backend;
        auto plan = compile_policy(backend, mlp_small(), "float32");
        // Forward 2·B·Σ(in·out); backward twice that, minus the first layer's dX.
        const double fwd = 2.0 * 128 * (784 * 128 + 128 * 128 + 128 * 10);
        const double dx_first = 2.0 * 128 * 784 * 128;
        CHECK(plan->train_flops_per_step() > 3 * fwd - dx_first);
        CHECK(plan->train_flops_per_step() < 3.2 * fwd - dx_first);
    }
    void shapeErrorsNameTheLayer_data() {
        add_column<ModelSpec>("spec");
        add_column<std::string>("layer");
        add_column<std::string>("words");
        auto model = [](std::vector<LayerSpec> layers) {
            ModelSpec m;
            m.layers = std::move(layers);
            return m;
        };
        new_row("dense before flatten") << model({dense(10)}) << "dense_1"
                                        << "Flatten";
        new_row("conv after flatten") << model({flatten(), conv(8, 3), dense(10)}) << "conv2d_1"
                                      << "(784,)";
        new_row("kernel larger than input")
            << model({conv(4, 29), flatten(), dense(10)}) << "conv2d_1"
            << "29x29";
        new_row("wrong class count") << model({flatten(), dense(12)}) << ""
                                     << "10 classes";
        new_row("pool too large") << model({maxpool(2), maxpool(2), maxpool(2), maxpool(2),
                                            maxpool(2), flatten(), dense(10)})
                                  << "max_pool2d_5"
                                  << "2x2";
        // Fuzz findings (fuzz_experiment): sizes from a file overflowed int64 in the parameter
        // count, undefined behaviour in the editor's shape inference.
        new_row("units overflow int64")
            << model({flatten(), dense(2222222222222222215LL)}) << "dense_1"
            << "more parameters than 64 bits count";
        new_row("parameter total overflows int64")
            << model({flatten(), dense(INT64_MAX / 785), dense(10)}) << "dense_2"
            << "more parameters than 64 bits count";
    }
    void shapeErrorsNameTheLayer() {
        FETCH(ModelSpec, spec);
        FETCH(std::string, layer);
        FETCH(std::string, words);
        CpuBackend backend;
        Model model(spec, policy_from_name("float32"));
        const ModelAnalysis analysis = model.analyze();
        CHECK(!analysis.ok());
        CHECK_MSG(contains(analysis.error, layer), analysis.error.c_str());
        CHECK_MSG(contains(analysis.error, words), analysis.error.c_str());
        try {
            compile_policy(backend, spec, "float32");
            FAIL_TEST("compile accepted a stack that does not fit");
        } catch (const Error& e) {
            CHECK_EQ(e.kind(), ErrorKind::Shape);
        }
    }
    void lint() {
        ModelSpec spec;
        spec.layers = {flatten(), dense(100, Activation::Relu), dense(10),
                       activation(Activation::Softmax)};
        Model model(spec, policy_from_name("mixed_float16"));
        CpuBackend backend;
        CompileOptions options;
        options.policy = policy_from_name("mixed_float16");
        options.optimizer = optimizer_defaults(OptimizerType::Adam);
        options.loss_scale.mode = LossScaleMode::None;
        auto plan = compile(model, options, backend);
        std::string all;
        for (const LintMessage& m : plan->lint) all += m.layer + ": " + m.text + "\n";
        CHECK_MSG(contains(all, "activation_1: the output softmax computes in float16"), all);
        CHECK_MSG(contains(all, "dense_1: 100 units is not a multiple of 8"), all);
        CHECK_MSG(!contains(all, "dense_2"), all); // the 10 output classes are exempt
        CHECK_MSG(contains(all, "without loss scaling"), all);
    }
    // describe() decides every step, tensor and byte without a backend; bind() adds only the
    // engine's workspace and the run closures. Every preset under every policy.
    void describedSpecIsWhatBindRuns() {
        CpuBackend backend;
        for (const char* preset :
             {"mlp-small", "seed-mlp", "cnn", "deep-sigmoid", "mnist-fast", "mlp-batchnorm"}) {
            const Experiment e = load_experiment(std::string(MANTISSA_SOURCE_DIR) +
                                                 "/resources/experiments/" + preset + ".json");
            for (const Policy& policy : all_policies()) {
                const std::string where = std::string(preset) + " " + policy.name;
                CompileOptions options;
                options.policy = policy;
                options.batch_size = 32;
                options.optimizer = e.optimizer;
                options.loss_scale = e.loss_scale;
                const auto spec =
                    std::make_shared<const PlanSpec>(describe(Model(e.model, policy), options));
                const auto plan = bind(*spec, backend); // a copy: `spec` stays to compare with
                CHECK_MSG(plan->spec && plan->spec->steps.size() == spec->steps.size(), where);
                CHECK_EQ(plan->steps.size(), spec->steps.size());
                for (std::size_t i = 0; i < spec->steps.size(); ++i) {
                    const StepSpec& s = spec->steps[i];
                    const PlanStep& p = plan->steps[i];
                    CHECK_MSG(p.op == s.op && p.layer == s.layer && p.phase == s.phase, where);
                    CHECK_MSG(p.inputs == s.inputs && p.outputs == s.outputs, where);
                    CHECK_MSG(p.flops == s.flops && p.is_cast == s.is_cast, where);
                    CHECK_MSG(p.training_only == s.training_only, where);
                    CHECK_MSG(p.checks_finite == s.checks_finite, where);
                    CHECK_MSG(static_cast<bool>(p.run), where);
                }
                CHECK_EQ(plan->tensors.size(), spec->tensors.size());
                for (std::size_t i = 0; i < spec->tensors.size(); ++i) {
                    const Tensor& s = spec->tensors[i];
                    const Tensor& p = plan->tensors[i];
                    CHECK_MSG(p.name == s.name && p.dtype == s.dtype && p.category == s.category,
                              where);
                    CHECK_MSG(p.data != nullptr && s.data == nullptr, where);
                    if (static_cast<TensorId>(i) != spec->workspace)
                        CHECK_MSG(p.shape == s.shape, where);
                }
                // Every category but the workspace is exact in the spec; the workspace's scratch
                // is the engine's to decide.
                for (std::size_t c = 0; c < kMemCategoryCount; ++c)
                    if (static_cast<MemCategory>(c) != MemCategory::Workspace)
                        CHECK_MSG(plan->memory.bytes[c] == spec->memory.bytes[c], where);
                CHECK_EQ(plan->memory[MemCategory::Workspace],
                         spec->memory[MemCategory::Workspace] +
                             plan->tensor(spec->workspace).bytes());
                CHECK_EQ(spec->tensor(spec->workspace).bytes(), std::size_t(0));
                CHECK_EQ(plan->train_flops_per_step(), spec->train_flops_per_step());
                CHECK_EQ(plan->param_count, spec->param_count);
                CHECK_EQ(plan->params.size(), spec->params.size());
                CHECK_EQ(plan->lint.size(), spec->lint.size());
                CHECK_MSG(plan->loss_scale.mode == spec->loss_scale.mode, where);
                CHECK_EQ(plan->input, spec->input);
                CHECK_EQ(plan->probs, spec->probs);
                // The CPU engine's im2col needs scratch: the convolutional preset gets some.
                if (std::string(preset) == "cnn")
                    CHECK_MSG(plan->tensor(spec->workspace).bytes() > 0, where);
            }
        }
    }
    // describe() needs no engine, so a quantised policy is described (the Plan view shows it);
    // bind() refuses an engine without quantise kernels, naming the layer and the policy.
    void quantisedSpecBindsOnlyWhereTheEngineQuantises() {
        Model model(mlp_small(), policy_from_name("nvfp4"));
        CompileOptions options;
        options.policy = policy_from_name("nvfp4");
        options.batch_size = 32;
        const PlanSpec spec = describe(model, options);
        // 3 Dense layers x (input, kernel, dZ), and the column-wise input and dZ for dW (the
        // 16x16 kernel tiles serve dX too); the first layer computes no dX, so its dZ has only
        // the column-wise copy.
        CHECK_EQ(spec.quant.size(), std::size_t(14));
        CHECK_EQ(spec.quant.front().layer, std::string("dense_1"));
        CHECK_EQ(spec.quant.front().policy, std::string("nvfp4"));
        // A column-wise copy is made by its row-wise copy's step (one pass where the engine
        // can): 14 copies in 9 steps, the first layer's dZ copy alone.
        int quantise_steps = 0, pairs = 0;
        for (const StepSpec& step : spec.steps) {
            quantise_steps += contains(step.op, "quantize");
            pairs += contains(step.op, ", and column-wise for dW");
        }
        CHECK_EQ(quantise_steps, 9);
        CHECK_EQ(pairs, 5);
        CpuBackend cpu;
        ForwardingBackend no_kernels(cpu); // forwards every op but fake_quantize
        try {
            bind(spec, no_kernels);
            FAIL_TEST("bound a quantised plan to an engine without quantise kernels");
        } catch (const Error& e) {
            CHECK_EQ(e.kind(), ErrorKind::Config);
            CHECK_MSG(contains(e.what(), "layer 'dense_1': policy 'nvfp4'"), e.what());
            CHECK_MSG(contains(e.what(), "no quantise kernels"), e.what());
        }
        const auto plan = bind(spec, cpu);
        CHECK_EQ(plan->quant.size(), spec.quant.size());
    }
    // inference_only: forward steps only, no optimizer slots, no bytes for gradients, and a plan
    // that refuses to train.
    void inferenceOnlySpecRunsForwardOnly() {
        Model model(mlp_small(), policy_from_name("mixed_float16"));
        CompileOptions options;
        options.policy = policy_from_name("mixed_float16");
        options.batch_size = 32;
        options.optimizer = optimizer_defaults(OptimizerType::Adam);
        options.inference_only = true;
        const PlanSpec spec = describe(model, options);
        for (const StepSpec& step : spec.steps)
            CHECK_MSG(step.phase == StepPhase::Forward, step.op);
        for (const PlanParam& p : spec.params) CHECK(p.optimizer_slots.empty());
        CHECK_EQ(spec.memory[MemCategory::Gradients], std::size_t(0));
        CHECK_EQ(spec.memory[MemCategory::Optimizer], std::size_t(0));
        CHECK(spec.memory[MemCategory::Weights] > 0);
        CpuBackend backend;
        const auto plan = bind(spec, backend);
        CHECK(plan->inference_only);
        CHECK_EQ(plan->memory[MemCategory::Gradients], std::size_t(0));
        for (const PlanParam& p : plan->params) CHECK(plan->tensor(p.grad).data == nullptr);
        plan->initialize(backend, 1);
        try {
            plan->train_step(backend, RunContext{});
            FAIL_TEST("trained an inference-only plan");
        } catch (const Error& e) {
            CHECK_EQ(e.kind(), ErrorKind::Internal);
        }
    }
    // Issue 26: an engine with time marks (the CUDA engine's events) times a step plan step by
    // plan step without waiting between the steps: mark i + 1 follows step i's work, the engine is
    // never synchronised in between, and each step's time is the interval the engine measured.
    // An engine without marks (the CPU engine) is timed by the host's clock, one time a step.
    void timedStepMarksTheEngineBetweenSteps() {
        class MarkingEngine final : public ForwardingBackend {
        public:
            using ForwardingBackend::ForwardingBackend;
            bool begin_time_marks(std::size_t intervals) override {
                readied = intervals;
                marks.clear();
                return true;
            }
            void mark_time(std::size_t index) override {
                CHECK_EQ(syncs_since_begin, 0);
                marks.push_back(index);
            }
            std::vector<double> marked_intervals_ms() override {
                std::vector<double> ms(readied);
                for (std::size_t i = 0; i < readied; ++i) ms[i] = 0.5 * static_cast<double>(i);
                return ms;
            }
            void synchronize() override {
                ++syncs_since_begin;
                ForwardingBackend::synchronize();
            }
            void gemm(const GemmArgs& args) override {
                marks_before_gemm.push_back(marks.size());
                ForwardingBackend::gemm(args);
            }
            std::size_t readied = 0;
            std::vector<std::size_t> marks, marks_before_gemm;
            int syncs_since_begin = 0;
        };
        CpuBackend cpu;
        MarkingEngine engine(cpu);
        Model model(mlp_small(), policy_from_name("mixed_float16"));
        CompileOptions options;
        options.policy = policy_from_name("mixed_float16");
        options.batch_size = 32;
        const auto plan = compile(model, options, engine);
        plan->initialize(engine, 3);
        DeviceSplit data(engine, synthetic_mnist_split(32, 5));
        RunContext ctx;
        ctx.batch = data.batch(0, 32);
        engine.syncs_since_begin = 0;
        std::vector<double> ms;
        plan->train_step_timed(engine, ctx, ms);
        const std::size_t n = plan->steps.size();
        CHECK_EQ(engine.readied, n);
        CHECK_EQ(engine.syncs_since_begin, 0);
        CHECK_EQ(engine.marks.size(), n + 1);
        for (std::size_t i = 0; i < engine.marks.size(); ++i) CHECK_EQ(engine.marks[i], i);
        CHECK_EQ(ms.size(), n);
        for (std::size_t i = 0; i < n; ++i) CHECK_EQ(ms[i], 0.5 * static_cast<double>(i));
        // Each GEMM ran between the mark before its step and the one after it: with i + 1 marks
        // made, in step i, a GEMM step. 3 forward, 3 dW and 2 dX (the first layer has none).
        CHECK_EQ(engine.marks_before_gemm.size(), std::size_t(8));
        for (std::size_t k = 0; k < engine.marks_before_gemm.size(); ++k) {
            const std::size_t before = engine.marks_before_gemm[k];
            CHECK(before >= 1 && before <= n);
            CHECK(plan->steps[before - 1].matrix_math);
        }
        // Without marks: the host's clock, a non-negative time for every step.
        plan->train_step_timed(cpu, ctx, ms);
        CHECK_EQ(ms.size(), n);
        for (double t : ms) CHECK(t >= 0.0);
    }
    void unknownLayerPolicyIsAConfigError() {
        ModelSpec spec = mlp_small();
        spec.layers[1].dtype = "float17";
        try {
            Model model(spec, policy_from_name("float32"));
            FAIL_TEST("accepted an unknown policy");
        } catch (const Error& e) {
            CHECK_EQ(e.kind(), ErrorKind::Config);
            CHECK(contains(e.what(), "model.layers[1].dtype"));
            CHECK(contains(e.what(), "mixed_float16"));
        }
    }
};

MANTISSA_TEST_MAIN(TestPlan, memoryFloat32, memoryMixedFloat16, computeCopiesFollowTheirMasters,
                   pureFloat16KeepsEverythingIn16Bits, bfloat16NeedsNoLossScaling,
                   optimizerWidensTheComputeGradients, derivativeAndBiasGradientAreOneStep,
                   flopsPerStep, shapeErrorsNameTheLayer, lint, describedSpecIsWhatBindRuns,
                   quantisedSpecBindsOnlyWhereTheEngineQuantises, inferenceOnlySpecRunsForwardOnly,
                   timedStepMarksTheEngineBetweenSteps, unknownLayerPolicyIsAConfigError)
