// bind(): a PlanSpec made executable on one backend: the workspace sized for that engine, one
// arena carved into every tensor, and each step's run closure over the bound tensors.
#pragma once

#include <memory>

#include "core/plan/plan.h"

namespace mantissa {

// Throws Error(Config) when the spec quantises (a frontier policy) and the engine has no
// quantise kernels, naming the layer and its policy; Error(OutOfMemory) when the arena cannot be
// allocated. The Plan keeps the spec as the
// description of what it runs (pass an rvalue to move it in).
std::unique_ptr<Plan> bind(PlanSpec spec, Backend& backend);

} // namespace mantissa
