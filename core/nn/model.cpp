// Model: default names, policy resolution and shape inference over the stack.
// The output must be (10,) for MNIST; anything else is reported at the last layer.
#include "core/nn/model.h"

#include <cctype>
#include <map>
#include <set>

#include "core/error.h"

namespace mantissa {

namespace {
std::string default_prefix(LayerType type) {
    std::string name = layer_type_name(type);
    std::string out;
    for (std::size_t i = 0; i < name.size(); ++i) {
        char c = name[i];
        if (std::isupper(static_cast<unsigned char>(c)) && i > 0 &&
            std::islower(static_cast<unsigned char>(name[i - 1])))
            out += '_';
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out; // "dense", "conv2d", "max_pool2d", "activation", ...
}
} // namespace

Model::Model(ModelSpec spec, const Policy& global_policy)
    : m_spec(std::move(spec)), m_global(global_policy) {
    std::map<std::string, int> counters;
    std::set<std::string> used;
    for (const LayerSpec& layer : m_spec.layers)
        if (!layer.name.empty()) used.insert(layer.name);
    std::set<std::string> seen;
    for (std::size_t i = 0; i < m_spec.layers.size(); ++i) {
        LayerSpec& layer = m_spec.layers[i];
        if (layer.name.empty()) {
            const std::string prefix = default_prefix(layer.type);
            do layer.name = prefix + "_" + std::to_string(++counters[prefix]);
            while (used.count(layer.name));
        }
        if (!seen.insert(layer.name).second)
            throw Error(ErrorKind::Config, "model.layers[" + std::to_string(i) + "]: the name '" +
                                               layer.name + "' is used twice");
        try {
            m_policies.push_back(layer.dtype ? policy_from_name(*layer.dtype) : m_global);
        } catch (const Error& e) {
            throw Error(ErrorKind::Config,
                        "model.layers[" + std::to_string(i) + "].dtype: " + e.what());
        }
        m_layers.push_back(make_layer(layer));
    }
}

ModelAnalysis Model::analyze() const {
    ModelAnalysis out;
    Shape shape = m_spec.input;
    for (std::int64_t d : shape)
        if (d <= 0) {
            out.error = "model.input " + shape_str(shape) + " must have positive dimensions";
            return out;
        }
    if (m_layers.empty()) {
        out.error = "the model has no layers; add Flatten and Dense(10) at least";
        return out;
    }
    for (std::size_t i = 0; i < m_layers.size(); ++i) {
        const Layer& layer = *m_layers[i];
        LayerAnalysis entry;
        entry.name = layer.name();
        entry.type = layer_type_name(layer.spec().type);
        entry.detail = layer.detail();
        entry.policy = m_policies[i];
        if (out.ok()) {
            try {
                entry.params = layer.param_count(shape);
                shape = layer.output_shape(shape);
                entry.output_shape = shape;
                if (__builtin_add_overflow(out.total_params, entry.params, &out.total_params))
                    throw Error(ErrorKind::Shape, "layer '" + layer.name() +
                                                      "' brings the model to more parameters "
                                                      "than 64 bits count");
            } catch (const Error& e) {
                entry.error = e.what();
                out.error = e.what();
                out.error_layer = static_cast<int>(i);
            }
        }
        out.layers.push_back(std::move(entry));
    }
    if (out.ok() && (shape.size() != 1 || shape[0] != kMnistClasses)) {
        out.error_layer = static_cast<int>(m_layers.size() - 1);
        out.error = "the model's output is " + shape_str(shape) + " but MNIST has " +
                    std::to_string(kMnistClasses) + " classes; end with Dense(10) (and softmax)";
        out.layers.back().error = out.error;
    }
    return out;
}

void Model::validate() const {
    ModelAnalysis analysis = analyze();
    if (!analysis.ok()) throw Error(ErrorKind::Shape, analysis.error);
}

bool Model::ends_with_softmax() const {
    return !m_layers.empty() && m_layers.back()->activation() == Activation::Softmax;
}

} // namespace mantissa
