// The policy table and its descriptions.
// Descriptions are shown in the CLI and as tooltips, so they explain the trade-off in one sentence.
#include "core/numeric/policy.h"

#include "core/error.h"

namespace mantissa {

const std::vector<Policy>& all_policies() {
    static const std::vector<Policy> policies = {
        {"float32", DType::Float32, DType::Float32},
        {"float64", DType::Float64, DType::Float64},
        {"float16", DType::Float16, DType::Float16},
        {"bfloat16", DType::BFloat16, DType::BFloat16},
        {"mixed_float16", DType::Float16, DType::Float32},
        {"mixed_bfloat16", DType::BFloat16, DType::Float32},
    };
    return policies;
}

Policy policy_from_name(std::string_view name) {
    std::string valid;
    for (const Policy& policy : all_policies()) {
        if (policy.name == name) return policy;
        valid += (valid.empty() ? "" : ", ") + policy.name;
    }
    throw Error(ErrorKind::Config,
                "unknown policy '" + std::string(name) + "'; valid policies: " + valid);
}

std::string policy_description(const Policy& policy) {
    if (policy.name == "float32") return "Compute and variables in float32: the reference.";
    if (policy.name == "float64")
        return "Compute and variables in float64: slow, a reference for gradient checks.";
    if (policy.name == "float16")
        return "Everything in float16, optimizer state too: fastest, but small gradients and "
               "updates are lost.";
    if (policy.name == "bfloat16")
        return "Everything in bfloat16: float32's range with 8 bits of precision; updates are "
               "lost.";
    if (policy.name == "mixed_float16")
        return "Compute in float16, float32 master weights; needs loss scaling.";
    if (policy.name == "mixed_bfloat16")
        return "Compute in bfloat16, float32 master weights; no loss scaling needed.";
    return std::string(dtype_name(policy.compute)) + " compute, " +
           std::string(dtype_name(policy.variable)) + " variables.";
}

bool loss_scaling_recommended(const Policy& policy) {
    return policy.compute == DType::Float16;
}

} // namespace mantissa
