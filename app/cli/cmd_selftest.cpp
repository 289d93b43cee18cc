// `mantissa-cli selftest`: checks that every policy trains on each engine this build has and that
// each engine recovers from running out of memory; on a GPU also every CUDA op x dtype against the
// CPU engine and a whole step.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <vector>

#include "app/cli/args.h"
#include "app/cli/commands.h"
#include "core/backend/factory/backend_factory.h"
#include "core/backend/histogram.h"
#include "core/data/synthetic_mnist.h"
#include "core/error.h"
#include "core/numeric/convert.h"
#include "core/numeric/policy.h"
#include "core/train/trainer.h"

namespace mantissa::cli {

namespace {

ModelSpec mlp_spec() {
    ModelSpec spec;
    LayerSpec flatten;
    flatten.type = LayerType::Flatten;
    LayerSpec hidden;
    hidden.type = LayerType::Dense;
    hidden.units = 32;
    hidden.activation = Activation::Relu;
    LayerSpec out;
    out.type = LayerType::Dense;
    out.units = 10;
    LayerSpec softmax;
    softmax.type = LayerType::Activation;
    softmax.activation = Activation::Softmax;
    softmax.dtype = "float32";
    spec.layers = {flatten, hidden, out, softmax};
    return spec;
}

ModelSpec cnn_spec() {
    ModelSpec spec = mlp_spec();
    LayerSpec conv;
    conv.type = LayerType::Conv2D;
    conv.filters = 8;
    conv.activation = Activation::Relu;
    LayerSpec pool;
    pool.type = LayerType::MaxPool2D;
    spec.layers.insert(spec.layers.begin(), {conv, pool});
    return spec;
}

// --- CUDA op parity: the same op on both engines, outputs compared with a dtype-aware tolerance
// ---

// Relative tolerance per storage dtype: a few units in the last place of the format, widened for
// the GPU's different summation order and math library (float32 accumulations of ~1000 terms).
double tolerance(DType dtype) {
    switch (dtype) {
    case DType::Float64:
        return 1e-9;
    case DType::Float32:
        return 2e-4;
    case DType::Float16:
        return 1e-2;
    case DType::BFloat16:
        return 5e-2;
    default:
        return 0.0; // integers and masks: exact
    }
}

// One tensor on both engines, filled from the same host values (rounded once to `dtype`).
struct Twin {
    Buffer cpu_buf, gpu_buf;
    Tensor cpu, gpu;
};

std::unique_ptr<Twin> twin(Backend& cpu, Backend& gpu, const std::string& name, DType dtype,
                           Shape shape, const std::vector<double>& values) {
    auto t = std::make_unique<Twin>();
    t->cpu.name = t->gpu.name = name;
    t->cpu.dtype = t->gpu.dtype = dtype;
    t->cpu.shape = t->gpu.shape = shape;
    const std::size_t bytes = std::max<std::size_t>(t->cpu.bytes(), sizeof(StepScalars));
    t->cpu_buf = cpu.allocate(bytes);
    t->gpu_buf = gpu.allocate(bytes);
    t->cpu.data = t->cpu_buf.data();
    t->gpu.data = t->gpu_buf.data();
    std::vector<unsigned char> host(t->cpu.bytes());
    std::vector<double> v(static_cast<std::size_t>(t->cpu.numel()), 0.0);
    for (std::size_t i = 0; i < v.size() && !values.empty(); ++i) v[i] = values[i % values.size()];
    convert_from_double(v.data(), host.data(), dtype, v.size());
    cpu.upload(host.data(), t->cpu);
    gpu.upload(host.data(), t->gpu);
    return t;
}

std::vector<double> random_values(std::size_t n, std::uint64_t seed, double scale) {
    std::vector<double> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        out[i] = scale * (static_cast<double>(seed >> 11) * 0x1.0p-53 * 2.0 - 1.0);
    }
    return out;
}

// Second moments (RMSprop's and Adam's v) must be >= 0, or the update takes sqrt of a negative.
std::vector<double> positive(std::vector<double> values) {
    for (double& v : values) v = std::fabs(v);
    return values;
}

// The largest |gpu - cpu| / (|cpu| + floor) over a tensor; NaN/inf must agree exactly.
double max_error(Backend& cpu, Backend& gpu, const Twin& t) {
    std::vector<unsigned char> a(t.cpu.bytes()), b(t.gpu.bytes());
    cpu.download(t.cpu, a.data());
    gpu.download(t.gpu, b.data());
    const std::size_t n = static_cast<std::size_t>(t.cpu.numel());
    std::vector<double> x(n), y(n);
    convert_to_double(a.data(), t.cpu.dtype, x.data(), n);
    convert_to_double(b.data(), t.gpu.dtype, y.data(), n);
    double scale = 0;
    for (double v : x)
        if (std::isfinite(v)) scale = std::max(scale, std::fabs(v));
    // Elements near zero are judged against a tenth of the tensor's largest magnitude (an
    // allclose-style atol): an op that rounds twice, or sums in another order, is off by an ulp
    // of its intermediate, which can be far larger than a small result.
    const double floor = std::max(scale * 0.1, 1e-30);
    double worst = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (!std::isfinite(x[i]) || !std::isfinite(y[i])) {
            if (!(std::isnan(x[i]) && std::isnan(y[i])) && x[i] != y[i]) return INFINITY;
            continue;
        }
        worst = std::max(worst, std::fabs(y[i] - x[i]) / (std::fabs(x[i]) + floor));
    }
    return worst;
}

struct OpCheck {
    std::string op;
    DType dtype;
    double error = 0;
    double tol = 0;
    std::string failure; // an exception's message
};

// Runs every op on both engines for one dtype and records the worst error of each output.
void check_ops(Backend& cpu, Backend& gpu, DType dt, std::vector<OpCheck>& out) {
    const double tol = tolerance(dt);
    // Every tensor lives until the dtype's checks end (their Buffers before the backends die).
    std::vector<std::unique_ptr<Twin>> keep;
    auto make = [&](const std::string& name, DType dtype, Shape shape,
                    const std::vector<double>& values) {
        keep.push_back(twin(cpu, gpu, name, dtype, std::move(shape), values));
        return keep.back().get();
    };
    auto run = [&](const std::string& op, double op_tol,
                   const std::function<std::vector<const Twin*>()>& body) {
        OpCheck c{op, dt, 0, op_tol, ""};
        try {
            for (const Twin* t : body()) c.error = std::max(c.error, max_error(cpu, gpu, *t));
        } catch (const std::exception& err) {
            c.failure = err.what();
        }
        out.push_back(c);
    };
    const std::int64_t m = 64, k = 96, n = 40;
    auto x = twin(cpu, gpu, "x", dt, {m, k}, random_values(m * k, 1, 1.0));
    auto w = twin(cpu, gpu, "w", dt, {k, n}, random_values(k * n, 2, 0.2));
    auto bias = twin(cpu, gpu, "bias", dt, {n}, random_values(n, 3, 0.5));
    auto y = twin(cpu, gpu, "y", dt, {m, n}, {});
    auto pre = twin(cpu, gpu, "pre", dt, {m, n}, {});
    // Backward inputs come from the host, the same on both engines, so each check measures one
    // op's error, not the previous op's difference too.
    auto dy = twin(cpu, gpu, "dy", dt, {m, n}, random_values(m * n, 14, 1.0));
    const std::size_t ws_bytes = std::size_t{160} << 20; // > cuDNN's 64 MiB limit + filters
    Buffer ws_cpu = cpu.allocate(ws_bytes), ws_gpu = gpu.allocate(ws_bytes);
    auto gemm_both = [&](GemmArgs g, const Twin& a, const Twin& b, Twin& c, Twin* bias_t,
                         Twin* pre_t) {
        for (int side = 0; side < 2; ++side) {
            const bool is_gpu = side == 1;
            g.a = is_gpu ? &a.gpu : &a.cpu;
            g.b = is_gpu ? &b.gpu : &b.cpu;
            g.c = is_gpu ? &c.gpu : &c.cpu;
            g.bias = bias_t ? (is_gpu ? &bias_t->gpu : &bias_t->cpu) : nullptr;
            g.pre_activation = pre_t ? (is_gpu ? &pre_t->gpu : &pre_t->cpu) : nullptr;
            g.workspace =
                is_gpu ? Workspace{ws_gpu.data(), ws_bytes} : Workspace{ws_cpu.data(), ws_bytes};
            (is_gpu ? gpu : cpu).gemm(g);
        }
    };
    run("cast float32->dtype", tol, [&] {
        Twin *src, *dst;
        src = make("src", DType::Float32, {1000}, random_values(1000, 4, 100.0));
        dst = make("dst", dt, {1000}, {});
        cpu.cast(src->cpu, dst->cpu);
        gpu.cast(src->gpu, dst->gpu);
        return std::vector<const Twin*>{dst};
    });
    run("fill", 0.0, [&] {
        cpu.fill(y->cpu, 0.1);
        gpu.fill(y->gpu, 0.1);
        return std::vector<const Twin*>{y.get()};
    });
    for (Activation act : {Activation::Linear, Activation::Relu, Activation::Gelu, Activation::Tanh,
                           Activation::Sigmoid}) {
        run(std::string("gemm+bias+") + activation_name(act), tol, [&] {
            GemmArgs g;
            g.epilogue = act;
            gemm_both(g, *x, *w, *y, bias.get(), act == Activation::Gelu ? pre.get() : nullptr);
            std::vector<const Twin*> outs{y.get()};
            if (act == Activation::Gelu) outs.push_back(pre.get());
            return outs;
        });
    }
    run("gemm dW = x^T dy", tol, [&] {
        Twin* dw;
        dw = make("dw", dt, {k, n}, {});
        GemmArgs g;
        g.transpose_a = true;
        gemm_both(g, *x, *dy, *dw, nullptr, nullptr);
        return std::vector<const Twin*>{dw};
    });
    run("gemm dX = dy W^T", tol, [&] {
        Twin* dx;
        dx = make("dx", dt, {m, k}, {});
        GemmArgs g;
        g.transpose_b = true;
        gemm_both(g, *dy, *w, *dx, nullptr, nullptr);
        return std::vector<const Twin*>{dx};
    });
    run("bias_grad", tol, [&] {
        cpu.bias_grad(dy->cpu, bias->cpu); // dy (m, n): db (n)
        gpu.bias_grad(dy->gpu, bias->gpu);
        return std::vector<const Twin*>{bias.get()};
    });
    for (Activation act : {Activation::Relu, Activation::Gelu, Activation::Tanh,
                           Activation::Sigmoid, Activation::Softmax}) {
        run(std::string("activation ") + activation_name(act) + " fwd+bwd", tol, [&] {
            Twin *out, *dx;
            out = make("out", dt, {m, k}, {});
            dx = make("dx", dt, {m, k}, {});
            cpu.activation_forward(act, x->cpu, out->cpu);
            gpu.activation_forward(act, x->gpu, out->gpu);
            cpu.activation_backward(act, x->cpu, out->cpu, x->cpu, dx->cpu);
            gpu.activation_backward(act, x->gpu, out->gpu, x->gpu, dx->gpu);
            return std::vector<const Twin*>{out, dx};
        });
    }
    auto scalars = twin(cpu, gpu, "scalars", DType::UInt8, {sizeof(StepScalars)}, {});
    StepScalars initial;
    initial.loss_scale = 1024.0;
    cpu.write_scalars(initial, scalars->cpu);
    gpu.write_scalars(initial, scalars->gpu);
    run("softmax_cross_entropy", tol, [&] {
        Twin *logits, *labels, *probs, *dlogits;
        logits = make("logits", dt, {m, 10}, random_values(m * 10, 5, 4.0));
        std::vector<double> label_values(m);
        for (std::int64_t r = 0; r < m; ++r) label_values[r] = static_cast<double>(r % 10);
        labels = make("labels", DType::Int32, {m}, label_values);
        probs = make("probs", dt, {m, 10}, {});
        dlogits = make("dlogits", dt, {m, 10}, {});
        for (int side = 0; side < 2; ++side) {
            const bool g = side == 1;
            SoftmaxXentArgs a;
            a.logits = g ? &logits->gpu : &logits->cpu;
            a.labels = g ? &labels->gpu : &labels->cpu;
            a.valid_rows = m - 3;
            a.probs = g ? &probs->gpu : &probs->cpu;
            a.dlogits = g ? &dlogits->gpu : &dlogits->cpu;
            a.scalars = g ? &scalars->gpu : &scalars->cpu;
            (g ? gpu : cpu).begin_step(*a.scalars);
            (g ? gpu : cpu).softmax_cross_entropy(a);
        }
        const StepScalars sc = cpu.read_scalars(scalars->cpu), sg = gpu.read_scalars(scalars->gpu);
        if (sc.correct != sg.correct || sc.examples != sg.examples ||
            std::fabs(sc.loss_sum - sg.loss_sum) > 1e-3 * std::fabs(sc.loss_sum) + 1e-6)
            throw Error(ErrorKind::Internal, "loss sum / correct / examples differ");
        return std::vector<const Twin*>{probs, dlogits};
    });
    run("maxpool fwd+bwd", 0.0, [&] {
        Twin *in, *out, *arg, *dx;
        Pool2dArgs p;
        p.batch = 4;
        p.in_h = p.in_w = 6;
        p.channels = 8;
        p.out_h = p.out_w = 3;
        in = make("in", dt, {4, 6, 6, 8}, random_values(4 * 36 * 8, 6, 1.0));
        out = make("out", dt, {4, 3, 3, 8}, {});
        arg = make("argmax", DType::Int32, {4, 3, 3, 8}, {});
        dx = make("dx", dt, {4, 6, 6, 8}, {});
        cpu.maxpool_forward(p, in->cpu, out->cpu, arg->cpu);
        gpu.maxpool_forward(p, in->gpu, out->gpu, arg->gpu);
        cpu.maxpool_backward(p, out->cpu, arg->cpu, dx->cpu);
        gpu.maxpool_backward(p, out->gpu, arg->gpu, dx->gpu);
        return std::vector<const Twin*>{out, arg, dx};
    });
    run("conv2d fwd/bwd data/bwd filter", tol * 4, [&] {
        Twin *in, *filt, *b, *out, *preact, *dx, *dw, *db;
        Conv2dArgs c;
        c.batch = 4;
        c.in_h = c.in_w = 10;
        c.in_c = 3;
        c.out_h = c.out_w = 8;
        c.out_c = 8;
        c.kernel_h = c.kernel_w = 3;
        in = make("in", dt, {4, 10, 10, 3}, random_values(1200, 7, 1.0));
        filt = make("filter", dt, {3, 3, 3, 8}, random_values(216, 8, 0.3));
        b = make("b", dt, {8}, random_values(8, 9, 0.2));
        out = make("out", dt, {4, 8, 8, 8}, {});
        preact = make("pre", dt, {4, 8, 8, 8}, {});
        dx = make("dx", dt, {4, 10, 10, 3}, {});
        dw = make("dw", dt, {3, 3, 3, 8}, {});
        db = make("db", dt, {8}, {});
        const std::size_t need_c = cpu.conv2d_workspace_bytes(c, dt);
        const std::size_t need_g = gpu.conv2d_workspace_bytes(c, dt);
        if (need_c > ws_bytes || need_g > ws_bytes)
            throw Error(ErrorKind::Internal, "conv workspace larger than the self-test's");
        const Workspace wc{ws_cpu.data(), ws_bytes}, wg{ws_gpu.data(), ws_bytes};
        cpu.conv2d_forward(c, in->cpu, filt->cpu, &b->cpu, Activation::Relu, out->cpu, &preact->cpu,
                           wc);
        gpu.conv2d_forward(c, in->gpu, filt->gpu, &b->gpu, Activation::Relu, out->gpu, &preact->gpu,
                           wg);
        Twin* grad_out = make("dy", dt, {4, 8, 8, 8}, random_values(2048, 15, 1.0));
        cpu.conv2d_backward_data(c, grad_out->cpu, filt->cpu, dx->cpu, wc);
        gpu.conv2d_backward_data(c, grad_out->gpu, filt->gpu, dx->gpu, wg);
        cpu.conv2d_backward_filter(c, in->cpu, grad_out->cpu, dw->cpu, &db->cpu, wc);
        gpu.conv2d_backward_filter(c, in->gpu, grad_out->gpu, dw->gpu, &db->gpu, wg);
        return std::vector<const Twin*>{out, preact, dx, dw, db};
    });
    run("dropout fwd+bwd (same mask)", tol, [&] {
        Twin *out, *mask, *dx;
        out = make("out", dt, {m, k}, {});
        mask = make("mask", DType::UInt8, {m, k}, {});
        dx = make("dx", dt, {m, k}, {});
        cpu.dropout_forward(0.3, 77, x->cpu, out->cpu, mask->cpu);
        gpu.dropout_forward(0.3, 77, x->gpu, out->gpu, mask->gpu);
        cpu.dropout_backward(0.3, out->cpu, mask->cpu, dx->cpu);
        gpu.dropout_backward(0.3, out->gpu, mask->gpu, dx->gpu);
        return std::vector<const Twin*>{mask, out, dx};
    });
    run("exponent_histogram", 0.0, [&] {
        Twin* counts;
        counts = make("counts", DType::Int32, {kHistogramBins}, {});
        cpu.exponent_histogram(x->cpu, counts->cpu);
        gpu.exponent_histogram(x->gpu, counts->gpu);
        return std::vector<const Twin*>{counts};
    });
    for (OptimizerType type :
         {OptimizerType::SGD, OptimizerType::RMSprop, OptimizerType::Adam, OptimizerType::AdamW}) {
        run(std::string("unscale+") + optimizer_type_name(type) + "+finish_step",
            dt == DType::Float64 ? 1e-12 : 1e-6, [&] {
                Twin *param, *grad, *s0, *s1, *s2;
                OptimizerConfig config = optimizer_defaults(type);
                if (type == OptimizerType::SGD) config.momentum = 0.9;
                param = make("param", dt, {m, k}, random_values(m * k, 10, 1.0));
                grad = make("grad", dt, {m, k}, random_values(m * k, 11, 50.0));
                s0 = make("slot0", dt, {m, k}, positive(random_values(m * k, 12, 0.01)));
                s1 = make("slot1", dt, {m, k}, positive(random_values(m * k, 13, 0.01)));
                s2 = make("slot2", dt, {m, k}, {});
                for (int side = 0; side < 2; ++side) {
                    const bool g = side == 1;
                    Backend& be = g ? gpu : cpu;
                    Tensor& sc = g ? scalars->gpu : scalars->cpu;
                    Tensor* grads[] = {g ? &grad->gpu : &grad->cpu};
                    Tensor* all_slots[] = {g ? &s0->gpu : &s0->cpu, g ? &s1->gpu : &s1->cpu,
                                           g ? &s2->gpu : &s2->cpu};
                    be.write_scalars(initial, sc);
                    be.begin_step(sc);
                    be.unscale_and_check_finite(grads, sc);
                    be.optimizer_update(
                        config, g ? param->gpu : param->cpu, *grads[0],
                        std::span<Tensor* const>(
                            all_slots, static_cast<std::size_t>(optimizer_slot_count(config))),
                        sc, true);
                    be.finish_step(keras_loss_scale(), sc);
                }
                const StepScalars a = cpu.read_scalars(scalars->cpu);
                const StepScalars b = gpu.read_scalars(scalars->gpu);
                if (a.loss_scale != b.loss_scale || a.iterations != b.iterations ||
                    a.skipped != b.skipped || a.found_inf != b.found_inf)
                    throw Error(ErrorKind::Internal, "step scalars differ after finish_step");
                return std::vector<const Twin*>{grad, param, s0, s1};
            });
    }
}

// The first training step of an experiment on both engines: the loss must agree.
double first_step_loss_error(Backend& cpu, Backend& gpu, const Mnist& data, const char* policy) {
    Experiment e;
    e.name = "selftest-step";
    e.model = mlp_spec();
    e.policy = policy;
    e.optimizer = optimizer_defaults(OptimizerType::Adam);
    e.batch_size = 64;
    e.epochs = 1;
    Trainer on_cpu(e, data, cpu), on_gpu(e, data, gpu);
    double worst = 0;
    for (int step = 0; step < 3; ++step) {
        const StepScalars a = on_cpu.step_once(step * 64), b = on_gpu.step_once(step * 64);
        const double la = a.loss_sum / std::max<double>(1.0, double(a.examples));
        const double lb = b.loss_sum / std::max<double>(1.0, double(b.examples));
        worst = std::max(worst, std::fabs(la - lb) / std::max(std::fabs(la), 1e-12));
        if (a.loss_scale != b.loss_scale || a.skipped != b.skipped) return INFINITY;
    }
    return worst;
}

int check_gpu(Backend& gpu, const Mnist& data) {
    BackendChoice cpu_choice = create_backend("cpu");
    Backend& cpu = *cpu_choice.backend;
    int failures = 0;
    std::vector<OpCheck> checks;
    for (DType dt : {DType::Float64, DType::Float32, DType::Float16, DType::BFloat16}) {
        try {
            check_ops(cpu, gpu, dt, checks);
        } catch (const std::exception& err) {
            checks.push_back({"(setup)", dt, 0, 0, err.what()});
        }
    }
    std::printf("\n%-36s %-9s %12s %10s  %s\n", "op (cuda vs cpu)", "dtype", "max rel err",
                "tolerance", "result");
    for (const OpCheck& c : checks) {
        const bool ok = c.failure.empty() && c.error <= c.tol;
        failures += ok ? 0 : 1;
        std::printf("%-36s %-9s %12.3g %10.1g  %s\n", c.op.c_str(),
                    std::string(dtype_name(c.dtype)).c_str(), c.error, c.tol,
                    ok ? "ok" : (c.failure.empty() ? "FAIL" : ("FAIL: " + c.failure).c_str()));
    }
    std::printf("\n%-36s %-15s %12s %10s  %s\n", "training step (3 steps)", "policy",
                "loss rel err", "tolerance", "result");
    for (const char* policy : {"float64", "float32", "mixed_float16", "mixed_bfloat16"}) {
        std::string verdict = "ok";
        double err = 0;
        const double tol = std::string(policy) == "float64" ? 1e-9 : 2e-2;
        try {
            err = first_step_loss_error(cpu, gpu, data, policy);
            if (!(err <= tol)) verdict = "FAIL";
        } catch (const std::exception& e) {
            verdict = std::string("FAIL: ") + e.what();
        }
        if (verdict != "ok") ++failures;
        std::printf("%-36s %-15s %12.3g %10.1g  %s\n", "mlp step", policy, err, tol,
                    verdict.c_str());
    }
    return failures;
}

// Out of memory, then on as normal: an allocation beyond the device and a run whose batch cannot
// fit both fail with Error(OutOfMemory), leave nothing more allocated, and a normal run trains
// after them on the same engine (on a GPU the error must not be sticky). Prints one row; returns
// the failures.
int check_out_of_memory(Backend& engine, const Mnist& data) {
    std::string verdict = "ok";
    const std::size_t in_use_before = engine.memory_in_use(); // cached workspaces may stay
    auto expect_oom = [&](const char* what, const std::function<void()>& call) {
        try {
            call();
            verdict = std::string("FAIL: ") + what + " was granted";
        } catch (const Error& err) {
            if (err.kind() != ErrorKind::OutOfMemory)
                verdict = std::string("FAIL: ") + what + ": " + err.what();
        }
        if (verdict == "ok" && engine.memory_in_use() != in_use_before)
            verdict = std::string("FAIL: ") + what + " left memory allocated";
    };
    expect_oom("an allocation beyond the device", [&] {
        Buffer b = engine.allocate(engine.info().memory_total + (std::size_t{1} << 30));
    });
    Experiment e;
    e.name = "selftest-oom";
    e.model = mlp_spec();
    e.policy = "float32";
    e.batch_size = 64;
    e.epochs = 1;
    e.max_steps = 3;
    e.device = engine.info().id;
    Experiment huge = e;
    huge.batch_size = 1000000;                 // the most the experiment reader accepts
    for (LayerSpec& layer : huge.model.layers) // activations alone: 262 GB
        if (layer.type == LayerType::Dense && layer.units > 10) layer.units = 65536;
    if (verdict == "ok")
        expect_oom("a batch of 10^6 on Dense 65536", [&] { Trainer t(huge, data, engine); });
    if (verdict == "ok") {
        try {
            Trainer trainer(e, data, engine);
            TrainControl control;
            const RunSummary summary = trainer.run(control, {});
            if (summary.status != RunStatus::Completed || summary.steps != 3)
                verdict = "FAIL: the run after the OOM did not complete: " + summary.message;
        } catch (const Error& err) {
            verdict = std::string("FAIL: the run after the OOM: ") + err.what();
        }
    }
    std::printf("%-8s %-63s  %s\n", engine.info().id.c_str(),
                "out of memory (an allocation beyond the device, a 10^6 batch), then a run",
                verdict.c_str());
    return verdict == "ok" ? 0 : 1;
}

// Short training runs of every policy on one engine; prints one row each, returns the failures.
int train_policies(const char* engine, Backend& backend, const Mnist& data) {
    int failures = 0;
    for (const char* model : {"mlp", "cnn"})
        for (const Policy& policy : all_policies()) {
            Experiment e;
            e.name = std::string("selftest-") + model;
            e.model = std::string(model) == "mlp" ? mlp_spec() : cnn_spec();
            e.policy = policy.name;
            e.optimizer = optimizer_defaults(OptimizerType::Adam);
            e.optimizer.learning_rate = 0.003;
            e.batch_size = 64;
            e.epochs = 3;
            e.device = engine;
            std::string verdict = "ok";
            double first = NAN, last = NAN, accuracy = 0;
            try {
                Trainer trainer(e, data, backend);
                TrainControl control;
                TrainerCallbacks callbacks;
                callbacks.on_step = [&](const StepRecord& r) {
                    if (std::isnan(first) && !r.skipped) first = r.loss;
                    if (!r.skipped) last = r.loss;
                };
                RunSummary summary = trainer.run(control, callbacks);
                accuracy = summary.val_accuracy;
                // Pure 16-bit policies may train poorly; they must still produce finite numbers.
                const bool pure16 = policy.name == "float16" || policy.name == "bfloat16";
                if (summary.status != RunStatus::Completed || !std::isfinite(last))
                    verdict = "FAIL: " + summary.message;
                else if (!pure16 && !(last < first && accuracy > 0.5))
                    verdict = "FAIL: did not learn";
            } catch (const Error& err) {
                verdict = std::string("FAIL: ") + err.what();
            }
            if (verdict != "ok") ++failures;
            std::printf("%-8s %-6s %-16s %10.4f %10.4f %9.1f%%  %s\n", engine, model,
                        policy.name.c_str(), first, last, 100.0 * accuracy, verdict.c_str());
        }
    return failures;
}

} // namespace

int run_selftest(const Args& args) {
    ArgParser parser("selftest", "Check that every policy trains on each engine of this build.");
    parser.add_flag("--skip-code",
                    "exit with 77 (ctest's 'skipped') when no GPU engine could be checked");
    parser.add_flag("--self-parity",
                    "only the op-parity table, with a second CPU engine in the GPU's place (checks "
                    "the checker where no GPU exists: every error must be 0)");
    parser.parse(args);
    if (parser.help_requested()) {
        std::printf("%s", parser.help().c_str());
        return 0;
    }
    const Mnist data = synthetic_mnist(512, 256);
    if (parser.has("--self-parity")) {
        BackendChoice other = create_backend("cpu");
        const int failures = check_gpu(*other.backend, data);
        std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "passed", failures);
        return failures ? 1 : 0;
    }
    int failures = 0;
    std::printf("%-8s %-6s %-16s %10s %10s %10s  %s\n", "engine", "model", "policy", "loss@1",
                "loss@end", "accuracy", "result");
    BackendChoice cpu = create_backend("cpu");
    failures += train_policies("cpu", *cpu.backend, data);
    failures += check_out_of_memory(*cpu.backend, data);

    bool gpu_checked = false;
    std::unique_ptr<Backend> gpu;
    try {
        gpu = create_backend("cuda").backend;
    } catch (const Error& err) {
        std::printf("cuda     skipped: %s\n", err.what());
    }
    if (gpu) { // from here on, any error is a failure, never a skip
        try {
            failures += train_policies(gpu->info().id.c_str(), *gpu, data);
            failures += check_out_of_memory(*gpu, data);
            failures += check_gpu(*gpu, data);
        } catch (const std::exception& err) {
            std::printf("cuda     FAIL: %s\n", err.what());
            ++failures;
        }
        gpu_checked = true;
    }
    std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "passed", failures);
    if (failures) return 1;
    if (!gpu_checked && parser.has("--skip-code")) return 77;
    return 0;
}

} // namespace mantissa::cli
