// describe(): a Model + policy + batch size as a PlanSpec: every step, tensor, cast, FLOP and byte
// per category, decided without a backend (the Plan view and `plan` summaries read it).
#pragma once

#include "core/nn/model.h"
#include "core/plan/plan_spec.h"

namespace mantissa {

// Throws Error(Shape) for a stack that does not fit, Error(Config) for bad settings.
PlanSpec describe(const Model& model, const CompileOptions& options);

} // namespace mantissa
