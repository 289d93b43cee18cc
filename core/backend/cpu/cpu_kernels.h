// Private helpers shared by the CPU engine's op files: activation math in float/double and
// chunked moves between a tensor's storage (any dtype) and float32/float64 working arrays.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/backend/cpu/eigen.h"

#include "core/backend/activation.h"
#include "core/backend/activation_math.h"
#include "core/error.h"
#include "core/numeric/convert.h"
#include "core/numeric/dtype.h"
#include "core/tensor/tensor.h"

namespace mantissa::cpu {

// Elements per stack buffer: 2048 doubles = 16 KiB, small enough for a few on the stack,
// large enough that the per-chunk conversion calls cost nothing.
inline constexpr std::int64_t kChunk = 2048;

template <class T>
inline constexpr DType kComputeDType = std::is_same_v<T, double> ? DType::Float64 : DType::Float32;

[[noreturn]] inline void fail(const std::string& message) {
    throw Error(ErrorKind::Internal, message);
}

inline void require(bool ok, const std::string& message) {
    if (!ok) fail(message);
}

inline std::string describe(const Tensor& t) {
    return "'" + t.name + "' " + std::string(dtype_name(t.dtype)) + shape_str(t.shape);
}

inline void require_floating(const Tensor& t, const char* op) {
    require(is_floating(t.dtype),
            std::string(op) + ": tensor " + describe(t) + " must have a floating dtype");
}

inline void require_same_numel(const Tensor& a, const Tensor& b, const char* op) {
    require(a.numel() == b.numel(), std::string(op) + ": tensors " + describe(a) + " and " +
                                        describe(b) + " must have the same number of elements");
}

// Reads `count` elements starting at element `offset` of `src` as T (exact for every narrower
// dtype).
template <class T>
inline void load(const Tensor& src, std::int64_t offset, T* dst, std::int64_t count) {
    const auto* base = static_cast<const unsigned char*>(src.data) +
                       static_cast<std::size_t>(offset) * dtype_size(src.dtype);
    if constexpr (std::is_same_v<T, double>)
        convert_to_double(base, src.dtype, dst, static_cast<std::size_t>(count));
    else
        convert_to_float(base, src.dtype, dst, static_cast<std::size_t>(count));
}

// Writes `count` T values into `dst` from element `offset`, rounding each once to dst's dtype.
template <class T>
inline void store(const T* src, Tensor& dst, std::int64_t offset, std::int64_t count) {
    auto* base = static_cast<unsigned char*>(dst.data) +
                 static_cast<std::size_t>(offset) * dtype_size(dst.dtype);
    if constexpr (std::is_same_v<T, double>)
        convert_from_double(src, base, dst.dtype, static_cast<std::size_t>(count));
    else
        convert_from_float(src, base, dst.dtype, static_cast<std::size_t>(count));
}

// The T elements of `t` from `offset` without a copy when t already holds T, else loaded into buf.
template <class T>
inline const T* view_or_load(const Tensor& t, std::int64_t offset, std::int64_t count, T* buf) {
    if (t.dtype == kComputeDType<T>) return static_cast<const T*>(t.data) + offset;
    load(t, offset, buf, count);
    return buf;
}

// Where to compute output elements: straight into `t` when it holds T, else into buf
// (then store_if_needed() rounds buf into t).
template <class T>
inline T* out_ptr(Tensor& t, std::int64_t offset, T* buf) {
    if (t.dtype == kComputeDType<T>) return static_cast<T*>(t.data) + offset;
    return buf;
}

template <class T>
inline void store_if_needed(const T* computed, Tensor& t, std::int64_t offset, std::int64_t count) {
    if (t.dtype != kComputeDType<T>) store(computed, t, offset, count);
}

// A growable scratch row for the rare row longer than kChunk (softmax over > 2048 classes):
// allocated once per thread, then reused, so steady-state steps never touch the heap.
template <class T>
inline T* scratch_row(std::size_t count, int slot) {
    thread_local std::vector<T> rows[4];
    auto& v = rows[slot];
    if (v.size() < count) v.resize(count);
    return v.data();
}

// --- activation math (tanh-approximated GELU, as cuBLASLt's epilogue) ---

template <class T>
inline constexpr T kGeluC = T(0.7978845608028654); // sqrt(2 / pi)
template <class T>
inline constexpr T kGeluK = T(0.044715);

// The scalar formulas are the ones the CUDA kernels use (core/backend/activation_math.h).
using activation_math::gelu;
using activation_math::gelu_grad;
using activation_math::sigmoid;

// y = tanh(x) over an array (x and y may alias). float uses Eigen's vectorised rational
// approximation (within a few ulp of libm, 10-20x faster than scalar tanhf); double uses libm,
// so float64 stays the exact reference for gradient checks.
template <class T>
inline void tanh_array(const T* x, T* y, std::int64_t n) {
    if constexpr (std::is_same_v<T, float>) {
        Eigen::Map<Eigen::ArrayXf>(y, n) = Eigen::Map<const Eigen::ArrayXf>(x, n).tanh();
    } else {
        for (std::int64_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
    }
}

// Array forms of gelu() and dy * gelu_grad(): the polynomial vectorises, tanh goes through
// tanh_array(). Sub-chunks of 256 keep the temporaries on the stack.
template <class T>
inline void gelu_array(const T* x, T* y, std::int64_t n) {
    T u[256];
    for (std::int64_t off = 0; off < n; off += 256) {
        const std::int64_t len = std::min<std::int64_t>(256, n - off);
        for (std::int64_t i = 0; i < len; ++i) {
            const T v = x[off + i];
            u[i] = kGeluC<T> * (v + kGeluK<T> * v * v * v);
        }
        tanh_array(u, u, len);
        for (std::int64_t i = 0; i < len; ++i) y[off + i] = T(0.5) * x[off + i] * (T(1) + u[i]);
    }
}

template <class T>
inline void gelu_backward_array(const T* x, const T* dy, T* dx, std::int64_t n) {
    T t[256];
    for (std::int64_t off = 0; off < n; off += 256) {
        const std::int64_t len = std::min<std::int64_t>(256, n - off);
        for (std::int64_t i = 0; i < len; ++i) {
            const T v = x[off + i];
            t[i] = kGeluC<T> * (v + kGeluK<T> * v * v * v);
        }
        tanh_array(t, t, len);
        for (std::int64_t i = 0; i < len; ++i) {
            const T v = x[off + i];
            const T grad = T(0.5) * (T(1) + t[i]) + T(0.5) * v * (T(1) - t[i] * t[i]) * kGeluC<T> *
                                                        (T(1) + T(3) * kGeluK<T> * v * v);
            dx[off + i] = dy[off + i] * grad;
        }
    }
}

// y = softmax(x) over one row; x and y may alias.
template <class T>
inline void softmax_row(const T* x, T* y, std::int64_t n) {
    if (n <= 0) return;
    T m = x[0];
    for (std::int64_t i = 1; i < n; ++i) m = std::max(m, x[i]);
    T sum = T(0);
    for (std::int64_t i = 0; i < n; ++i) {
        y[i] = std::exp(x[i] - m);
        sum += y[i];
    }
    const T inv = T(1) / sum;
    for (std::int64_t i = 0; i < n; ++i) y[i] *= inv;
}

// y[i] = act(x[i]) for the elementwise activations (x and y may alias). Softmax is row-wise and
// handled by softmax_row(); here it is an error. The switch sits outside the loops so each loop
// vectorises.
template <class T>
inline void activation_elementwise(Activation act, const T* x, T* y, std::int64_t n) {
    switch (act) {
    case Activation::Linear:
        if (x != y) std::copy(x, x + n, y);
        return;
    case Activation::Relu:
        // x < 0 ? 0 : x keeps NaN as NaN (as PyTorch does), so a poisoned activation still
        // reaches the finite-gradient check instead of being silently zeroed.
        for (std::int64_t i = 0; i < n; ++i) y[i] = activation_math::relu(x[i]);
        return;
    case Activation::Gelu:
        gelu_array(x, y, n);
        return;
    case Activation::Tanh:
        tanh_array(x, y, n);
        return;
    case Activation::Sigmoid:
        for (std::int64_t i = 0; i < n; ++i) y[i] = sigmoid(x[i]);
        return;
    case Activation::Softmax:
        break;
    }
    fail("activation_elementwise: softmax is row-wise");
}

} // namespace mantissa::cpu
