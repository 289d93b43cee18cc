// Optimizer settings with Keras's names and defaults: SGD (momentum, nesterov), RMSprop, Adam,
// AdamW. The update math itself lives in update_rules.h so every backend applies the same formulas.
#pragma once

#include <string>
#include <string_view>

namespace mantissa {

enum class OptimizerType { SGD, RMSprop, Adam, AdamW };

struct OptimizerConfig {
    OptimizerType type = OptimizerType::RMSprop;
    double learning_rate = 0.001;
    // SGD and RMSprop
    double momentum = 0.0;
    bool nesterov = false; // SGD only
    // RMSprop
    double rho = 0.9;
    bool centered = false;
    // Adam / AdamW
    double beta_1 = 0.9;
    double beta_2 = 0.999;
    // all but SGD
    double epsilon = 1e-7;
    // AdamW (decoupled): w -= lr * weight_decay * w
    double weight_decay = 0.004;

    bool operator==(const OptimizerConfig&) const = default;
};

// "sgd", "rmsprop", "adam", "adamw" (case-insensitive); throws Error(Config) listing valid names.
OptimizerType optimizer_type_from_name(std::string_view name);
const char* optimizer_type_name(OptimizerType type); // "sgd", "rmsprop", "adam", "adamw"
// Keras defaults for a type (SGD: lr 0.01; the others: lr 0.001, epsilon 1e-7, ...).
OptimizerConfig optimizer_defaults(OptimizerType type);
// Number of per-variable slots the optimizer keeps (SGD without momentum: 0; Adam: 2; ...).
int optimizer_slot_count(const OptimizerConfig& config);
// Slot names, for tensor names and the Plan view: "momentum", "velocity", "average_gradient", "m",
// "v".
const char* optimizer_slot_name(const OptimizerConfig& config, int slot);
// Checks ranges (finite positive learning rate, 0 <= momentum < 1, ...); throws Error(Config)
// naming the field, e.g. "optimizer.learning_rate must be a finite number > 0 (got nan)".
void validate_optimizer(const OptimizerConfig& config);

} // namespace mantissa
