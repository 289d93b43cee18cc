// Flatten's "steps": none, a reshape view. Row-major NHWC flattening matches Keras's channels_last
// order; its gradient is a view of the next layer's input gradient, so backward costs nothing.
#include "core/plan/lower/layer_steps.h"

#include "core/nn/flatten.h"

namespace mantissa {

TensorId flatten_steps(PlanBuilder& b, const Flatten& layer, TensorId input,
                       bool /*fuse_softmax*/) {
    const Tensor x = b.tensor(input); // a copy: alias() adds tensors
    return b.alias(input, layer.name() + "/output", {x.rows(), x.cols()});
}

} // namespace mantissa
