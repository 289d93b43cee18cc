// Loss scaling: configuration and the exact dynamic-scale state machine (Keras / PyTorch
// semantics). next_loss_scale() is a pure function so the CPU engine, the CUDA kernel and the tests
// share it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/numeric/policy.h"

namespace mantissa {

enum class LossScaleMode {
    Auto,    // dynamic when the compute dtype is float16, none otherwise (resolved at compile time)
    None,    // no scaling, no skipping
    Fixed,   // multiply by `initial`, divide gradients back; no skipping (Keras dynamic=False)
    Dynamic, // Keras LossScaleOptimizer / PyTorch GradScaler
};

struct LossScaleConfig {
    LossScaleMode mode = LossScaleMode::Auto;
    double initial = 32768.0;   // Keras: 2^15. PyTorch preset: 2^16
    int growth_interval = 2000; // finite steps before the scale grows
    double factor = 2.0;        // growth and back-off factor
    double min = 1.0;           // floor for the scale after a back-off (TF Keras uses 1)

    bool operator==(const LossScaleConfig&) const = default;
};

LossScaleConfig keras_loss_scale();                             // dynamic, 2^15, 2000, x2, floor 1
LossScaleConfig pytorch_loss_scale();                           // dynamic, 2^16, 2000, x2, no floor
LossScaleMode loss_scale_mode_from_name(std::string_view name); // "auto","none","fixed","dynamic"
const char* loss_scale_mode_name(LossScaleMode mode);
// Resolves Auto against a policy (dynamic for float16 compute, none otherwise).
LossScaleConfig resolve_loss_scale(LossScaleConfig config, const Policy& policy);
// Throws Error(Config) naming the field for a non-finite or non-positive scale, interval < 1, ...
void validate_loss_scale(const LossScaleConfig& config);

struct LossScaleState {
    double scale = 32768.0;
    std::int64_t good_steps = 0; // consecutive finite steps since the last change

    bool operator==(const LossScaleState&) const = default;
};

struct LossScaleStep {
    double scale_used; // the scale this step multiplied the loss by
    bool skipped;      // the update was not applied (dynamic mode and a non-finite gradient)
    LossScaleState next;
};

// One step of the state machine:
//  dynamic, non-finite: skip; scale = max(scale / factor, min); good_steps = 0
//  dynamic, finite:     apply; good_steps + 1 == growth_interval ? (scale *= factor unless that
//                       overflows float32, good_steps = 0) : good_steps + 1
//  none / fixed:        apply; state unchanged
LossScaleStep next_loss_scale(const LossScaleState& state, bool found_nonfinite,
                              const LossScaleConfig& config);

} // namespace mantissa
