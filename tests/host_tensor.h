// Tensors over memory a test owns (8-byte aligned), so op tests do not depend on allocate():
// HostTensor holds values in any dtype; HostScalars is a StepScalars seen as a Tensor.
#pragma once

#include <cstdint>
#include <vector>

#include "core/backend/step_scalars.h"
#include "core/numeric/convert.h"
#include "core/tensor/tensor.h"

namespace mantissa::test {

struct HostTensor {
    std::vector<std::uint64_t> storage;
    Tensor tensor;

    HostTensor(DType dtype, const std::vector<double>& values, const char* name = "t") {
        tensor.name = name;
        tensor.dtype = dtype;
        tensor.category = MemCategory::Gradients;
        tensor.shape = {static_cast<std::int64_t>(values.size())};
        storage.assign((tensor.bytes() + 7) / 8 + 1, 0);
        tensor.data = storage.data();
        set(values);
    }
    // Stores `values` rounded once to the tensor's dtype.
    void set(const std::vector<double>& values) {
        convert(values.data(), DType::Float64, tensor.data, tensor.dtype, values.size());
    }
    std::vector<double> values() const {
        std::vector<double> out(static_cast<std::size_t>(tensor.numel()));
        convert_to_double(tensor.data, tensor.dtype, out.data(), out.size());
        return out;
    }
    std::vector<unsigned char> bytes() const {
        const auto* p = static_cast<const unsigned char*>(tensor.data);
        return {p, p + tensor.bytes()};
    }
};

struct HostScalars {
    StepScalars values;
    Tensor tensor;
    HostScalars() {
        tensor.name = "scalars";
        tensor.dtype = DType::UInt8;
        tensor.shape = {static_cast<std::int64_t>(sizeof(StepScalars))};
        tensor.category = MemCategory::Workspace;
        tensor.data = &values;
    }
};

} // namespace mantissa::test
