// Dropout: inverted dropout while training (y = x·mask/(1-rate)), identity in evaluation.
// The mask is a pure function of (seed, step, element), so runs are reproducible on any engine.
#pragma once

#include "core/nn/layer.h"

namespace mantissa {

class Dropout final : public Layer {
public:
    explicit Dropout(LayerSpec spec) : Layer(std::move(spec)) {}
    Shape output_shape(const Shape& input) const override;
    std::string detail() const override;
};

} // namespace mantissa
