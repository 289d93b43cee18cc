// MaxPool2D layer: forward max + argmax, backward scatter of dY to the argmax positions.
// Pooling never rounds: the max of stored values is exact in any dtype.
#include "core/nn/maxpool2d.h"

namespace mantissa {

Pool2dArgs MaxPool2D::geometry(std::int64_t batch, const Shape& input) const {
    Pool2dArgs g;
    g.batch = batch;
    g.in_h = input[0];
    g.in_w = input[1];
    g.channels = input[2];
    g.pool_h = m_spec.pool[0];
    g.pool_w = m_spec.pool[1];
    g.stride_h = m_spec.stride[0] > 0 ? m_spec.stride[0] : g.pool_h;
    g.stride_w = m_spec.stride[1] > 0 ? m_spec.stride[1] : g.pool_w;
    g.out_h = (g.in_h - g.pool_h) / g.stride_h + 1;
    g.out_w = (g.in_w - g.pool_w) / g.stride_w + 1;
    return g;
}

Shape MaxPool2D::output_shape(const Shape& input) const {
    if (input.size() != 3) shape_error(input, "must be (height, width, channels) per example");
    if (m_spec.pool[0] <= 0 || m_spec.pool[1] <= 0 || m_spec.stride[0] < 0 || m_spec.stride[1] < 0)
        shape_error(input, "needs a positive pool size and stride");
    if (input[0] < m_spec.pool[0] || input[1] < m_spec.pool[1])
        shape_error(input, "is smaller than the " + std::to_string(m_spec.pool[0]) + "x" +
                               std::to_string(m_spec.pool[1]) + " pool");
    Pool2dArgs g = geometry(1, input);
    return {g.out_h, g.out_w, g.channels};
}

std::string MaxPool2D::detail() const {
    return std::to_string(m_spec.pool[0]) + "x" + std::to_string(m_spec.pool[1]);
}

TensorId MaxPool2D::build(PlanBuilder& b, TensorId input, bool /*fuse_softmax*/) {
    const DType dt = b.policy().compute;
    TensorId x = b.cast(input, dt);
    const Shape in_shape(b.tensor(x).shape.begin() + 1, b.tensor(x).shape.end());
    const Pool2dArgs g = geometry(b.batch(), in_shape);
    const Shape out_shape = {g.batch, g.out_h, g.out_w, g.channels};
    TensorId y = b.add_activation(name() + "/output", dt, out_shape, true);
    TensorId argmax =
        b.add_tensor(name() + "/argmax", DType::Int32, out_shape, MemCategory::Activations);
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
