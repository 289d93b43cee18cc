// Each layer's steps, one function per layer (core/plan/lower/<layer>_steps.cpp): what a layer of
// core/nn becomes in a PlanSpec. lower_layer() picks the one for a layer's type.
#pragma once

#include "core/nn/layer.h"
#include "core/plan/plan_builder.h"

namespace mantissa {

class Dense;
class Conv2D;
class MaxPool2D;
class Dropout;
class Flatten;
class ActivationLayer;
class BatchNormalization;
class LayerNormalization;

// Emits `layer`'s forward and backward steps. `input` is the previous output in any float dtype;
// the layer casts it to its compute dtype. When `fuse_softmax` the layer leaves out its final
// softmax: the loss computes it. Returns the output tensor.
TensorId lower_layer(PlanBuilder& b, const Layer& layer, TensorId input, bool fuse_softmax);

TensorId dense_steps(PlanBuilder& b, const Dense& layer, TensorId input, bool fuse_softmax);
TensorId conv2d_steps(PlanBuilder& b, const Conv2D& layer, TensorId input, bool fuse_softmax);
TensorId maxpool2d_steps(PlanBuilder& b, const MaxPool2D& layer, TensorId input, bool fuse_softmax);
TensorId dropout_steps(PlanBuilder& b, const Dropout& layer, TensorId input, bool fuse_softmax);
TensorId flatten_steps(PlanBuilder& b, const Flatten& layer, TensorId input, bool fuse_softmax);
TensorId activation_steps(PlanBuilder& b, const ActivationLayer& layer, TensorId input,
                          bool fuse_softmax);
TensorId batch_normalization_steps(PlanBuilder& b, const BatchNormalization& layer, TensorId input,
                                   bool fuse_softmax);
TensorId layer_normalization_steps(PlanBuilder& b, const LayerNormalization& layer, TensorId input,
                                   bool fuse_softmax);

} // namespace mantissa
