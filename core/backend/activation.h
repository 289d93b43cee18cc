// Activation functions the layers and GEMM/conv epilogues know.
// gelu is the tanh approximation (what cuBLASLt's GELU epilogue computes), so CPU and GPU agree.
#pragma once

#include <string_view>

namespace mantissa {

enum class Activation { Linear, Relu, Gelu, Tanh, Sigmoid, Softmax };

const char*
activation_name(Activation act); // "linear", "relu", "gelu", "tanh", "sigmoid", "softmax"
// Throws Error(Config) listing the valid names.
Activation activation_from_name(std::string_view name);

} // namespace mantissa
