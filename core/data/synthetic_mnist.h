// A small, learnable stand-in for MNIST (each class lights its own 7x7 block, plus noise), for
// the self-test and the unit tests, which must run without the real files.
#pragma once

#include <cstdint>

#include "core/data/mnist.h"

namespace mantissa {

// `count` 28x28 images with labels 0..9; the same seed gives the same bytes.
MnistSplit synthetic_mnist_split(std::int64_t count, std::uint64_t seed);
// train and test splits from seeds 11 and 22.
Mnist synthetic_mnist(std::int64_t train_count, std::int64_t test_count);

} // namespace mantissa
