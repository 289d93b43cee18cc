// resolve_fp8_gemm (see fp8_lowering.h).
#include "core/plan/fp8_lowering.h"

#include "core/backend/backend.h"

namespace mantissa {

bool resolve_fp8_gemm(const Policy& policy, const Backend* engine) {
    if (!policy.quant) return false;
    const std::string& gemm = policy.quant->gemm;
    if (gemm == "fp8") return true;
    return gemm == "auto" && engine && engine->native_fp8_gemm();
}

} // namespace mantissa
