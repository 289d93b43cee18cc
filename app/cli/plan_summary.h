// Prints a described plan (PlanSpec) the way Keras's model.summary() does, plus memory per
// category, FLOPs per step and the lint messages. Shared by `train` and `bench`.
#pragma once

#include <cstdio>
#include <string>

#include "core/plan/plan_spec.h"

namespace mantissa::cli {

std::string human_bytes(std::size_t bytes); // "1.5 MiB"
// `memory`: the bound plan's (or the trainer's) bytes, the engine's workspace included.
void print_plan_summary(std::FILE* out, const PlanSpec& plan, const MemoryByCategory& memory);

} // namespace mantissa::cli
