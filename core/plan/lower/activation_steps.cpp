// Activation layer's steps: forward f(x), backward dx = dy ⊙ f'(.) from the output (or the input
// for GELU). A softmax at the end of the model only casts to its dtype; the fused loss does the
// rest.
#include "core/plan/lower/layer_steps.h"

#include "core/nn/activation_layer.h"

namespace mantissa {

TensorId activation_steps(PlanBuilder& b, const ActivationLayer& layer, TensorId input,
                          bool fuse_softmax) {
    const DType dt = b.policy().compute;
    TensorId x = b.cast(input, dt);
    const Activation act = layer.spec().activation;
    if (act == Activation::Linear || (act == Activation::Softmax && fuse_softmax)) return x;

    const Shape shape = b.tensor(x).shape;
    TensorId y = b.add_activation(layer.name() + "/output", dt, shape, true);
    const double n = static_cast<double>(shape_numel(shape));
    StepSpec fwd;
    fwd.op = activation_name(act);
    fwd.inputs = {x};
    fwd.outputs = {y};
    fwd.flops = n * (act == Activation::Relu ? 1 : 8);
    fwd.bind = [act, x, y](const BoundTensors& t) -> StepRun {
        Tensor* X = t.ptr(x);
        Tensor* Y = t.ptr(y);
        return [act, X, Y](Backend& be, const RunContext&) { be.activation_forward(act, *X, *Y); };
    };
    b.forward(std::move(fwd));

    if (TensorId dx = b.grad_of(x); dx != kNoTensor) {
        const TensorId dy = b.grad_of(y);
        StepSpec back;
        back.op = std::string("d") + activation_name(act);
        back.inputs = {dy, y};
        back.outputs = {dx};
        back.flops = 2 * n;
        back.bind = [act, x, y, dy, dx](const BoundTensors& t) -> StepRun {
            Tensor* X = t.ptr(x);
            Tensor* Y = t.ptr(y);
            Tensor* dY = t.ptr(dy);
            Tensor* dX = t.ptr(dx);
            return [act, X, Y, dY, dX](Backend& be, const RunContext&) {
                be.activation_backward(act, *X, *Y, *dY, *dX);
            };
        };
        b.backward(std::move(back));
    }
    return y;
}

} // namespace mantissa
