// Dropout layer: the rate's range and the summary; its steps (mask, per-step seed) are
// plan/lower/dropout_steps.cpp.
#include "core/nn/dropout.h"

#include <cstdio>

namespace mantissa {

Shape Dropout::output_shape(const Shape& input) const {
    if (!(m_spec.rate >= 0.0 && m_spec.rate < 1.0)) shape_error(input, "needs 0 <= rate < 1");
    return input;
}

std::string Dropout::detail() const {
    char text[32];
    std::snprintf(text, sizeof text, "rate %g", m_spec.rate);
    return text;
}

} // namespace mantissa
