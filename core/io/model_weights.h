// A trained model's variables as host data, named by layer ("dense_1.kernel", "conv2d_1.bias"):
// what every export format writes and what an import checks against a compiled Plan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/numeric/dtype.h"
#include "core/tensor/shape.h"

namespace mantissa {

class Plan;

// One variable. Layouts are Keras's: Dense kernel (in, units), Conv2D kernel (kh, kw, in_c, out_c)
// (HWIO), biases (units) / (out_c).
struct WeightTensor {
    std::string name; // "dense_1.kernel"
    DType dtype = DType::Float32;
    Shape shape;
    std::vector<unsigned char> data; // numel * dtype_size bytes, little-endian storage

    std::int64_t numel() const { return shape_numel(shape); }
};

struct ModelWeights {
    std::vector<WeightTensor> tensors; // in the plan's parameter order (layer by layer)

    const WeightTensor* find(const std::string& name) const; // nullptr when absent
    std::int64_t total_bytes() const;
};

// "dense_1/kernel" (a PlanParam name) -> "dense_1.kernel" (the exported name, as PyTorch and
// Keras 3's safetensors files spell it).
std::string exported_weight_name(const std::string& param_name);

// The tensor converted to `dtype` with one rounding (a copy when the dtype is the same).
// Throws Error(InvalidArgument) for a non-floating target.
WeightTensor converted(const WeightTensor& tensor, DType dtype);
// The values as float64 (exact for every floating dtype Mantissa stores).
std::vector<double> values_as_double(const WeightTensor& tensor);

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
