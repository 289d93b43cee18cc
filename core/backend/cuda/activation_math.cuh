// Device activation math, written as cpu_kernels.h writes it (same formulas, same operation
// order; the library compiles with --fmad=false so no product is fused into an add).
#pragma once

#include "core/backend/activation.h"

namespace mantissa::cuda {

template <class T>
__device__ inline T gelu(T x) {
    const T c = T(0.7978845608028654), k = T(0.044715);
    return T(0.5) * x * (T(1) + tanh(c * (x + k * x * x * x)));
}

template <class T>
__device__ inline T gelu_grad(T x) {
    const T c = T(0.7978845608028654), k = T(0.044715);
    const T x2 = x * x;
    const T t = tanh(c * (x + k * x2 * x));
    return T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * c * (T(1) + T(3) * k * x2);
}

template <class T>
__device__ inline T sigmoid(T x) {
    if (x >= T(0)) return T(1) / (T(1) + exp(-x));
    const T e = exp(x);
    return e / (T(1) + e);
}

// Elementwise activations (softmax is row-wise and handled by its own kernels).
template <class T>
__device__ inline T activate(Activation act, T x) {
    switch (act) {
    case Activation::Relu:
        return x < T(0) ? T(0) : x; // keeps NaN, as the CPU engine
    case Activation::Gelu:
        return gelu(x);
    case Activation::Tanh:
        return tanh(x);
    case Activation::Sigmoid:
        return sigmoid(x);
    default:
        return x;
    }
}

} // namespace mantissa::cuda
