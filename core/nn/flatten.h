// Flatten: (h, w, c) per example -> (h·w·c), a view of the same memory (no step, no bytes).
// Casts still happen in the next layer, so Flatten never changes a dtype.
#pragma once

#include "core/nn/layer.h"

namespace mantissa {

class Flatten final : public Layer {
public:
    explicit Flatten(LayerSpec spec) : Layer(std::move(spec)) {}
    Shape output_shape(const Shape& input) const override;
};

} // namespace mantissa
