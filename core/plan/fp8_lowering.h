// recipe.gemm resolved against an engine: whether a per-tensor FP8 recipe's Dense GEMMs run on
// float8 codes (FP8 GEMMs) or on quantised-and-decoded float32 inputs (fake quantisation). The
// plan's CompileOptions::fp8_gemm comes from here, so the trainer, the evaluator and the Plan
// view decide alike.
#pragma once

#include "core/numeric/policy.h"

namespace mantissa {

class Backend;

// "fp8": true (bind() then refuses an engine without FP8 GEMMs, naming recipe.gemm); "auto":
// whether `engine` runs FP8 GEMMs on FP8 hardware (false without an engine: the Plan view
// before a device is chosen); "fake_quant" and every other policy: false.
bool resolve_fp8_gemm(const Policy& policy, const Backend* engine);

} // namespace mantissa
