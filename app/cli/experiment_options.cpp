// Experiment options: load the config file, then apply command-line overrides on top.
// --loss-scale accepts auto, none, dynamic and fixed:VALUE (e.g. fixed:1024), as Keras offers.
#include "app/cli/experiment_options.h"

#include <cmath>

#include "core/error.h"
#include "core/numeric/policy.h"

namespace mantissa::cli {

void add_experiment_options(ArgParser& p) {
    p.add_option("--config", "FILE", "experiment JSON (see resources/experiments/)");
    p.add_option(
        "--policy", "P",
        "dtype policy: float32, float64, float16, bfloat16, mixed_float16, mixed_bfloat16, "
        "mixed_float8, mxfp8_e4m3, mxfp8_e5m2, mxfp6_e3m2, mxfp6_e2m3, mxfp4, nvfp4");
    p.add_option("--device", "D", "auto (default), cpu, cuda or cuda:N");
    p.add_option("--epochs", "N", "number of epochs");
    p.add_option("--batch", "N", "batch size");
    p.add_option("--optimizer", "NAME", "sgd, rmsprop, adam or adamw (the convention's defaults)");
    p.add_option("--convention", "C",
                 "optimizer formulas: keras (Keras 3), tf_keras_2 (TF 2.0-2.10: RMSprop's epsilon "
                 "outside the root) or pytorch; keeps the experiment's hyperparameters");
    p.add_option("--lr", "X", "learning rate (a schedule's initial rate; OneCycle's max_lr)");
    p.add_option("--lr-schedule", "S",
                 "NAME[:key=value,...]: ExponentialDecay, PiecewiseConstantDecay, CosineDecay, "
                 "PolynomialDecay (Keras's fields), OneCycle (PyTorch's) or Constant; e.g. "
                 "CosineDecay:decay_steps=2000,alpha=0.1 or OneCycle:pct_start=0.25");
    p.add_option("--seed", "N", "random seed (same seed, same numbers)");
    p.add_option("--max-steps", "N", "stop after N training steps");
    p.add_option("--loss-scale", "MODE", "auto, none, dynamic or fixed:VALUE");
    p.add_option("--initial-scale", "V", "initial loss scale (Keras 32768, PyTorch 65536)");
    p.add_option("--growth-interval", "N", "finite steps before the dynamic scale doubles (2000)");
    p.add_option("--data", "DIR", "MNIST folder (default: $MANTISSA_DATA, then data/mnist)");
}

Experiment experiment_from_options(const ArgParser& p) {
    if (!p.has("--config")) throw UsageError("--config: an experiment file is required");
    Experiment e;
    try {
        e = load_experiment(p.value("--config"));
    } catch (const Error& err) {
        // An unreadable file is a bad argument (exit 2), like a malformed one.
        if (err.kind() != ErrorKind::Io) throw;
        throw UsageError(std::string("--config: ") + err.what());
    }
    auto wrap = [](const std::string& option, auto&& apply) {
        try {
            apply();
        } catch (const Error& err) {
            throw UsageError(option + ": " + err.what());
        }
    };
    if (p.has("--policy"))
        wrap("--policy", [&] { e.policy = policy_from_name(p.value("--policy")).name; });
    if (p.has("--device")) e.device = p.value("--device");
    if (p.has("--epochs"))
        e.epochs = static_cast<int>(p.int_value("--epochs", e.epochs, 1, 100000));
    if (p.has("--batch")) e.batch_size = p.int_value("--batch", e.batch_size, 1, 1000000);
    if (p.has("--convention"))
        wrap("--convention", [&] {
            e.optimizer.convention = optimizer_convention_from_name(p.value("--convention"));
        });
    if (p.has("--optimizer"))
        wrap("--optimizer", [&] {
            OptimizerConfig fresh = optimizer_defaults(
                optimizer_type_from_name(p.value("--optimizer")), e.optimizer.convention);
            if (!p.has("--lr")) fresh.learning_rate = e.optimizer.learning_rate;
            e.optimizer = fresh;
        });
    if (p.has("--lr")) {
        e.optimizer.learning_rate = p.double_value("--lr", e.optimizer.learning_rate);
        if (!(e.optimizer.learning_rate > 0)) throw UsageError("--lr: expected a number > 0");
    }
    if (p.has("--lr-schedule"))
        wrap("--lr-schedule", [&] {
            e.optimizer.schedule =
                schedule_from_spec(p.value("--lr-schedule"), e.optimizer.learning_rate);
        });
    if (p.has("--seed"))
        e.seed = static_cast<std::uint64_t>(p.int_value("--seed", 0, 0, INT64_MAX));
    if (p.has("--max-steps")) e.max_steps = p.int_value("--max-steps", 0, 1, INT64_MAX);
    if (p.has("--loss-scale")) {
        std::string mode = p.value("--loss-scale");
        if (mode.rfind("fixed:", 0) == 0) {
            e.loss_scale.mode = LossScaleMode::Fixed;
            char* end = nullptr;
            const std::string number = mode.substr(6);
            e.loss_scale.initial = std::strtod(number.c_str(), &end);
            if (number.empty() || *end != '\0' || !std::isfinite(e.loss_scale.initial) ||
                e.loss_scale.initial <= 0)
                throw UsageError("--loss-scale: expected fixed:VALUE with VALUE > 0, got '" + mode +
                                 "'");
        } else {
            wrap("--loss-scale", [&] { e.loss_scale.mode = loss_scale_mode_from_name(mode); });
        }
    }
    if (p.has("--initial-scale")) {
        e.loss_scale.initial = p.double_value("--initial-scale", e.loss_scale.initial);
        if (!(e.loss_scale.initial > 0)) throw UsageError("--initial-scale: expected a number > 0");
    }
    if (p.has("--growth-interval"))
        e.loss_scale.growth_interval =
            static_cast<int>(p.int_value("--growth-interval", 2000, 1, 1000000000));
    try {
        validate_experiment(e);
    } catch (const Error& err) {
        throw Error(ErrorKind::Config, p.value("--config") + ": " + err.what());
    }
    return e;
}

} // namespace mantissa::cli
