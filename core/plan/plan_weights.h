// Moving a trained model's variables between a compiled Plan on a Backend and host memory
// (core/io's ModelWeights), with the checks an import needs.
#pragma once

#include <string>

#include "core/backend/backend.h"
#include "core/io/model_weights.h"

namespace mantissa {

class Plan;

// Downloads every variable of the plan in its variable dtype: the float32 master weights under a
// mixed policy, float16 under pure float16, float64 under float64.
ModelWeights read_model_weights(const Plan& plan, Backend& backend);

struct LoadWeightsOptions {
    // A stored dtype wider than (or equal to) the model's variable dtype converts exactly and is
    // always accepted; a narrower variable dtype rounds the weights and needs this switch.
    bool allow_rounding = false;
};

// Checks `weights` against the plan's variables (every name present, no extra tensor, same
// shape, a floating dtype that converts as allowed) and uploads them. Throws Error(Config)
// starting with `source` (the file) and naming the tensor, what the model expects and what the
// file holds; nothing is uploaded unless every tensor passes.
void load_model_weights(Plan& plan, Backend& backend, const ModelWeights& weights,
                        const std::string& source, const LoadWeightsOptions& options = {});

} // namespace mantissa
