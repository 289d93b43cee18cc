// Device-side loads and stores of any storage dtype through a float or double working value:
// the GPU twin of cpu_kernels.h's load/store, rounding to nearest-even once on every store.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "core/numeric/dtype.h"

namespace mantissa::cuda {

using i64 = std::int64_t;

// The elementwise kernels compute in float32, or in float64 when a float64 tensor takes part.
__device__ inline float load_float(const void* p, DType dt, i64 i) {
    switch (dt) {
    case DType::Float32:
        return static_cast<const float*>(p)[i];
    case DType::Float16:
        return __half2float(static_cast<const __half*>(p)[i]);
    case DType::BFloat16:
        return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case DType::Float64:
        return static_cast<float>(static_cast<const double*>(p)[i]);
    case DType::UInt8:
        return static_cast<float>(static_cast<const std::uint8_t*>(p)[i]);
    case DType::Int32:
        return static_cast<float>(static_cast<const std::int32_t*>(p)[i]);
    default:
        return __int_as_float(0x7FC00000); // float8: rejected on the host before any launch
    }
}

__device__ inline double load_double(const void* p, DType dt, i64 i) {
    switch (dt) {
    case DType::Float64:
        return static_cast<const double*>(p)[i];
    case DType::Int32:
        return static_cast<double>(static_cast<const std::int32_t*>(p)[i]);
    default:
        return static_cast<double>(load_float(p, dt, i)); // exact: float holds every narrower value
    }
}

// Integer destinations: nearest-even, saturated, NaN -> 0 (what convert.h does on the host).
template <class I, class F>
__device__ inline I saturate_int(F v, F lo, F hi) {
    if (!(v == v)) return I(0);
    v = rint(v);
    return static_cast<I>(v < lo ? lo : (v > hi ? hi : v));
}

__device__ inline void store_float(void* p, DType dt, i64 i, float v) {
    switch (dt) {
    case DType::Float32:
        static_cast<float*>(p)[i] = v;
        return;
    case DType::Float16:
        static_cast<__half*>(p)[i] = __float2half_rn(v);
        return;
    case DType::BFloat16:
        static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v);
        return;
    case DType::Float64:
        static_cast<double*>(p)[i] = static_cast<double>(v);
        return;
    case DType::UInt8:
        static_cast<std::uint8_t*>(p)[i] = saturate_int<std::uint8_t>(v, 0.0f, 255.0f);
        return;
    case DType::Int32:
        static_cast<std::int32_t*>(p)[i] =
            saturate_int<std::int32_t>(static_cast<double>(v), -2147483648.0, 2147483647.0);
        return;
    default:
        return;
    }
}

__device__ inline void store_double(void* p, DType dt, i64 i, double v) {
    switch (dt) {
    case DType::Float64:
        static_cast<double*>(p)[i] = v;
        return;
    case DType::Float32:
        static_cast<float*>(p)[i] = static_cast<float>(v); // one rounding (nearest-even)
        return;
    case DType::Float16:
        static_cast<__half*>(p)[i] = __double2half(v); // one rounding, not via float
        return;
    case DType::BFloat16:
        static_cast<__nv_bfloat16*>(p)[i] = __double2bfloat16(v);
        return;
    case DType::UInt8:
        static_cast<std::uint8_t*>(p)[i] = saturate_int<std::uint8_t>(v, 0.0, 255.0);
        return;
    case DType::Int32:
        static_cast<std::int32_t*>(p)[i] =
            saturate_int<std::int32_t>(v, -2147483648.0, 2147483647.0);
        return;
    default:
        return;
    }
}

// load<T>/store<T> for templates over the compute type (float or double).
template <class T>
__device__ inline T load(const void* p, DType dt, i64 i) {
    if constexpr (sizeof(T) == sizeof(double))
        return load_double(p, dt, i);
    else
        return load_float(p, dt, i);
}

template <class T>
__device__ inline void store(void* p, DType dt, i64 i, T v) {
    if constexpr (sizeof(T) == sizeof(double))
        store_double(p, dt, i, v);
    else
        store_float(p, dt, i, v);
}

// Rounds a float to the storage dtype and back (what storing then loading would give).
__device__ inline float round_to(DType dt, float v) {
    switch (dt) {
    case DType::Float16:
        return __half2float(__float2half_rn(v));
    case DType::BFloat16:
        return __bfloat162float(__float2bfloat16_rn(v));
    default:
        return v;
    }
}

// Grid-stride launch geometry for n elements.
inline unsigned blocks_for(i64 n, unsigned threads = 256) {
    const i64 blocks = (n + threads - 1) / threads;
    return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65535 * 8 ? 65535 * 8 : blocks));
}

} // namespace mantissa::cuda
