// Layer: one entry of the stack. It knows its output shape, parameter count and summary; its steps
// live in core/plan/lower/<layer>_steps.cpp (nn knows nothing of plans).
#pragma once

#include <memory>
#include <string>

#include "core/nn/layer_spec.h"
#include "core/numeric/policy.h"

namespace mantissa {

class Layer {
public:
    explicit Layer(LayerSpec spec) : m_spec(std::move(spec)) {}
    virtual ~Layer() = default;

    const LayerSpec& spec() const { return m_spec; }
    const std::string& name() const { return m_spec.name; }

    // Per-example output shape; throws Error(Shape) naming the layer and the shapes.
    virtual Shape output_shape(const Shape& input) const = 0;
    virtual std::int64_t param_count(const Shape& /*input*/) const { return 0; }
    // A short description for summaries: "128, relu", "32 3x3 /1 valid, relu", "rate 0.5".
    virtual std::string detail() const { return {}; }
    // The activation this layer ends with (softmax at the end is fused into the loss).
    virtual Activation activation() const { return Activation::Linear; }

protected:
    [[noreturn]] void shape_error(const Shape& input, const std::string& why) const;

    LayerSpec m_spec;
};

// Creates the layer for a spec (Dense, Conv2D, ...).
std::unique_ptr<Layer> make_layer(const LayerSpec& spec);

} // namespace mantissa
