// Model: the layer stack with names, per-layer policies and shape inference.
// analyze() never throws on a bad stack: it reports the first layer that does not fit, for the
// editor.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/nn/layer.h"
#include "core/numeric/policy.h"

namespace mantissa {

inline constexpr std::int64_t kMnistClasses = 10;

struct LayerAnalysis {
    std::string name, type, detail;
    Shape output_shape; // per example; empty when the layer does not fit
    std::int64_t params = 0;
    Policy policy;
    std::string error; // why this layer does not fit (empty when fine)
};

struct ModelAnalysis {
    std::vector<LayerAnalysis> layers;
    std::int64_t total_params = 0;
    std::string error;    // first problem; empty when the stack is valid
    int error_layer = -1; // index of the failing layer, -1 for a model-level problem
    bool ok() const { return error.empty(); }
};

class Model {
public:
    // Assigns default names ("dense_1", "conv2d_1", ...) and resolves each layer's policy.
    // Throws Error(Config) for an unknown per-layer policy or a duplicate layer name.
    Model(ModelSpec spec, const Policy& global_policy);

    const ModelSpec& spec() const { return m_spec; }
    const Policy& global_policy() const { return m_global; }
    std::size_t size() const { return m_layers.size(); }
    Layer& layer(std::size_t i) const { return *m_layers[i]; }
    const Policy& layer_policy(std::size_t i) const { return m_policies[i]; }

    ModelAnalysis analyze() const;
    // Throws Error(Shape) with analyze()'s first error.
    void validate() const;
    // The last layer ends in softmax, which the loss fuses.
    bool ends_with_softmax() const;

private:
    ModelSpec m_spec;
    Policy m_global;
    std::vector<std::unique_ptr<Layer>> m_layers;
    std::vector<Policy> m_policies;
};

} // namespace mantissa
