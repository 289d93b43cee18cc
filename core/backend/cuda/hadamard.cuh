// NVFP4's random Hadamard transform on the device (recipe.hadamard): each run of 16 consecutive
// rows of a row-major float32 matrix replaced, column by column, by (1/4)·H16·diag(s) times it,
// with core/numeric/hadamard_math.h's arithmetic (the CPU engine's), so both engines give the
// same bits. fake_quantize runs it before the 4-bit cast of a Dense layer's column-wise dW inputs.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace mantissa::cuda {

// The 16 signs of diag(s), by value (a kernel argument: nothing to allocate, nothing to copy).
struct HadamardSigns {
    float s[16];
};

// data: rows x cols, rows a multiple of 16 (the caller pads with zero rows). In place, in stream
// order, no host synchronisation.
void launch_random_hadamard_rows(float* data, std::int64_t rows, std::int64_t cols,
                                 const HadamardSigns& signs, cudaStream_t stream);

} // namespace mantissa::cuda
