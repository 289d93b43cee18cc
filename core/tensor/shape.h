// Shape: the dimensions of a tensor, row-major; Keras layout (batch, height, width, channels).
// Small helpers to print shapes in error messages ("(128, 26, 26, 32)").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mantissa {

using Shape = std::vector<std::int64_t>;

std::int64_t shape_numel(const Shape& shape);
// "(128, 784)"; a leading -1 prints as "batch".
std::string shape_str(const Shape& shape);

} // namespace mantissa
