// The per-element activation formulas and their derivatives, for the CPU engine and the CUDA
// kernels alike (MANTISSA_HD is __host__ __device__ under nvcc). One definition, one operation
// order; both engines compile without FMA contraction (-ffp-contract=off, nvcc --fmad=false), so
// wherever they call the same math function they agree bit for bit, and the CPU tests of these
// formulas test the kernels' arithmetic too. (The CPU engine's float tanh goes through Eigen's
// vectorised approximation in its array paths; these scalar forms take tanh from the math library.)
#pragma once

#include <cmath>

#include "core/host_device.h"

namespace mantissa::activation_math {

// The tanh form of GELU (as cuBLASLt's epilogue): sqrt(2 / pi) and the cubic coefficient.
template <class T>
MANTISSA_HD inline T gelu_c() {
    return T(0.7978845608028654);
}
template <class T>
MANTISSA_HD inline T gelu_k() {
    return T(0.044715);
}

// x < 0 ? 0 : x keeps NaN as NaN (as PyTorch does), so a poisoned activation still reaches the
// finite-gradient check instead of being silently zeroed.
template <class T>
MANTISSA_HD inline T relu(T x) {
    return x < T(0) ? T(0) : x;
}
// From the output: y > 0 passes dy (a NaN output passes nothing).
template <class T>
MANTISSA_HD inline T relu_backward(T y, T dy) {
    return y > T(0) ? dy : T(0);
}

// 0.5 x (1 + tanh(c (x + k x^3))), the cube as ((k x) x) x.
template <class T>
MANTISSA_HD inline T gelu(T x) {
    using std::tanh;
    return T(0.5) * x * (T(1) + tanh(gelu_c<T>() * (x + gelu_k<T>() * x * x * x)));
}
// d gelu / dx of the tanh form; here the cube is (k x^2) x, as the CUDA kernel has always had it.
template <class T>
MANTISSA_HD inline T gelu_grad(T x) {
    using std::tanh;
    const T x2 = x * x;
    const T t = tanh(gelu_c<T>() * (x + gelu_k<T>() * x2 * x));
    return T(0.5) * (T(1) + t) +
           T(0.5) * x * (T(1) - t * t) * gelu_c<T>() * (T(1) + T(3) * gelu_k<T>() * x2);
}

// From the output: dy (1 - y^2).
template <class T>
MANTISSA_HD inline T tanh_backward(T y, T dy) {
    return dy * (T(1) - y * y);
}

// Written so that neither branch overflows exp().
template <class T>
MANTISSA_HD inline T sigmoid(T x) {
    using std::exp;
    if (x >= T(0)) return T(1) / (T(1) + exp(-x));
    const T e = exp(x);
    return e / (T(1) + e);
}
// From the output: dy (y (1 - y)).
template <class T>
MANTISSA_HD inline T sigmoid_backward(T y, T dy) {
    return dy * (y * (T(1) - y));
}

} // namespace mantissa::activation_math
