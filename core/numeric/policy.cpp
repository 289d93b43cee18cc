// The policy table and its descriptions.
// Descriptions are shown in the CLI and as tooltips, so they explain the trade-off in one sentence.
#include "core/numeric/policy.h"

#include "core/error.h"

namespace mantissa {

const std::vector<Policy>& all_policies() {
    static const std::vector<Policy> policies = {
        {"float32", DType::Float32, DType::Float32, std::nullopt},
        {"float64", DType::Float64, DType::Float64, std::nullopt},
        {"float16", DType::Float16, DType::Float16, std::nullopt},
        {"bfloat16", DType::BFloat16, DType::BFloat16, std::nullopt},
        {"mixed_float16", DType::Float16, DType::Float32, std::nullopt},
        {"mixed_bfloat16", DType::BFloat16, DType::Float32, std::nullopt},
        // Transformer Engine semantics: quantised GEMM inputs, bfloat16 elsewhere, float32
        // masters (core/numeric/quant_recipe).
        {"mixed_float8", DType::BFloat16, DType::Float32, make_recipe("mixed_float8")},
        {"mxfp8_e4m3", DType::BFloat16, DType::Float32, make_recipe("mxfp8_e4m3")},
        {"mxfp8_e5m2", DType::BFloat16, DType::Float32, make_recipe("mxfp8_e5m2")},
        {"mxfp6_e3m2", DType::BFloat16, DType::Float32, make_recipe("mxfp6_e3m2")},
        {"mxfp6_e2m3", DType::BFloat16, DType::Float32, make_recipe("mxfp6_e2m3")},
        {"mxfp4", DType::BFloat16, DType::Float32, make_recipe("mxfp4")},
        {"nvfp4", DType::BFloat16, DType::Float32, make_recipe("nvfp4")},
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

Policy policy_with_recipe(std::string_view name, const std::optional<RecipeOptions>& options) {
    Policy policy = policy_from_name(name);
    if (options) policy.quant = make_recipe(name, *options);
    return policy;
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
    if (policy.name == "mixed_float8")
        return "FP8 GEMM inputs (E4M3 forward, E5M2 gradients) with delayed per-tensor scaling "
               "(recipe: delayed, current or block), bfloat16 elsewhere, float32 master weights.";
    if (policy.name == "nvfp4")
        return "NVFP4 GEMM inputs: E2M1 values, an E4M3 scale per 16 (16x16 weight tiles) and a "
               "float32 tensor scale, stochastic rounding on gradients; bfloat16 elsewhere.";
    if (policy.quant)
        return "MX block format on GEMM inputs (" + describe_quant_spec(policy.quant->activation) +
               "), bfloat16 elsewhere, float32 master weights.";
    return std::string(dtype_name(policy.compute)) + " compute, " +
           std::string(dtype_name(policy.variable)) + " variables.";
}

bool loss_scaling_recommended(const Policy& policy) {
    return policy.compute == DType::Float16;
}

} // namespace mantissa
