// Eight elements at a time for the elementwise kernels' typed fast paths (issue 26): a 16-bit
// tensor's eight elements are one 16-byte load or store, a float32 tensor's two. The values go
// through float exactly as load_float / store_float take them (widening is exact, narrowing
// rounds to nearest-even once), so a fast path computes bit for bit what the generic
// dtype-switching kernel computes; it only moves the bytes in fewer, wider transactions.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "core/backend/cuda/dtype_access.cuh"

namespace mantissa::cuda {

inline constexpr int kVec = 8;

// The storage types with a fast path, by dtype.
template <DType D>
struct StorageOf;
template <>
struct StorageOf<DType::Float32> {
    using type = float;
};
template <>
struct StorageOf<DType::Float16> {
    using type = __half;
};
template <>
struct StorageOf<DType::BFloat16> {
    using type = __nv_bfloat16;
};

__device__ inline float to_float(float v) {
    return v;
}
__device__ inline float to_float(__half v) {
    return __half2float(v);
}
__device__ inline float to_float(__nv_bfloat16 v) {
    return __bfloat162float(v);
}
__device__ inline float to_float(double v) { // narrows, as load_float does
    return static_cast<float>(v);
}

template <class S>
__device__ inline S from_float(float v);
template <>
__device__ inline float from_float<float>(float v) {
    return v;
}
template <>
__device__ inline __half from_float<__half>(float v) {
    return __float2half_rn(v);
}
template <>
__device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}

// Elements [8·v, 8·v + 8) of p, widened. p must be 16-byte aligned.
template <class S>
__device__ inline void load8(const S* p, i64 v, float out[kVec]) {
    constexpr int kLoads = kVec * sizeof(S) / 16;
    union {
        uint4 raw[kLoads];
        S e[kVec];
    } chunk;
    const auto* src = reinterpret_cast<const uint4*>(p) + v * kLoads;
#pragma unroll
    for (int k = 0; k < kLoads; ++k) chunk.raw[k] = src[k];
#pragma unroll
    for (int j = 0; j < kVec; ++j) out[j] = to_float(chunk.e[j]);
}

// Elements [8·v, 8·v + 8) of p, each rounded once to S. p must be 16-byte aligned.
template <class S>
__device__ inline void store8(S* p, i64 v, const float in[kVec]) {
    constexpr int kStores = kVec * sizeof(S) / 16;
    union {
        uint4 raw[kStores];
        S e[kVec];
    } chunk;
#pragma unroll
    for (int j = 0; j < kVec; ++j) chunk.e[j] = from_float<S>(in[j]);
    auto* dst = reinterpret_cast<uint4*>(p) + v * kStores;
#pragma unroll
    for (int k = 0; k < kStores; ++k) dst[k] = chunk.raw[k];
}

// Whether a fast path may take a tensor: a dtype with a storage type and a 16-byte aligned base.
inline bool vec8_dtype(DType dt) {
    return dt == DType::Float32 || dt == DType::Float16 || dt == DType::BFloat16;
}
inline bool vec8_aligned(const void* p) {
    return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0;
}

// A storage type as a value, for the dispatch below.
template <class S>
struct StorageTag {
    using type = S;
};

// Calls f(StorageTag<S>{}) with S the storage type of dt (one vec8_dtype accepts).
template <class F>
inline void with_storage(DType dt, F&& f) {
    switch (dt) {
    case DType::Float16:
        f(StorageTag<__half>{});
        return;
    case DType::BFloat16:
        f(StorageTag<__nv_bfloat16>{});
        return;
    default:
        f(StorageTag<float>{});
        return;
    }
}

// Grid for n eight-element vectors: enough blocks to fill the GPU, each thread striding.
inline unsigned vec8_blocks(i64 vectors, unsigned threads = 256) {
    const unsigned b = blocks_for(vectors, threads);
    return b > 4096 ? 4096 : b;
}

} // namespace mantissa::cuda
