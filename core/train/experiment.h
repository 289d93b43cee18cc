// Experiment: everything needed to reproduce a run, as one JSON file shared by the GUI and CLI.
// The reader is strict: a wrong type or an unknown field is an error naming the field's path.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/nn/layer_spec.h"
#include "core/numeric/quant_recipe.h"
#include "core/optim/loss_scale.h"
#include "core/optim/optimizer_config.h"

namespace mantissa {

inline constexpr int kExperimentFormatVersion = 1;

enum class DivergencePolicy { Stop, Continue }; // what to do when the training loss is inf/NaN

struct Experiment {
    std::string name = "untitled";
    std::string dataset = "mnist";
    ModelSpec model;
    std::string policy = "float32";
    // The frontier policies' recipe options ({"kind": "current"}, {"scale_rule": "ceil"}, ...);
    // unset: the policy's defaults. Only quantised policies accept one.
    std::optional<RecipeOptions> recipe;
    LossScaleConfig loss_scale;
    OptimizerConfig optimizer;
    std::int64_t batch_size = 128;
    int epochs = 3;
    std::uint64_t seed = 42;
    std::string device = "auto"; // "auto", "cpu", "cuda", "cuda:N"
    bool tf32 = false;           // float32 matmuls on tensor cores (CUDA only)
    bool graph = false;          // CUDA Graph capture of the step (CUDA only)
    std::int64_t max_steps = 0;  // 0 = no limit (whole epochs)
    // Every this many steps (from step 1) the trainer bins the gradients for the histogram
    // chart; 0 = never. One extra forward and backward pass each time, so 50 costs about 2%.
    std::int64_t histogram_every = 50;
    // Every this many steps (from step 1) a quantised policy's scale statistics are read back
    // (a `quant` record: amax, scale, clipped and flushed share per layer and role); 0 = never.
    std::int64_t quant_every = 50;
    DivergencePolicy on_divergence = DivergencePolicy::Stop;

    bool operator==(const Experiment&) const = default;
};

// Parses JSON text. `source` names the file in messages. Throws Error(Config) naming the field,
// e.g. "seed-mlp.json: model.layers[2].units: expected a positive integer, got -4".
Experiment experiment_from_json(const std::string& text, const std::string& source);
Experiment load_experiment(const std::string& path);          // Error(Io) if unreadable
std::string experiment_to_json(const Experiment& experiment); // pretty, with "format_version"
// Writes atomically (temp file + rename). Throws Error(Io).
void save_experiment(const Experiment& experiment, const std::string& path);
// A schedule from the CLI's compact form "NAME[:key=value,...]" (Keras's field names; lists
// separated by '/': "PiecewiseConstantDecay:boundaries=500/900,values=0.01/0.001/0.0001").
// `base` is the learning rate the schedule starts from (a key initial_learning_rate or max_lr
// replaces it). Throws Error(Config) naming the key. "Constant" gives no schedule.
LearningRateSchedule schedule_from_spec(const std::string& spec, double& base);
// The key=value part of that form for a schedule, without its base rate ("decay_steps=1000,
// alpha=0"), every field written: schedule_from_spec(name + ":" + this) reads it back.
std::string schedule_options_text(const LearningRateSchedule& schedule);

// Range checks that need no model: batch >= 1, epochs >= 1, known policy names, optimizer and
// loss-scale ranges. Throws Error(Config) naming the field.
void validate_experiment(const Experiment& experiment);

} // namespace mantissa
