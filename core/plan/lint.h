// Lint for a model + policy, shown in the UI and printed by the CLI; never silently "fixed".
// The warnings are the Keras mixed-precision guide's: float32 softmax, multiples of 8, loss
// scaling.
#pragma once

#include <vector>

#include "core/nn/model.h"
#include "core/optim/loss_scale.h"
#include "core/plan/plan.h"

namespace mantissa {

std::vector<LintMessage> lint_model(const Model& model, const LossScaleConfig& resolved_loss_scale);

} // namespace mantissa
