// Dense layer: output shape, parameter count and summary; its steps are plan/lower/dense_steps.cpp.
// Input of rank > 1 per example must be flattened first (Keras would apply Dense on the last axis).
#include "core/nn/dense.h"

#include "core/error.h"

namespace mantissa {

Shape Dense::output_shape(const Shape& input) const {
    if (m_spec.units <= 0) shape_error(input, "needs units > 0");
    if (input.size() != 1)
        shape_error(input, "must be 1-D per example; add a Flatten layer before '" + name() + "'");
    return {m_spec.units};
}

std::int64_t Dense::param_count(const Shape& input) const {
    if (input.empty()) return 0;
    // Checked: an experiment file may ask for any size (a fuzz finding: 2222222222222222215 units
    // overflowed int64, undefined behaviour in the editor's shape inference).
    std::int64_t weights = 0, total = 0;
    if (__builtin_mul_overflow(input[0], m_spec.units, &weights) ||
        __builtin_add_overflow(weights, m_spec.units, &total))
        shape_error(input, "would have more parameters than 64 bits count; use fewer units");
    return total;
}

std::string Dense::detail() const {
    std::string out = std::to_string(m_spec.units);
    if (m_spec.activation != Activation::Linear)
        out += std::string(", ") + activation_name(m_spec.activation);
    return out;
}

} // namespace mantissa
