// Shared helpers for the engine tests: a small learnable synthetic MNIST and layer-spec builders.
// Header-only so each tst_*.cpp stays one executable.
#pragma once

#include <cstdint>
#include <vector>

#include "core/backend/backend.h"
#include "core/data/mnist.h"
#include "core/nn/layer_spec.h"
#include "core/plan/plan.h"

namespace mantissa::test {

// Each class lights its own 7x7 block, plus noise: learnable in a few steps.
inline MnistSplit synthetic_split(std::int64_t count, std::uint64_t seed) {
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

inline Mnist synthetic_mnist(std::int64_t train, std::int64_t test) {
    return {synthetic_split(train, 11), synthetic_split(test, 22)};
}

inline LayerSpec flatten() {
    LayerSpec s;
    s.type = LayerType::Flatten;
    return s;
}
inline LayerSpec dense(std::int64_t units, Activation act = Activation::Linear) {
    LayerSpec s;
    s.type = LayerType::Dense;
    s.units = units;
    s.activation = act;
    return s;
}
inline LayerSpec activation(Activation act, const char* dtype = nullptr) {
    LayerSpec s;
    s.type = LayerType::Activation;
    s.activation = act;
    if (dtype) s.dtype = dtype;
    return s;
}
inline LayerSpec dropout(double rate) {
    LayerSpec s;
    s.type = LayerType::Dropout;
    s.rate = rate;
    return s;
}
inline LayerSpec conv(std::int64_t filters, std::int64_t k, Activation act = Activation::Linear,
                      std::int64_t stride = 1, const char* padding = "valid") {
    LayerSpec s;
    s.type = LayerType::Conv2D;
    s.filters = filters;
    s.kernel[0] = s.kernel[1] = k;
    s.stride[0] = s.stride[1] = stride;
    s.padding = padding;
    s.activation = act;
    return s;
}
inline LayerSpec maxpool(std::int64_t size = 2) {
    LayerSpec s;
    s.type = LayerType::MaxPool2D;
    s.pool[0] = s.pool[1] = size;
    return s;
}

// mlp-small: 784-128-128-10 with a float32 softmax.
inline ModelSpec mlp_small() {
    ModelSpec m;
    m.layers = {flatten(), dense(128, Activation::Relu), dense(128, Activation::Relu), dense(10),
                activation(Activation::Softmax, "float32")};
    return m;
}

// The dataset of a split on a backend, as a BatchSource needs it.
struct DeviceSplit {
    Buffer images_buf, labels_buf, perm_buf;
    Tensor images, labels, perm;

    DeviceSplit(Backend& backend, const MnistSplit& split) {
        images = {"images", DType::UInt8, {split.count, 784}, MemCategory::Data, nullptr};
        labels = {"labels", DType::UInt8, {split.count}, MemCategory::Data, nullptr};
        perm = {"perm", DType::Int32, {split.count}, MemCategory::Data, nullptr};
        images_buf = backend.allocate(images.bytes());
        labels_buf = backend.allocate(labels.bytes());
        perm_buf = backend.allocate(perm.bytes());
        images.data = images_buf.data();
        labels.data = labels_buf.data();
        perm.data = perm_buf.data();
        backend.upload(split.images.data(), images);
        backend.upload(split.labels.data(), labels);
        std::vector<std::int32_t> identity(static_cast<std::size_t>(split.count));
        for (std::size_t i = 0; i < identity.size(); ++i)
            identity[i] = static_cast<std::int32_t>(i);
        backend.upload(identity.data(), perm);
    }
    BatchSource batch(std::int64_t offset, std::int64_t count) const {
        return {&images, &labels, &perm, offset, count};
    }
};

} // namespace mantissa::test
