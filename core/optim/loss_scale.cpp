// Loss-scale presets, names, validation and the dynamic-scale state machine.
// next_loss_scale() is the single definition the CPU engine, the CUDA port and the tests follow.
#include "core/optim/loss_scale.h"
#include "core/optim/loss_scale_rule.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/text.h"

namespace mantissa {

namespace {

[[noreturn]] void fail(const char* field, const std::string& requirement, double got) {
    throw Error(ErrorKind::Config, std::string("loss_scale.") + field + " must be " + requirement +
                                       " (got " + number_text(got) + ")");
}

// The loss is float32 (float64 under float64) when it is scaled; a scale float32 cannot hold
// would turn every loss into inf.
constexpr double kFloat32Max = std::numeric_limits<float>::max();

} // namespace

LossScaleConfig keras_loss_scale() {
    return {LossScaleMode::Dynamic, 32768.0, 2000, 2.0, 1.0};
}

LossScaleConfig pytorch_loss_scale() {
    // GradScaler has no floor: the scale may back off below 1.
    return {LossScaleMode::Dynamic, 65536.0, 2000, 2.0, 0.0};
}

LossScaleMode loss_scale_mode_from_name(std::string_view name) {
    const std::string key = lower_ascii(name);
    for (LossScaleMode mode :
         {LossScaleMode::Auto, LossScaleMode::None, LossScaleMode::Fixed, LossScaleMode::Dynamic})
        if (key == loss_scale_mode_name(mode)) return mode;
    throw Error(ErrorKind::Config, "unknown loss scale mode '" + std::string(name) +
                                       "'; valid modes: auto, none, fixed, dynamic");
}

const char* loss_scale_mode_name(LossScaleMode mode) {
    switch (mode) {
    case LossScaleMode::Auto:
        return "auto";
    case LossScaleMode::None:
        return "none";
    case LossScaleMode::Fixed:
        return "fixed";
    case LossScaleMode::Dynamic:
        return "dynamic";
    }
    return "?";
}

LossScaleConfig resolve_loss_scale(LossScaleConfig config, const Policy& policy) {
    if (config.mode == LossScaleMode::Auto)
        config.mode =
            loss_scaling_recommended(policy) ? LossScaleMode::Dynamic : LossScaleMode::None;
    return config;
}

void validate_loss_scale(const LossScaleConfig& config) {
    if (config.mode == LossScaleMode::None) return; // nothing below is used
    if (!std::isfinite(config.initial) || config.initial <= 0.0 || config.initial > kFloat32Max)
        fail("initial", "a finite number > 0 and <= float32 max (3.4e38)", config.initial);
    if (config.mode == LossScaleMode::Fixed) return;
    if (config.growth_interval < 1)
        fail("growth_interval", "an integer >= 1", static_cast<double>(config.growth_interval));
    if (!std::isfinite(config.factor) || config.factor <= 1.0)
        fail("factor", "a finite number > 1", config.factor);
    if (!std::isfinite(config.min) || config.min < 0.0)
        fail("min", "a finite number >= 0", config.min);
    if (config.min > config.initial)
        fail("min", "<= loss_scale.initial (" + number_text(config.initial) + ")", config.min);
}

LossScaleStep next_loss_scale(const LossScaleState& state, bool found_nonfinite,
                              const LossScaleConfig& config) {
    LossScaleStep step{state.scale, false, state};
    switch (config.mode) {
    case LossScaleMode::None:
    case LossScaleMode::Fixed:
        return step;
    case LossScaleMode::Auto:
        throw Error(ErrorKind::Internal,
                    "next_loss_scale called with mode auto; resolve_loss_scale() it first");
    case LossScaleMode::Dynamic:
        break;
    }
    const DynamicScaleStep next =
        dynamic_scale_step(state.scale, state.good_steps, found_nonfinite, config.factor,
                           config.min, config.growth_interval);
    step.skipped = next.skipped;
    step.next.scale = next.scale;
    step.next.good_steps = next.good_steps;
    return step;
}

} // namespace mantissa
