// Batch and layer normalization (issue 29): the kernels behind CudaBackend's batch_norm_* and
// layer_norm_* ops, with backend.h's NormArgs arithmetic (statistics dtype S = gamma's, sums in
// A = float32 or float64 when S is float64, every listed intermediate rounded to S as the cast
// kernel rounds). Deterministic: no float atomics, every sum in an order fixed by the shape.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "core/numeric/dtype.h"

namespace mantissa::cuda {

// NormArgs (and the backward's tensors) as kernels see them. beta, mean, inv_std and the moving
// statistics share gamma's dtype `s_dtype` (the host checks it).
struct NormLaunch {
    std::int64_t rows = 0, cols = 0;
    std::int64_t valid_rows = 0; // BatchNormalization training: rows beyond are padding
    double epsilon = 1e-3;
    double momentum = 0.99;
    bool training = true;
    DType s_dtype = DType::Float32;
    const void* x = nullptr;
    DType x_dtype = DType::Float32;
    const void* gamma = nullptr;
    const void* beta = nullptr;
    void* y = nullptr; // forward
    DType y_dtype = DType::Float32;
    // (cols) BatchNormalization, (rows) LayerNormalization: written by a forward when given (not
    // by BatchNormalization's inference), read by the backward passes (required there).
    void* mean = nullptr;
    void* inv_std = nullptr;
    void* moving_mean = nullptr;
    void* moving_variance = nullptr;
    const void* dy = nullptr; // backward
    DType dy_dtype = DType::Float32;
    void* dx = nullptr;
    DType dx_dtype = DType::Float32;
    void* dgamma = nullptr;
    DType dgamma_dtype = DType::Float32;
    void* dbeta = nullptr;
    DType dbeta_dtype = DType::Float32;
    // Device scratch for per-column statistics and per-chunk partial sums, used in stream order
    // (the engine lends bias_grad's: one op runs at a time on its stream).
    void* scratch = nullptr;
    std::size_t scratch_bytes = 0;
};

// The widest (cols) the scratch holds for these ops: two per-column values plus two partial sums
// of at least one row chunk, in float (float64 when `f64`, i.e. S is float64).
std::int64_t norm_max_cols(bool f64, std::size_t scratch_bytes);

// Training: batch statistics over rows < valid_rows (into mean / inv_std when given), moving
// statistics updated, y for every row. Inference: y from the moving statistics.
void launch_batch_norm_forward(const NormLaunch& a, cudaStream_t stream);
// dgamma, dbeta (sums over rows < valid_rows), then dx (0 for padding rows). dx may alias dy.
void launch_batch_norm_backward(const NormLaunch& a, cudaStream_t stream);
// Per-row statistics over cols; mean / inv_std written when given.
void launch_layer_norm_forward(const NormLaunch& a, cudaStream_t stream);
// dgamma, dbeta (sums over every row), then dx. dx may alias dy.
void launch_layer_norm_backward(const NormLaunch& a, cudaStream_t stream);

} // namespace mantissa::cuda
