// Dtype policies with Keras semantics: a compute dtype and a variable dtype.
// mixed_* policies compute in 16 bits and keep float32 variables ("master weights").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/numeric/dtype.h"

namespace mantissa {

struct Policy {
    std::string name;
    DType compute = DType::Float32;
    DType variable = DType::Float32;

    bool is_mixed() const { return compute != variable; }
    bool operator==(const Policy&) const = default;
};

// float32, float64, float16, bfloat16, mixed_float16, mixed_bfloat16.
// Unknown names throw Error(Config) listing the valid ones.
Policy policy_from_name(std::string_view name);
const std::vector<Policy>& all_policies();
// A sentence for tooltips and `mantissa-cli policies`.
std::string policy_description(const Policy& policy);
// Keras/PyTorch default: dynamic loss scaling when the compute dtype is float16 (not bfloat16).
bool loss_scaling_recommended(const Policy& policy);

} // namespace mantissa
