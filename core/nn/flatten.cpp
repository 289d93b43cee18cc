// Flatten layer: a reshape view. Row-major NHWC flattening matches Keras's channels_last order.
// Its gradient is a view of the next layer's input gradient, so backward costs nothing.
#include "core/nn/flatten.h"

namespace mantissa {

Shape Flatten::output_shape(const Shape& input) const {
    if (input.empty()) shape_error(input, "has no dimensions to flatten");
    return {shape_numel(input)};
}

TensorId Flatten::build(PlanBuilder& b, TensorId input, bool /*fuse_softmax*/) {
    const Tensor& x = b.plan().tensor(input);
    return b.alias(input, name() + "/output", {x.rows(), x.cols()});
}

} // namespace mantissa
