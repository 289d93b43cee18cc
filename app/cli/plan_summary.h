// Prints a compiled plan the way Keras's model.summary() does, plus memory per category,
// FLOPs per step and the lint messages. Shared by `train` and `bench`.
#pragma once

#include <cstdio>
#include <string>

#include "core/plan/plan.h"

namespace mantissa::cli {

std::string human_bytes(std::size_t bytes); // "1.5 MiB"
void print_plan_summary(std::FILE* out, const Plan& plan, const MemoryByCategory& memory);

} // namespace mantissa::cli
