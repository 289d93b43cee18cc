// Divergence advice: what to try after a run diverged, read from what the run already used (its
// policy, loss scaling, output softmax and learning rate). Telling a mixed_float16 run with
// dynamic scaling to "try loss scaling, or a mixed policy" would teach the wrong lesson.
#pragma once

#include <string>

#include "core/train/experiment.h"

namespace mantissa {

// One or two sentences: what the run used, then only the remedies it did not already have, e.g.
// "It already used mixed_float16 with dynamic loss scaling. Try a lower learning rate (now
// 0.001) or the final softmax in float32." Throws Error(Config) for an unknown policy name.
std::string divergence_advice(const Experiment& experiment);

} // namespace mantissa
