// dropout forward/backward: the keep-mask is dropout_hash.h's pure function of (seed, index), the
// same one the CPU engine evaluates, so both engines drop exactly the same elements.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "core/numeric/dtype.h"

namespace mantissa::cuda {

// y = mask ? x * scale : 0 with scale = 1 / (1 - rate) held in the compute type; when `seed_mask`
// the mask is computed (forward) and written, else it is read (backward).
struct DropoutArgs {
    const void* x = nullptr;
    DType x_dtype = DType::Float32;
    void* y = nullptr;
    DType y_dtype = DType::Float32;
    std::uint8_t* mask = nullptr;
    std::int64_t count = 0;
    double scale = 1.0;
    bool make_mask = false;
    std::uint64_t seed = 0, threshold = 0;
    bool f64 = false;
};

void launch_dropout(const DropoutArgs& args, cudaStream_t stream);

} // namespace mantissa::cuda
