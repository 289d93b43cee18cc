// Conv2D layer: geometry, output shape, parameter count (steps: plan/lower/conv2d_steps.cpp).
// "same" padding follows TensorFlow: total = max((out-1)·stride + k - in, 0), the extra on the
// bottom/right.
#include "core/nn/conv2d.h"

#include <algorithm>

namespace mantissa {

Conv2dArgs Conv2D::geometry(std::int64_t batch, const Shape& input) const {
    Conv2dArgs g;
    g.batch = batch;
    g.in_h = input[0];
    g.in_w = input[1];
    g.in_c = input[2];
    g.out_c = m_spec.filters;
    g.kernel_h = m_spec.kernel[0];
    g.kernel_w = m_spec.kernel[1];
    g.stride_h = m_spec.stride[0] > 0 ? m_spec.stride[0] : 1;
    g.stride_w = m_spec.stride[1] > 0 ? m_spec.stride[1] : 1;
    if (m_spec.padding == "same") {
        g.out_h = (g.in_h + g.stride_h - 1) / g.stride_h;
        g.out_w = (g.in_w + g.stride_w - 1) / g.stride_w;
        const std::int64_t pad_h =
            std::max<std::int64_t>((g.out_h - 1) * g.stride_h + g.kernel_h - g.in_h, 0);
        const std::int64_t pad_w =
            std::max<std::int64_t>((g.out_w - 1) * g.stride_w + g.kernel_w - g.in_w, 0);
        g.pad_top = pad_h / 2;
        g.pad_left = pad_w / 2;
    } else {
        g.out_h = (g.in_h - g.kernel_h) / g.stride_h + 1;
        g.out_w = (g.in_w - g.kernel_w) / g.stride_w + 1;
    }
    return g;
}

Shape Conv2D::output_shape(const Shape& input) const {
    if (input.size() != 3)
        shape_error(input, "must be (height, width, channels) per example; Conv2D cannot follow "
                           "Flatten or Dense");
    if (m_spec.filters <= 0) shape_error(input, "needs filters > 0");
    if (m_spec.kernel[0] <= 0 || m_spec.kernel[1] <= 0 || m_spec.stride[0] < 0 ||
        m_spec.stride[1] < 0)
        shape_error(input, "needs a positive kernel size and stride");
    if (m_spec.padding != "valid" && m_spec.padding != "same")
        shape_error(input, "has padding '" + m_spec.padding + "'; use valid or same");
    if (m_spec.padding == "valid" && (input[0] < m_spec.kernel[0] || input[1] < m_spec.kernel[1]))
        shape_error(input, "is smaller than the " + std::to_string(m_spec.kernel[0]) + "x" +
                               std::to_string(m_spec.kernel[1]) + " kernel");
    Conv2dArgs g = geometry(1, input);
    return {g.out_h, g.out_w, g.out_c};
}

std::int64_t Conv2D::param_count(const Shape& input) const {
    if (input.size() != 3) return 0;
    // Checked like Dense::param_count: the sizes come from a file and may be anything.
    std::int64_t n = 0;
    if (__builtin_mul_overflow(m_spec.kernel[0], m_spec.kernel[1], &n) ||
        __builtin_mul_overflow(n, input[2], &n) || __builtin_mul_overflow(n, m_spec.filters, &n) ||
        __builtin_add_overflow(n, m_spec.filters, &n))
        shape_error(input, "would have more parameters than 64 bits count; use fewer filters");
    return n;
}

std::string Conv2D::detail() const {
    std::string out = std::to_string(m_spec.filters) + " " + std::to_string(m_spec.kernel[0]) +
                      "x" + std::to_string(m_spec.kernel[1]);
    if (m_spec.stride[0] > 1 || m_spec.stride[1] > 1)
        out += " /" + std::to_string(m_spec.stride[0]);
    out += " " + m_spec.padding;
    if (m_spec.activation != Activation::Linear)
        out += std::string(", ") + activation_name(m_spec.activation);
    return out;
}

} // namespace mantissa
