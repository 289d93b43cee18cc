// MaxPool2D: Keras's max pooling over NHWC, valid padding; strides default to the pool size.
// The argmax (int32) is kept for the backward scatter.
#pragma once

#include "core/backend/backend.h"
#include "core/nn/layer.h"

namespace mantissa {

class MaxPool2D final : public Layer {
public:
    explicit MaxPool2D(LayerSpec spec) : Layer(std::move(spec)) {}
    Shape output_shape(const Shape& input) const override;
    std::string detail() const override;
    // The pooling geometry for a batch (the plan's steps use it).
    Pool2dArgs geometry(std::int64_t batch, const Shape& input) const;
};

} // namespace mantissa
