// A trained model's variables as host data, named by layer ("dense_1.kernel", "conv2d_1.bias"):
// what every export format writes and reads. Moving them in and out of a Plan is core/plan's
// business (plan_weights.h), so this file format layer knows nothing of plans or backends.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/numeric/dtype.h"
#include "core/tensor/shape.h"

namespace mantissa {

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

} // namespace mantissa
