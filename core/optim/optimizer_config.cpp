// Optimizer names, Keras 3 defaults, slot layout and range checks.
// The slot order defined here is the one update_rules.h and every backend index by.
#include "core/optim/optimizer_config.h"

#include <array>
#include <charconv>
#include <cmath>
#include <string>

#include "core/error.h"
#include "core/text.h"

namespace mantissa {

namespace {

[[noreturn]] void fail(const char* field, const char* requirement, double got) {
    throw Error(ErrorKind::Config, std::string("optimizer.") + field + " must be " + requirement +
                                       " (got " + number_text(got) + ")");
}

void require_positive(const char* field, double value) {
    if (!std::isfinite(value) || value <= 0.0) fail(field, "a finite number > 0", value);
}
void require_non_negative(const char* field, double value) {
    if (!std::isfinite(value) || value < 0.0) fail(field, "a finite number >= 0", value);
}
// Decay rates: 1 would freeze the average, > 1 makes it grow without bound.
void require_unit_interval(const char* field, double value) {
    if (!(value >= 0.0 && value < 1.0)) fail(field, "in [0, 1)", value);
}

} // namespace

OptimizerType optimizer_type_from_name(std::string_view name) {
    const std::string key = lower_ascii(name);
    for (OptimizerType type :
         {OptimizerType::SGD, OptimizerType::RMSprop, OptimizerType::Adam, OptimizerType::AdamW})
        if (key == optimizer_type_name(type)) return type;
    throw Error(ErrorKind::Config, "unknown optimizer '" + std::string(name) +
                                       "'; valid optimizers: sgd, rmsprop, adam, adamw");
}

OptimizerConvention optimizer_convention_from_name(std::string_view name) {
    const std::string key = lower_ascii(name);
    for (OptimizerConvention c :
         {OptimizerConvention::Keras, OptimizerConvention::TfKeras2, OptimizerConvention::PyTorch})
        if (key == optimizer_convention_name(c)) return c;
    throw Error(ErrorKind::Config, "unknown optimizer convention '" + std::string(name) +
                                       "'; valid conventions: keras, tf_keras_2, pytorch");
}

const char* optimizer_convention_name(OptimizerConvention convention) {
    switch (convention) {
    case OptimizerConvention::Keras:
        return "keras";
    case OptimizerConvention::TfKeras2:
        return "tf_keras_2";
    case OptimizerConvention::PyTorch:
        return "pytorch";
    }
    return "?";
}

const char* optimizer_convention_summary(OptimizerConvention convention) {
    switch (convention) {
    case OptimizerConvention::Keras:
        return "Keras 3 and tf.keras from TF 2.11: RMSprop divides by sqrt(v + epsilon)";
    case OptimizerConvention::TfKeras2:
        return "tf.keras in TF 2.0-2.10: RMSprop divides by sqrt(v) + epsilon (the classic lab)";
    case OptimizerConvention::PyTorch:
        return "torch.optim: its formulas and defaults, epsilon after the square root";
    }
    return "?";
}

const char* optimizer_type_name(OptimizerType type) {
    switch (type) {
    case OptimizerType::SGD:
        return "sgd";
    case OptimizerType::RMSprop:
        return "rmsprop";
    case OptimizerType::Adam:
        return "adam";
    case OptimizerType::AdamW:
        return "adamw";
    }
    return "?";
}

OptimizerConfig optimizer_defaults(OptimizerType type, OptimizerConvention convention) {
    // Keras 3 and tf.keras 2.x share their defaults; only the learning rate differs per type
    // (keras.optimizers.SGD defaults to 0.01).
    OptimizerConfig config;
    config.type = type;
    config.convention = convention;
    config.learning_rate = type == OptimizerType::SGD ? 0.01 : 0.001;
    config.momentum = 0.0;
    config.nesterov = false;
    config.rho = 0.9;
    config.centered = false;
    config.beta_1 = 0.9;
    config.beta_2 = 0.999;
    config.epsilon = 1e-7;
    config.weight_decay = 0.004;
    if (convention == OptimizerConvention::PyTorch) {
        // torch.optim 2.x: SGD(lr=1e-3), RMSprop(lr=1e-2, alpha=0.99, eps=1e-8),
        // Adam(lr=1e-3, eps=1e-8), AdamW(lr=1e-3, eps=1e-8, weight_decay=1e-2).
        config.learning_rate = type == OptimizerType::RMSprop ? 0.01 : 0.001;
        config.rho = 0.99;
        config.epsilon = 1e-8;
        config.weight_decay = 0.01;
    }
    return config;
}

// Slot order (Keras 3's variable creation order):
//   SGD:     [momentum]                              (only when momentum != 0)
//   RMSprop: velocity, [momentum], [average_gradient] (momentum > 0, centered)
//   Adam(W): m, v
int optimizer_slot_count(const OptimizerConfig& config) {
    switch (config.type) {
    case OptimizerType::SGD:
        return config.momentum != 0.0 ? 1 : 0;
    case OptimizerType::RMSprop:
        return 1 + (config.momentum > 0.0 ? 1 : 0) + (config.centered ? 1 : 0);
    case OptimizerType::Adam:
    case OptimizerType::AdamW:
        return 2;
    }
    return 0;
}

const char* optimizer_slot_name(const OptimizerConfig& config, int slot) {
    if (slot < 0 || slot >= optimizer_slot_count(config))
        throw Error(ErrorKind::InvalidArgument,
                    "optimizer slot " + std::to_string(slot) + " out of range for " +
                        optimizer_type_name(config.type) + " (it has " +
                        std::to_string(optimizer_slot_count(config)) + " slots)");
    switch (config.type) {
    case OptimizerType::SGD:
        return "momentum";
    case OptimizerType::RMSprop:
        if (slot == 0) return "velocity";
        if (slot == 1 && config.momentum > 0.0) return "momentum";
        return "average_gradient";
    case OptimizerType::Adam:
    case OptimizerType::AdamW:
        return slot == 0 ? "m" : "v";
    }
    return "?";
}

bool rmsprop_epsilon_outside_root(const OptimizerConfig& config) {
    if (config.type != OptimizerType::RMSprop) return false;
    return config.convention == OptimizerConvention::PyTorch ||
           (config.convention == OptimizerConvention::TfKeras2 && config.momentum == 0.0);
}

OptimizerConfig optimizer_at_step(const OptimizerConfig& config, std::int64_t iterations,
                                  std::int64_t skipped) {
    OptimizerConfig at = config;
    at.learning_rate = learning_rate_at(config, iterations, skipped);
    at.schedule = LearningRateSchedule{};
    return at;
}

void validate_optimizer(const OptimizerConfig& config) {
    if (config.convention == OptimizerConvention::TfKeras2 && config.type == OptimizerType::AdamW)
        throw Error(
            ErrorKind::Config,
            "optimizer.type adamw is not in tf.keras 2.0-2.10 (it lived in TensorFlow "
            "Addons); choose sgd, rmsprop or adam, or optimizer.convention keras or pytorch");
    if (config.convention == OptimizerConvention::PyTorch && config.type == OptimizerType::SGD &&
        config.nesterov && config.momentum == 0.0)
        throw Error(ErrorKind::Config, "optimizer.nesterov needs optimizer.momentum > 0 under the "
                                       "pytorch convention (torch.optim.SGD refuses it)");
    require_positive("learning_rate", config.learning_rate);
    validate_schedule(config.schedule, "optimizer.learning_rate.config");
    switch (config.type) {
    case OptimizerType::SGD:
        require_unit_interval("momentum", config.momentum);
        break;
    case OptimizerType::RMSprop:
        require_unit_interval("rho", config.rho);
        require_unit_interval("momentum", config.momentum);
        require_non_negative("epsilon", config.epsilon);
        break;
    case OptimizerType::AdamW:
        require_non_negative("weight_decay", config.weight_decay);
        [[fallthrough]];
    case OptimizerType::Adam:
        require_unit_interval("beta_1", config.beta_1);
        require_unit_interval("beta_2", config.beta_2);
        require_non_negative("epsilon", config.epsilon);
        break;
    }
}

} // namespace mantissa
