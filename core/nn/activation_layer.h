// Activation layer: y = f(x) elementwise (softmax row-wise), in the layer's compute dtype.
// Keras puts the final softmax here with dtype float32; at the end of a model it fuses into the
// loss.
#pragma once

#include "core/nn/layer.h"

namespace mantissa {

class ActivationLayer final : public Layer {
public:
    explicit ActivationLayer(LayerSpec spec) : Layer(std::move(spec)) {}
    Shape output_shape(const Shape& input) const override;
    std::string detail() const override { return activation_name(m_spec.activation); }
    Activation activation() const override { return m_spec.activation; }
};

} // namespace mantissa
