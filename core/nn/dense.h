// Dense: y = activation(x · W + b), Keras's fully connected layer (Glorot-uniform W, zero b).
// One GEMM with a bias/activation epilogue forward; three GEMM-shaped ops backward.
#pragma once

#include "core/nn/layer.h"

namespace mantissa {

class Dense final : public Layer {
public:
    explicit Dense(LayerSpec spec) : Layer(std::move(spec)) {}
    Shape output_shape(const Shape& input) const override;
    std::int64_t param_count(const Shape& input) const override;
    std::string detail() const override;
    Activation activation() const override { return m_spec.activation; }
};

} // namespace mantissa
