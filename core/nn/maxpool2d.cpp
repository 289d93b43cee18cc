// MaxPool2D layer: geometry and output shape; its steps are plan/lower/maxpool2d_steps.cpp.
// Strides default to the pool size, as in Keras.
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

} // namespace mantissa
