// Parity runs: one op case on two engines, or a few training steps on two engines.
#include "core/check/parity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/check/float64_reference.h"
#include "core/error.h"
#include "core/numeric/convert.h"
#include "core/optim/optimizer_config.h"
#include "core/train/trainer.h"

namespace mantissa {

namespace {

std::vector<double> read_values(Backend& engine, const Tensor& t) {
    std::vector<unsigned char> bytes(t.bytes());
    engine.download(t, bytes.data());
    std::vector<double> out(static_cast<std::size_t>(t.numel()));
    convert_to_double(bytes.data(), t.dtype, out.data(), out.size());
    return out;
}

} // namespace

double max_error(Backend& reference, const Tensor& ref, Backend& candidate, const Tensor& cand,
                 std::string* worst_at) {
    const std::vector<double> x = read_values(reference, ref), y = read_values(candidate, cand);
    if (x.size() != y.size()) return INFINITY;
    double scale = 0;
    for (double v : x)
        if (std::isfinite(v)) scale = std::max(scale, std::fabs(v));
    // Elements near zero are judged against a tenth of the tensor's largest magnitude: an op that
    // rounds twice, or sums in another order, is off by an ulp of its intermediate, which can be
    // far larger than a small result.
    const double floor = std::max(scale * 0.1, 1e-30);
    double worst = 0;
    std::size_t at = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (!std::isfinite(x[i]) || !std::isfinite(y[i])) {
            if (!(std::isnan(x[i]) && std::isnan(y[i])) && x[i] != y[i]) {
                worst = INFINITY;
                at = i;
                break;
            }
            continue;
        }
        const double e = std::fabs(y[i] - x[i]) / (std::fabs(x[i]) + floor);
        if (e > worst) {
            worst = e;
            at = i;
        }
    }
    if (worst_at && worst > 0) {
        char text[160];
        std::snprintf(text, sizeof text, "%s[%zu]: reference %.9g, candidate %.9g",
                      ref.name.empty() ? "output" : ref.name.c_str(), at, x[at], y[at]);
        *worst_at = text;
    }
    return worst;
}

CaseResult run_case(const OpCase& op_case, Backend& reference, Backend& candidate) {
    CaseResult r;
    r.name = op_case.name + " " + op_case.geometry;
    r.dtype = op_case.dtype;
    const bool against_float64 = dynamic_cast<Float64Reference*>(&reference) != nullptr;
    r.tolerance = against_float64 ? op_case.float64_tolerance : op_case.tolerance;
    if (op_case.needs_fp8_gemm)
        for (Backend* engine : {&reference, &candidate})
            if (!engine->supports_fp8_gemm()) {
                r.skipped =
                    engine->info().name +
                    " has no FP8 GEMM (cuBLASLt's FP8 kernels need compute capability 8.9+)";
                return r;
            }
    // A case with no GEMM or convolution must not report the previous case's choice.
    candidate.clear_last_choice();
    try {
        CaseContext ctx(reference, candidate);
        for (Twin* t : op_case.body(ctx)) {
            std::string at;
            const double e = max_error(reference, t->on(0), candidate, t->on(1), &at);
            if (e > r.error) {
                r.error = e;
                r.worst = at;
            }
        }
        candidate.synchronize();
    } catch (const std::exception& err) {
        r.failure = err.what();
    }
    r.choice = candidate.last_choice();
    return r;
}

ModelSpec parity_model(const std::string& policy) {
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
    if (policy != "float64") softmax.dtype = "float32";
    spec.layers = {flatten, hidden, out, softmax};
    return spec;
}

double training_tolerance(const std::string& policy) {
    return policy == "float64" ? 1e-9 : 2e-2;
}

TrainingParity training_parity(Backend& reference, Backend& candidate, const Mnist& data,
                               const std::string& policy, int steps) {
    TrainingParity r;
    r.policy = policy;
    r.tolerance = training_tolerance(policy);
    try {
        Experiment e;
        e.name = "parity-" + policy;
        e.model = parity_model(policy);
        e.policy = policy;
        e.optimizer = optimizer_defaults(OptimizerType::Adam);
        e.batch_size = 64;
        e.epochs = 1;
        Trainer on_ref(e, data, reference), on_cand(e, data, candidate);
        on_ref.wrap_at_full_batches(); // the offsets below cycle over the full batches
        on_cand.wrap_at_full_batches();
        const std::int64_t batches = std::max<std::int64_t>(1, data.train.count / e.batch_size);
        for (int step = 0; step < steps; ++step) {
            const std::int64_t offset = (step % batches) * e.batch_size;
            const StepScalars a = on_ref.step_once(offset), b = on_cand.step_once(offset);
            ++r.steps;
            const double la = a.loss_sum / std::max<double>(1.0, double(a.examples));
            const double lb = b.loss_sum / std::max<double>(1.0, double(b.examples));
            const double err = std::fabs(la - lb) / std::max(std::fabs(la), 1e-12);
            r.max_loss_rel_error = std::max(r.max_loss_rel_error, std::isnan(err) ? INFINITY : err);
            if (a.loss_scale != b.loss_scale || a.skipped != b.skipped) {
                r.failure =
                    "step " + std::to_string(step + 1) + ": loss scale or skipped step differs";
                break;
            }
        }
    } catch (const std::exception& err) {
        r.failure = err.what();
    }
    return r;
}

} // namespace mantissa
