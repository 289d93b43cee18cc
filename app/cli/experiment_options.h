// The experiment options shared by `train` and `bench`: --config plus overrides of its fields.
// Overrides are validated like the file itself, and errors name the option.
#pragma once

#include "app/cli/args.h"
#include "core/train/experiment.h"

namespace mantissa::cli {

// --config, --policy, --device, --epochs, --batch, --optimizer, --lr, --seed, --max-steps,
// --loss-scale, --initial-scale, --growth-interval, --data
void add_experiment_options(ArgParser& parser);
// Loads --config (Error(Config) naming the file) and applies the overrides (UsageError naming
// the option).
Experiment experiment_from_options(const ArgParser& parser);

} // namespace mantissa::cli
