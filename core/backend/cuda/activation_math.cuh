// Device activation math: the formulas of core/backend/activation_math.h, the header the CPU
// engine calls too, so both engines compute the same operations in the same order (the library
// compiles with --fmad=false, the CPU engine with -ffp-contract=off: no product is fused into an
// add on either side). Tested on the CPU through that header (tests/ops, tst_cpu_ops).
#pragma once

#include "core/backend/activation.h"
#include "core/backend/activation_math.h"

namespace mantissa::cuda {

template <class T>
__device__ inline T gelu(T x) {
    return activation_math::gelu(x);
}

template <class T>
__device__ inline T gelu_grad(T x) {
    return activation_math::gelu_grad(x);
}

template <class T>
__device__ inline T sigmoid(T x) {
    return activation_math::sigmoid(x);
}

// Elementwise activations (softmax is row-wise and handled by its own kernels).
template <class T>
__device__ inline T activate(Activation act, T x) {
    switch (act) {
    case Activation::Relu:
        return activation_math::relu(x); // keeps NaN, as the CPU engine
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

// dx for one element of an elementwise activation's backward: from the output y for ReLU, tanh
// and sigmoid, from the input x for GELU (`in`); other activations pass dy through. The one
// definition of activation.cu's fast path and bias_grad.cu's fused dZ + bias-gradient pass.
__device__ inline float elementwise_backward(Activation act, float in, float dy) {
    switch (act) {
    case Activation::Relu:
        return activation_math::relu_backward(in, dy);
    case Activation::Gelu:
        return dy * gelu_grad(in);
    case Activation::Tanh:
        return activation_math::tanh_backward(in, dy);
    case Activation::Sigmoid:
        return activation_math::sigmoid_backward(in, dy);
    default:
        return dy;
    }
}

} // namespace mantissa::cuda
