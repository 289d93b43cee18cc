// compile(): describe() then bind() in one call, for callers that want a runnable Plan and have
// no use for the description on its own (tests, the ONNX export).
#pragma once

#include <memory>

#include "core/nn/model.h"
#include "core/plan/bind.h"
#include "core/plan/describe.h"

namespace mantissa {

// Throws Error(Shape) for a stack that does not fit, Error(Config) for bad settings, and
// Error(OutOfMemory) when the arena cannot be allocated.
std::unique_ptr<Plan> compile(const Model& model, const CompileOptions& options, Backend& backend);

} // namespace mantissa
