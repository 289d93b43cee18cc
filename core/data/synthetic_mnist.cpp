// Synthetic MNIST: a fixed linear congruential generator, so the bytes are the same on every
// platform and standard library.
#include "core/data/synthetic_mnist.h"

namespace mantissa {

MnistSplit synthetic_mnist_split(std::int64_t count, std::uint64_t seed) {
    MnistSplit split;
    split.count = count;
    split.images.resize(static_cast<std::size_t>(count * 784));
    split.labels.resize(static_cast<std::size_t>(count));
    std::uint64_t state = seed;
    auto next = [&] {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<std::uint32_t>(state >> 33);
    };
    for (std::int64_t i = 0; i < count; ++i) {
        const int label = static_cast<int>(next() % 10);
        split.labels[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(label);
        for (int p = 0; p < 784; ++p) {
            const bool block = (p / 28) / 7 == label / 4 && (p % 28) / 7 == label % 4;
            split.images[static_cast<std::size_t>(i * 784 + p)] =
                static_cast<std::uint8_t>((block ? 180 : 0) + next() % 60);
        }
    }
    return split;
}

Mnist synthetic_mnist(std::int64_t train_count, std::int64_t test_count) {
    return {synthetic_mnist_split(train_count, 11), synthetic_mnist_split(test_count, 22)};
}

} // namespace mantissa
