// Flatten layer: the flattened shape, checked for overflow. It becomes a view in the plan
// (plan/lower/flatten_steps.cpp): no step, no bytes.
#include "core/nn/flatten.h"

namespace mantissa {

Shape Flatten::output_shape(const Shape& input) const {
    if (input.empty()) shape_error(input, "has no dimensions to flatten");
    // Checked: model.input comes from a file, and shape_numel() would overflow int64 silently.
    std::int64_t n = 1;
    for (std::int64_t d : input)
        if (__builtin_mul_overflow(n, d, &n))
            shape_error(input, "has more elements than 64 bits count");
    return {n};
}

} // namespace mantissa
