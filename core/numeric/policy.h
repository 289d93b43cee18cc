// Dtype policies with Keras semantics: a compute dtype and a variable dtype.
// mixed_* policies compute in 16 bits and keep float32 variables ("master weights").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/numeric/dtype.h"
#include "core/numeric/quant_recipe.h"

namespace mantissa {

struct Policy {
    std::string name;
    DType compute = DType::Float32;
    DType variable = DType::Float32;
    // The frontier policies (mixed_float8, mxfp*, nvfp4): how GEMM/convolution inputs are
    // quantised; the other ops compute in `compute` (bfloat16), master weights stay float32.
    std::optional<QuantRecipe> quant;

    bool is_mixed() const { return compute != variable; }
    bool operator==(const Policy&) const = default;
};

// float32, float64, float16, bfloat16, mixed_float16, mixed_bfloat16, and the quantised
// mixed_float8 (delayed FP8 by default), mxfp8_e4m3, mxfp8_e5m2, mxfp6_e3m2, mxfp6_e2m3, mxfp4,
// nvfp4 with their default recipes. Unknown names throw Error(Config) listing the valid ones.
Policy policy_from_name(std::string_view name);
// policy_from_name() with an experiment's recipe options applied (Error(Config) "recipe.<field>:
// ..." for bad ones, or when the policy quantises nothing and `options` sets anything).
Policy policy_with_recipe(std::string_view name, const std::optional<RecipeOptions>& options);
const std::vector<Policy>& all_policies();
// A sentence for tooltips and `mantissa-cli policies`.
std::string policy_description(const Policy& policy);
// Keras/PyTorch default: dynamic loss scaling when the compute dtype is float16 (not bfloat16).
bool loss_scaling_recommended(const Policy& policy);

} // namespace mantissa
