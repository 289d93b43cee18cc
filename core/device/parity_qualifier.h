// The real qualification check: every case of the op-case table (core/check/op_cases.h) on the
// GPU against the CPU engine, then short training runs under float32 and mixed_float16 compared
// step by step. Designed to take well under 30 s on a data-centre GPU.
#pragma once

#include "core/device/device_selection.h"

namespace mantissa {

Qualifier parity_qualifier();

} // namespace mantissa
