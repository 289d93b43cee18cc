// Activation layer: shape rules (softmax needs a 1-D input per example); its steps are
// plan/lower/activation_steps.cpp.
#include "core/nn/activation_layer.h"

namespace mantissa {

Shape ActivationLayer::output_shape(const Shape& input) const {
    if (m_spec.activation == Activation::Softmax && input.size() != 1)
        shape_error(input, "softmax needs a 1-D input per example; add a Flatten layer");
    return input;
}

} // namespace mantissa
