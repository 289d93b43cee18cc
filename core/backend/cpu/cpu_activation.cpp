// CPU activations, forward and backward: relu, gelu (tanh form), tanh, sigmoid, linear, softmax.
// Math runs in float32 (float64 when a float64 tensor is involved) and each output is rounded once.
#include "core/backend/cpu/eigen.h" // first: see eigen.h

#include <string>

#include "core/backend/cpu/cpu_backend.h"
#include "core/backend/cpu/cpu_kernels.h"

namespace mantissa {

namespace {

// Softmax normalises over the last axis (Keras's axis=-1).
std::int64_t last_dim(const Tensor& t) {
    return t.shape.empty() ? 1 : t.shape.back();
}

template <class T>
void forward(Activation act, const Tensor& x, Tensor& y) {
    const std::int64_t n = x.numel();
    T xbuf[cpu::kChunk];
    T ybuf[cpu::kChunk];
    if (act == Activation::Softmax) {
        const std::int64_t cols = last_dim(x);
        if (cols <= 0) return;
        const bool fits = cols <= cpu::kChunk;
        T* xs = fits ? xbuf : cpu::scratch_row<T>(static_cast<std::size_t>(cols), 0);
        T* ys = fits ? ybuf : cpu::scratch_row<T>(static_cast<std::size_t>(cols), 1);
        for (std::int64_t off = 0; off < n; off += cols) {
            const T* xr = cpu::view_or_load<T>(x, off, cols, xs);
            T* yr = cpu::out_ptr<T>(y, off, ys);
            cpu::softmax_row(xr, yr, cols);
            cpu::store_if_needed(yr, y, off, cols);
        }
        return;
    }
    for (std::int64_t off = 0; off < n; off += cpu::kChunk) {
        const std::int64_t len = std::min(cpu::kChunk, n - off);
        const T* xp = cpu::view_or_load<T>(x, off, len, xbuf);
        T* yp = cpu::out_ptr<T>(y, off, ybuf);
        cpu::activation_elementwise(act, xp, yp, len);
        cpu::store_if_needed(yp, y, off, len);
    }
}

// dx = dy * act'(.): the factor from y for relu/tanh/sigmoid, from x for gelu (its derivative
// is not a function of its output).
template <class T>
void backward_elementwise(Activation act, const T* x, const T* y, const T* dy, T* dx,
                          std::int64_t n) {
    switch (act) {
    case Activation::Linear:
        for (std::int64_t i = 0; i < n; ++i) dx[i] = dy[i];
        return;
    case Activation::Relu:
        for (std::int64_t i = 0; i < n; ++i) dx[i] = activation_math::relu_backward(y[i], dy[i]);
        return;
    case Activation::Gelu:
        cpu::gelu_backward_array(x, dy, dx, n);
        return;
    case Activation::Tanh:
        for (std::int64_t i = 0; i < n; ++i) dx[i] = activation_math::tanh_backward(y[i], dy[i]);
        return;
    case Activation::Sigmoid:
        for (std::int64_t i = 0; i < n; ++i) dx[i] = activation_math::sigmoid_backward(y[i], dy[i]);
        return;
    case Activation::Softmax:
        break;
    }
    cpu::fail("activation_backward: softmax is row-wise");
}

template <class T>
void backward(Activation act, const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx) {
    const std::int64_t n = dy.numel();
    const bool needs_x = act == Activation::Gelu;
    const bool needs_y = act != Activation::Gelu && act != Activation::Linear;
    T xbuf[cpu::kChunk];
    T ybuf[cpu::kChunk];
    T dybuf[cpu::kChunk];
    T dxbuf[cpu::kChunk];
    if (act == Activation::Softmax) {
        // dx = y * (dy - sum_j dy_j * y_j), per row of the last axis.
        const std::int64_t cols = last_dim(dy);
        if (cols <= 0) return;
        const bool fits = cols <= cpu::kChunk;
        T* ys = fits ? ybuf : cpu::scratch_row<T>(static_cast<std::size_t>(cols), 0);
        T* dys = fits ? dybuf : cpu::scratch_row<T>(static_cast<std::size_t>(cols), 1);
        T* dxs = fits ? dxbuf : cpu::scratch_row<T>(static_cast<std::size_t>(cols), 2);
        for (std::int64_t off = 0; off < n; off += cols) {
            const T* yr = cpu::view_or_load<T>(y, off, cols, ys);
            const T* dyr = cpu::view_or_load<T>(dy, off, cols, dys);
            T* dxr = cpu::out_ptr<T>(dx, off, dxs);
            T dot = T(0);
            for (std::int64_t j = 0; j < cols; ++j) dot += dyr[j] * yr[j];
            for (std::int64_t j = 0; j < cols; ++j) dxr[j] = yr[j] * (dyr[j] - dot);
            cpu::store_if_needed(dxr, dx, off, cols);
        }
        return;
    }
    for (std::int64_t off = 0; off < n; off += cpu::kChunk) {
        const std::int64_t len = std::min(cpu::kChunk, n - off);
        const T* xp = needs_x ? cpu::view_or_load<T>(x, off, len, xbuf) : nullptr;
        const T* yp = needs_y ? cpu::view_or_load<T>(y, off, len, ybuf) : nullptr;
        const T* dyp = cpu::view_or_load<T>(dy, off, len, dybuf);
        T* dxp = cpu::out_ptr<T>(dx, off, dxbuf);
        backward_elementwise(act, xp, yp, dyp, dxp, len);
        cpu::store_if_needed(dxp, dx, off, len);
    }
}

} // namespace

void CpuBackend::activation_forward(Activation act, const Tensor& x, Tensor& y) {
    cpu::require_floating(x, "activation_forward");
    cpu::require_floating(y, "activation_forward");
    cpu::require_same_numel(x, y, "activation_forward");
    if (x.dtype == DType::Float64 || y.dtype == DType::Float64)
        forward<double>(act, x, y);
    else
        forward<float>(act, x, y);
}

void CpuBackend::activation_backward(Activation act, const Tensor& x, const Tensor& y,
                                     const Tensor& dy, Tensor& dx) {
    const char* op = "activation_backward";
    cpu::require_floating(dy, op);
    cpu::require_floating(dx, op);
    cpu::require_same_numel(dy, dx, op);
    const bool needs_x = act == Activation::Gelu;
    const bool needs_y = act != Activation::Gelu && act != Activation::Linear;
    if (needs_x) {
        cpu::require_floating(x, op);
        cpu::require_same_numel(x, dy, op);
    }
    if (needs_y) {
        cpu::require_floating(y, op);
        cpu::require_same_numel(y, dy, op);
    }
    const bool f64 = dy.dtype == DType::Float64 || dx.dtype == DType::Float64 ||
                     (needs_x && x.dtype == DType::Float64) ||
                     (needs_y && y.dtype == DType::Float64);
    if (f64)
        backward<double>(act, x, y, dy, dx);
    else
        backward<float>(act, x, y, dy, dx);
}

} // namespace mantissa
