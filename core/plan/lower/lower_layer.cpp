// lower_layer(): from a layer's type to its steps function. A new layer type adds a case here and
// a <layer>_steps.cpp beside it; core/nn never learns about plans.
#include "core/error.h"
#include "core/nn/activation_layer.h"
#include "core/nn/conv2d.h"
#include "core/nn/dense.h"
#include "core/nn/dropout.h"
#include "core/nn/flatten.h"
#include "core/nn/maxpool2d.h"
#include "core/nn/normalization.h"
#include "core/plan/lower/layer_steps.h"

namespace mantissa {

TensorId lower_layer(PlanBuilder& b, const Layer& layer, TensorId input, bool fuse_softmax) {
    // make_layer() creates exactly these classes for these types, so the casts are checked.
    switch (layer.spec().type) {
    case LayerType::Flatten:
        return flatten_steps(b, static_cast<const Flatten&>(layer), input, fuse_softmax);
    case LayerType::Dense:
        return dense_steps(b, static_cast<const Dense&>(layer), input, fuse_softmax);
    case LayerType::Activation:
        return activation_steps(b, static_cast<const ActivationLayer&>(layer), input, fuse_softmax);
    case LayerType::Dropout:
        return dropout_steps(b, static_cast<const Dropout&>(layer), input, fuse_softmax);
    case LayerType::Conv2D:
        return conv2d_steps(b, static_cast<const Conv2D&>(layer), input, fuse_softmax);
    case LayerType::MaxPool2D:
        return maxpool2d_steps(b, static_cast<const MaxPool2D&>(layer), input, fuse_softmax);
    case LayerType::BatchNormalization:
        return batch_normalization_steps(b, static_cast<const BatchNormalization&>(layer), input,
                                         fuse_softmax);
    case LayerType::LayerNormalization:
        return layer_normalization_steps(b, static_cast<const LayerNormalization&>(layer), input,
                                         fuse_softmax);
    }
    throw Error(ErrorKind::Internal, "layer '" + layer.name() + "' has no steps");
}

} // namespace mantissa
