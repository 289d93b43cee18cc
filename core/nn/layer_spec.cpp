// Layer type names as the experiment file, the CLI and the stack editor spell them.
// Keras spellings are accepted in any case so a Keras model description can be typed in as-is.
#include "core/nn/layer_spec.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"
#include "core/text.h"

namespace mantissa {

const char* layer_type_name(LayerType type) {
    switch (type) {
    case LayerType::Flatten:
        return "Flatten";
    case LayerType::Dense:
        return "Dense";
    case LayerType::Activation:
        return "Activation";
    case LayerType::Dropout:
        return "Dropout";
    case LayerType::Conv2D:
        return "Conv2D";
    case LayerType::MaxPool2D:
        return "MaxPool2D";
    case LayerType::BatchNormalization:
        return "BatchNormalization";
    case LayerType::LayerNormalization:
        return "LayerNormalization";
    }
    return "?";
}

LayerType layer_type_from_name(const std::string& name) {
    const std::string lower = lower_ascii(name);
    struct Alias {
        const char* name;
        LayerType type;
    };
    static const Alias aliases[] = {
        {"flatten", LayerType::Flatten},
        {"dense", LayerType::Dense},
        {"activation", LayerType::Activation},
        {"dropout", LayerType::Dropout},
        {"conv2d", LayerType::Conv2D},
        {"convolution2d", LayerType::Conv2D},
        {"maxpool2d", LayerType::MaxPool2D},
        {"maxpooling2d", LayerType::MaxPool2D},
        {"batchnormalization", LayerType::BatchNormalization},
        {"batchnorm", LayerType::BatchNormalization},
        {"layernormalization", LayerType::LayerNormalization},
        {"layernorm", LayerType::LayerNormalization},
    };
    for (const Alias& a : aliases)
        if (lower == a.name) return a.type;
    throw Error(ErrorKind::Config, "unknown layer type '" + name +
                                       "'; valid types: Flatten, Dense, Activation, Dropout, "
                                       "Conv2D (Convolution2D), MaxPool2D (MaxPooling2D), "
                                       "BatchNormalization, LayerNormalization");
}

} // namespace mantissa
