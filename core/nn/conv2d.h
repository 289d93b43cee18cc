// Conv2D: Keras's 2-D convolution over NHWC inputs with HWIO filters, valid or same padding,
// fused bias + activation; Glorot-uniform filters with fan_in = kh·kw·cin, fan_out = kh·kw·cout.
#pragma once

#include "core/backend/backend.h"
#include "core/nn/layer.h"

namespace mantissa {

class Conv2D final : public Layer {
public:
    explicit Conv2D(LayerSpec spec) : Layer(std::move(spec)) {}
    Shape output_shape(const Shape& input) const override;
    std::int64_t param_count(const Shape& input) const override;
    std::string detail() const override;
    Activation activation() const override { return m_spec.activation; }
    // The convolution's geometry for a batch (the plan's steps use it; "same" pads as TF does).
    Conv2dArgs geometry(std::int64_t batch, const Shape& input) const;
};

} // namespace mantissa
