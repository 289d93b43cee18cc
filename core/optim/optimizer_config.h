// Optimizer settings with Keras's names: SGD (momentum, nesterov), RMSprop, Adam, AdamW, and the
// convention (Keras 3, tf.keras 2.x, PyTorch) whose formulas and defaults they follow. The update
// math itself lives in update_rules.h so every backend applies the same formulas.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/host_device.h"
#include "core/optim/lr_schedule.h"

namespace mantissa {

enum class OptimizerType { SGD, RMSprop, Adam, AdamW };

// Whose formulas the update follows (update_rules.h writes each out with its source). They agree
// in exact arithmetic except where epsilon sits; under a pure 16-bit policy, where every operation
// rounds, they train differently (the classic lab's pure float16 fails under tf_keras_2).
enum class OptimizerConvention {
    Keras,    // Keras 3 (and tf.keras from TF 2.11): RMSprop's epsilon inside the square root
    TfKeras2, // tf.keras in TF 2.0-2.10 (optimizer_v2): RMSprop's epsilon outside the root
    PyTorch,  // torch.optim (2.x): its formulas, its defaults, float32 arithmetic inside each op
};

struct OptimizerConfig {
    OptimizerType type = OptimizerType::RMSprop;
    OptimizerConvention convention = OptimizerConvention::Keras;
    double learning_rate = 0.001;
    // SGD and RMSprop
    double momentum = 0.0;
    bool nesterov = false; // SGD only
    // RMSprop (PyTorch calls it alpha)
    double rho = 0.9;
    bool centered = false;
    // Adam / AdamW
    double beta_1 = 0.9;
    double beta_2 = 0.999;
    // all but SGD
    double epsilon = 1e-7;
    // AdamW (decoupled): w -= lr * weight_decay * w
    double weight_decay = 0.004;
    // The learning rate over the run (lr_schedule.h); Constant: learning_rate every step. A
    // schedule's base rate is learning_rate (Keras's initial_learning_rate, OneCycle's max_lr).
    LearningRateSchedule schedule;

    bool operator==(const OptimizerConfig&) const = default;
};

// "sgd", "rmsprop", "adam", "adamw" (case-insensitive); throws Error(Config) listing valid names.
OptimizerType optimizer_type_from_name(std::string_view name);
const char* optimizer_type_name(OptimizerType type); // "sgd", "rmsprop", "adam", "adamw"
// "keras", "tf_keras_2", "pytorch" (case-insensitive); throws Error(Config) listing valid names.
OptimizerConvention optimizer_convention_from_name(std::string_view name);
const char* optimizer_convention_name(OptimizerConvention convention);
// One line for the Settings form and the CLI's help: whose formulas, and where epsilon sits.
const char* optimizer_convention_summary(OptimizerConvention convention);
// The convention's defaults for a type: Keras 3 and tf.keras 2 (SGD lr 0.01; the others lr 0.001,
// epsilon 1e-7, rho 0.9); PyTorch (SGD lr 0.001; RMSprop lr 0.01, alpha 0.99; epsilon 1e-8;
// AdamW weight_decay 0.01).
OptimizerConfig optimizer_defaults(OptimizerType type,
                                   OptimizerConvention convention = OptimizerConvention::Keras);
// Number of per-variable slots the optimizer keeps (SGD without momentum: 0; Adam: 2; ...).
int optimizer_slot_count(const OptimizerConfig& config);
// Slot names, for tensor names and the Plan view: "momentum", "velocity", "average_gradient", "m",
// "v".
const char* optimizer_slot_name(const OptimizerConfig& config, int slot);
// Whether RMSprop adds epsilon after the square root under this convention (tf_keras_2 without
// momentum, pytorch): in float16 a velocity that underflows to 0 leaves lr*g/epsilon.
bool rmsprop_epsilon_outside_root(const OptimizerConfig& config);
// The learning rate the next update uses, after `iterations` applied updates and `skipped`
// skipped steps. The schedule's step: Keras counts applied updates (optimizer.iterations; a
// skipped step does not advance it), PyTorch's scheduler.step() runs every training step. Keras
// evaluates a schedule in float32, so under the keras conventions a scheduled rate is rounded to
// float32; PyTorch's is a Python float (double). scheduled_rate takes the fields one by one, for
// the CUDA kernel's copy of the rule.
MANTISSA_HD inline double scheduled_rate(const LearningRateSchedule& schedule, double base,
                                         OptimizerConvention convention, std::int64_t iterations,
                                         std::int64_t skipped) {
    if (schedule.kind == ScheduleKind::Constant) return base;
    const std::int64_t step =
        convention == OptimizerConvention::PyTorch ? iterations + skipped : iterations;
    const double rate = schedule_learning_rate(schedule, base, static_cast<double>(step));
    if (convention == OptimizerConvention::PyTorch) return rate;
    return static_cast<double>(static_cast<float>(rate));
}
MANTISSA_HD inline double learning_rate_at(const OptimizerConfig& config, std::int64_t iterations,
                                           std::int64_t skipped) {
    return scheduled_rate(config.schedule, config.learning_rate, config.convention, iterations,
                          skipped);
}
// The config with that rate as a constant learning_rate: what make_update_rule builds the
// step's rule from.
OptimizerConfig optimizer_at_step(const OptimizerConfig& config, std::int64_t iterations,
                                  std::int64_t skipped);
// Checks ranges (finite positive learning rate, 0 <= momentum < 1, ...) and what the convention
// has (tf.keras 2.x has no AdamW; PyTorch's Nesterov needs momentum); throws Error(Config) naming
// the field, e.g. "optimizer.learning_rate must be a finite number > 0 (got nan)".
void validate_optimizer(const OptimizerConfig& config);

} // namespace mantissa
