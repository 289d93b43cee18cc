// MaxPool2D's steps: forward max + argmax, backward scatter of dY to the argmax positions.
// Pooling never rounds: the max of stored values is exact in any dtype.
#include "core/plan/lower/layer_steps.h"

#include "core/nn/maxpool2d.h"

namespace mantissa {

TensorId maxpool2d_steps(PlanBuilder& b, const MaxPool2D& layer, TensorId input,
                         bool /*fuse_softmax*/) {
    const DType dt = b.policy().compute;
    TensorId x = b.cast(input, dt);
    const Shape in_shape(b.tensor(x).shape.begin() + 1, b.tensor(x).shape.end());
    const Pool2dArgs g = layer.geometry(b.batch(), in_shape);
    const Shape out_shape = {g.batch, g.out_h, g.out_w, g.channels};
    TensorId y = b.add_activation(layer.name() + "/output", dt, out_shape, true);
    TensorId argmax =
        b.add_tensor(layer.name() + "/argmax", DType::Int32, out_shape, MemCategory::Activations);
    StepSpec fwd;
    fwd.op = "maxpool";
    fwd.inputs = {x};
    fwd.outputs = {y, argmax};
    fwd.flops = static_cast<double>(shape_numel(out_shape)) * g.pool_h * g.pool_w;
    fwd.bind = [g, x, y, argmax](const BoundTensors& t) -> StepRun {
        Tensor* X = t.ptr(x);
        Tensor* Y = t.ptr(y);
        Tensor* A = t.ptr(argmax);
        return [g, X, Y, A](Backend& be, const RunContext&) { be.maxpool_forward(g, *X, *Y, *A); };
    };
    b.forward(std::move(fwd));
    if (TensorId dx = b.grad_of(x); dx != kNoTensor) {
        const TensorId dy = b.grad_of(y);
        StepSpec back;
        back.op = "dmaxpool";
        back.inputs = {dy, argmax};
        back.outputs = {dx};
        back.flops = static_cast<double>(shape_numel(out_shape));
        back.bind = [g, dy, argmax, dx](const BoundTensors& t) -> StepRun {
            Tensor* dY = t.ptr(dy);
            Tensor* A = t.ptr(argmax);
            Tensor* dX = t.ptr(dx);
            return [g, dY, A, dX](Backend& be, const RunContext&) {
                be.maxpool_backward(g, *dY, *A, *dX);
            };
        };
        b.backward(std::move(back));
    }
    return y;
}

} // namespace mantissa
