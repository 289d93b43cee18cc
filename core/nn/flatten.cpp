// Flatten layer: a reshape view. Row-major NHWC flattening matches Keras's channels_last order.
// Its gradient is a view of the next layer's input gradient, so backward costs nothing.
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

TensorId Flatten::build(PlanBuilder& b, TensorId input, bool /*fuse_softmax*/) {
    const Tensor x = b.tensor(input); // a copy: alias() adds tensors
    return b.alias(input, name() + "/output", {x.rows(), x.cols()});
}

} // namespace mantissa
