// Shape helpers.
// numel of an empty shape is 1 (a scalar).
#include "core/tensor/shape.h"

namespace mantissa {

std::int64_t shape_numel(const Shape& shape) {
    std::int64_t n = 1;
    for (std::int64_t d : shape) n *= d;
    return n;
}

std::string shape_str(const Shape& shape) {
    std::string out = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i) out += ", ";
        out += (i == 0 && shape[i] < 0) ? std::string("batch") : std::to_string(shape[i]);
    }
    if (shape.size() == 1) out += ",";
    return out + ")";
}

} // namespace mantissa
