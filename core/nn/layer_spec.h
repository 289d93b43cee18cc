// LayerSpec: the description of one layer as the experiment file and the stack editor hold it.
// Only the fields that matter for `type` are used; the JSON reader rejects the others.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/backend/activation.h"
#include "core/tensor/shape.h"

namespace mantissa {

enum class LayerType {
    Flatten,
    Dense,
    Activation,
    Dropout,
    Conv2D,
    MaxPool2D,
    BatchNormalization,
    LayerNormalization,
};

const char* layer_type_name(LayerType type); // "Flatten", "Dense", "Activation", ...
// Accepts Keras spellings in any case ("dense", "Conv2D", "maxpool2d", "MaxPooling2D").
LayerType layer_type_from_name(const std::string& name);

struct LayerSpec {
    LayerType type = LayerType::Dense;
    std::string name;                // empty: "dense_1", "conv2d_2", ... assigned by the Model
    std::int64_t units = 0;          // Dense
    std::int64_t filters = 0;        // Conv2D
    std::int64_t kernel[2] = {3, 3}; // Conv2D
    std::int64_t stride[2] = {0, 0}; // 0 = default: 1 for Conv2D, the pool size for MaxPool2D
    std::int64_t pool[2] = {2, 2};   // MaxPool2D
    std::string padding = "valid";   // Conv2D: "valid" or "same"
    Activation activation = Activation::Linear; // Dense, Conv2D, Activation
    double rate = 0.0;                          // Dropout
    // BatchNormalization: the moving statistics' decay, moving = moving·momentum +
    // batch·(1 − momentum) (Keras's default 0.99; PyTorch's momentum 0.1 is 1 − this).
    double momentum = 0.99;
    double epsilon = 1e-3; // BatchNormalization, LayerNormalization: added to the variance
    std::optional<std::string> dtype; // per-layer policy name; empty = the global policy

    bool operator==(const LayerSpec&) const = default;
};

struct ModelSpec {
    Shape input = {28, 28, 1}; // per-example input shape (no batch dimension)
    std::vector<LayerSpec> layers;

    bool operator==(const ModelSpec&) const = default;
};

} // namespace mantissa
