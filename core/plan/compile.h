// compile(): turns a Model + policy + batch size into a Plan for one backend, allocating every
// buffer up front so memory per category is known exactly before the first step.
#pragma once

#include <memory>

#include "core/nn/model.h"
#include "core/plan/plan.h"

namespace mantissa {

// Throws Error(Shape) for a stack that does not fit, Error(Config) for bad settings, and
// Error(OutOfMemory) when the arena cannot be allocated.
std::unique_ptr<Plan> compile(const Model& model, const CompileOptions& options, Backend& backend);

} // namespace mantissa
