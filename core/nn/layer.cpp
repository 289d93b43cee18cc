// Layer base helpers and the factory from LayerSpec to a concrete layer.
// Shape errors name the layer, its input shape and the reason, so the editor can show them inline.
#include "core/nn/layer.h"

#include "core/error.h"
#include "core/nn/activation_layer.h"
#include "core/nn/conv2d.h"
#include "core/nn/dense.h"
#include "core/nn/dropout.h"
#include "core/nn/flatten.h"
#include "core/nn/maxpool2d.h"
#include "core/nn/normalization.h"

namespace mantissa {

void Layer::shape_error(const Shape& input, const std::string& why) const {
    throw Error(ErrorKind::Shape, "layer '" + name() + "' (" + layer_type_name(m_spec.type) +
                                      "): input " + shape_str(input) + " " + why);
}

std::unique_ptr<Layer> make_layer(const LayerSpec& spec) {
    switch (spec.type) {
    case LayerType::Flatten:
        return std::make_unique<Flatten>(spec);
    case LayerType::Dense:
        return std::make_unique<Dense>(spec);
    case LayerType::Activation:
        return std::make_unique<ActivationLayer>(spec);
    case LayerType::Dropout:
        return std::make_unique<Dropout>(spec);
    case LayerType::Conv2D:
        return std::make_unique<Conv2D>(spec);
    case LayerType::MaxPool2D:
        return std::make_unique<MaxPool2D>(spec);
    case LayerType::BatchNormalization:
        return std::make_unique<BatchNormalization>(spec);
    case LayerType::LayerNormalization:
        return std::make_unique<LayerNormalization>(spec);
    }
    throw Error(ErrorKind::Internal, "unknown layer type");
}

} // namespace mantissa
