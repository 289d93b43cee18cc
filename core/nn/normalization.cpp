// BatchNormalization and LayerNormalization: which inputs they take, their parameter counts and
// summaries. Both accept a flat (features) or an image (height, width, channels) input per
// example and normalize over its last axis (Keras's default axis -1).
#include "core/nn/normalization.h"

#include <cstdio>
#include <functional>

namespace mantissa {

namespace {
// The checks both layers share: a rank they support and a usable epsilon.
void check_norm_input(const LayerSpec& spec, const Shape& input,
                      const std::function<void(const std::string&)>& fail) {
    if (input.size() != 1 && input.size() != 3)
        fail("must be (features) or (height, width, channels) per example; the layer "
             "normalizes over the last axis");
    if (!(spec.epsilon > 0.0)) fail("needs epsilon > 0");
}
} // namespace

Shape BatchNormalization::output_shape(const Shape& input) const {
    check_norm_input(m_spec, input, [&](const std::string& why) { shape_error(input, why); });
    if (!(m_spec.momentum >= 0.0 && m_spec.momentum < 1.0))
        shape_error(input, "needs 0 <= momentum < 1");
    return input;
}

std::int64_t BatchNormalization::param_count(const Shape& input) const {
    return input.empty() ? 0 : 4 * input.back();
}

std::string BatchNormalization::detail() const {
    char text[48];
    std::snprintf(text, sizeof text, "momentum %g, ε %g", m_spec.momentum, m_spec.epsilon);
    return text;
}

Shape LayerNormalization::output_shape(const Shape& input) const {
    check_norm_input(m_spec, input, [&](const std::string& why) { shape_error(input, why); });
    return input;
}

std::int64_t LayerNormalization::param_count(const Shape& input) const {
    return input.empty() ? 0 : 2 * input.back();
}

std::string LayerNormalization::detail() const {
    char text[32];
    std::snprintf(text, sizeof text, "ε %g", m_spec.epsilon);
    return text;
}

} // namespace mantissa
