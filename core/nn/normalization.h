// BatchNormalization and LayerNormalization: Keras's normalization layers over the last axis
// (channels or features), with gamma and beta per channel. BatchNormalization normalizes each
// channel over the batch (and height and width) while training and with its moving statistics in
// evaluation; LayerNormalization normalizes each example's last axis, the same in both. Their
// steps are plan/lower/normalization_steps.cpp; the arithmetic is Backend's NormArgs.
#pragma once

#include "core/nn/layer.h"

namespace mantissa {

class BatchNormalization final : public Layer {
public:
    explicit BatchNormalization(LayerSpec spec) : Layer(std::move(spec)) {}
    Shape output_shape(const Shape& input) const override;
    // gamma, beta, and the non-trainable moving_mean and moving_variance: 4 per channel, as
    // Keras's summary counts them.
    std::int64_t param_count(const Shape& input) const override;
    std::string detail() const override;
};

class LayerNormalization final : public Layer {
public:
    explicit LayerNormalization(LayerSpec spec) : Layer(std::move(spec)) {}
    Shape output_shape(const Shape& input) const override;
    std::int64_t param_count(const Shape& input) const override; // gamma and beta per feature
    std::string detail() const override;
};

} // namespace mantissa
