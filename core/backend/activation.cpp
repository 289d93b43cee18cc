// Activation names.
// "none" is accepted as a synonym of "linear", as in Keras's activation=None.
#include "core/backend/activation.h"

#include <string>

#include "core/error.h"

namespace mantissa {

const char* activation_name(Activation act) {
    switch (act) {
    case Activation::Linear:
        return "linear";
    case Activation::Relu:
        return "relu";
    case Activation::Gelu:
        return "gelu";
    case Activation::Tanh:
        return "tanh";
    case Activation::Sigmoid:
        return "sigmoid";
    case Activation::Softmax:
        return "softmax";
    }
    return "?";
}

Activation activation_from_name(std::string_view name) {
    for (Activation act : {Activation::Linear, Activation::Relu, Activation::Gelu, Activation::Tanh,
                           Activation::Sigmoid, Activation::Softmax})
        if (name == activation_name(act)) return act;
    if (name == "none" || name.empty()) return Activation::Linear;
    throw Error(ErrorKind::Config, "unknown activation '" + std::string(name) +
                                       "'; valid: linear, relu, gelu, tanh, sigmoid, softmax");
}

} // namespace mantissa
