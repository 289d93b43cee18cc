// Shared helpers for the engine tests: layer-spec builders and a dataset split on a backend.
// Header-only so each tst_*.cpp stays one executable.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/data/mnist.h"
#include "core/data/synthetic_mnist.h"
#include "core/nn/layer_spec.h"
#include "core/numeric/convert.h"
#include "core/plan/plan.h"

namespace mantissa::test {

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
inline LayerSpec batchnorm(double momentum = 0.99, double epsilon = 1e-3) {
    LayerSpec l;
    l.type = LayerType::BatchNormalization;
    l.momentum = momentum;
    l.epsilon = epsilon;
    return l;
}
inline LayerSpec layernorm(double epsilon = 1e-3) {
    LayerSpec l;
    l.type = LayerType::LayerNormalization;
    l.epsilon = epsilon;
    return l;
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

// The first parameter whose compute copy (PlanParam::compute_copy) is not its master variable
// rounded once to the copy's dtype, as a cast writes it; empty when every copy is.
inline std::string stale_compute_copy(const Plan& plan) {
    for (const PlanParam& p : plan.params) {
        if (p.compute_copy == kNoTensor) continue;
        const Tensor& master = plan.tensor(p.variable);
        const Tensor& copy = plan.tensor(p.compute_copy);
        std::vector<double> values(static_cast<std::size_t>(master.numel()));
        convert_to_double(master.data, master.dtype, values.data(), values.size());
        std::vector<unsigned char> expected(copy.bytes());
        convert_from_double(values.data(), expected.data(), copy.dtype, values.size());
        if (std::memcmp(expected.data(), copy.data, expected.size()) != 0) return p.name;
    }
    return {};
}

} // namespace mantissa::test
