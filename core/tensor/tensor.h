// Tensor: a typed, shaped view of backend memory, tagged with the memory category it counts toward.
// Tensors do not own memory; a Plan's arena (a Buffer) does. 16/8-bit floats hold bit patterns.
#pragma once

#include <cstddef>
#include <string>

#include "core/numeric/dtype.h"
#include "core/tensor/memory_category.h"
#include "core/tensor/shape.h"

namespace mantissa {

struct Tensor {
    std::string name; // "dense_1/kernel", "dense_1/output", "grad(dense_1/kernel)"
    DType dtype = DType::Float32;
    Shape shape;
    MemCategory category = MemCategory::Activations;
    void* data = nullptr; // backend memory (host for the CPU engine, device for CUDA)

    std::int64_t numel() const { return shape_numel(shape); }
    std::size_t bytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype); }
    // 2-D view used by GEMM-like ops: (first dim, product of the rest).
    std::int64_t rows() const { return shape.empty() ? 1 : shape[0]; }
    std::int64_t cols() const { return rows() == 0 ? 0 : numel() / rows(); }
    template <class T>
    T* as() const {
        return static_cast<T*>(data);
    }
};

} // namespace mantissa
