// MNIST: the four IDX files, checked for consistency (counts match, 28x28, labels 0..9).
// find_data_dir() resolves --data, then $MANTISSA_DATA, then data/mnist beside the checkout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mantissa {

struct MnistSplit {
    std::int64_t count = 0;
    std::int64_t rows = 28, cols = 28;
    std::vector<std::uint8_t> images; // (count, 28, 28) pixels 0..255
    std::vector<std::uint8_t> labels; // (count) 0..9
};

struct Mnist {
    MnistSplit train; // 60,000
    MnistSplit test;  // 10,000
};

// Loads train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and
// t10k-labels-idx1-ubyte from `dir`. Throws Error(Data) naming the file and the problem,
// and saying how to fetch the data (./mantissa.sh) when the folder is missing.
Mnist load_mnist(const std::string& dir);
// Only the two t10k files (evaluation needs no training images); the same checks and errors.
MnistSplit load_mnist_test(const std::string& dir);

// The data folder: `cli_value` if not empty, else $MANTISSA_DATA, else data/mnist beside the
// checkout (the source tree this binary was built from), else data/mnist in the current folder.
std::string find_data_dir(const std::string& cli_value);

} // namespace mantissa
