// The kernel emulator's device side: included first (-include) into each CUDA source that
// unchevron.py rewrote, so the host compiler builds the CUDA engine's own kernels unchanged.
// Each emulated thread is a fiber (emu_runtime.cpp) that runs the kernel's body; __syncthreads
// and the warp shuffles are barriers between fibers, __shared__ variables are one static copy
// per kernel (blocks run one after another), and the float conversions are the CUDA headers'
// own host forms. What this cannot show: timing, hardware-only instructions (the sm_89 FP8
// conversion branches take their portable form here), and races the fibers' order hides.
#pragma once

#include <cuda_runtime.h>
// The builtin coordinates' declarations come before the macros below replace their names.
#include <device_launch_parameters.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>

namespace mantissa_emu {

struct Coordinates {
    uint3 thread;
    uint3 block;
    dim3 block_dim;
    dim3 grid_dim;
};

// The running fiber's coordinates (threadIdx, blockIdx, blockDim, gridDim), set by the scheduler
// before each switch; inline, since kernels read them in their inner loops. Outside a kernel it is
// null, and the fault report names the host code that read it.
extern const Coordinates* g_here;
inline const Coordinates& here() {
    return *g_here;
}
// __syncthreads at source line `line`: waits until every thread of the block that has not exited
// arrives at the same barrier (the same line, and the same count of barriers met); returns the OR
// of their predicates (__syncthreads_or).
int block_barrier(int predicate, int line);
// One warp-wide exchange: publishes `mine`, waits for the warp's lanes, and copies lane
// `source_lane`'s value into `theirs` (two slots a lane, used in turn, so one wait suffices).
void warp_exchange(const void* mine, void* theirs, std::size_t bytes, int source_lane);
// Runs `work` now, or records it as the next node of the graph `stream` is capturing (every
// launch, copy, fill, event and library call goes through here).
void enqueue(cudaStream_t stream, std::function<void()> work);
// Runs `body` once per thread of `grid` x `block`, block after block, through enqueue. A
// configuration the hardware refuses records cudaErrorInvalidConfiguration for cudaGetLastError
// instead.
void launch(const char* kernel, dim3 grid, dim3 block, std::size_t shared_bytes,
            cudaStream_t stream, const std::function<void()>& body);
// <<<grid, block>>> and <<<grid, block, shared>>>: the default stream.
inline void launch(const char* kernel, dim3 grid, dim3 block, const std::function<void()>& body) {
    launch(kernel, grid, block, 0, nullptr, body);
}
inline void launch(const char* kernel, dim3 grid, dim3 block, std::size_t shared_bytes,
                   const std::function<void()>& body) {
    launch(kernel, grid, block, shared_bytes, nullptr, body);
}

inline int lane() {
    const Coordinates& c = here();
    const unsigned linear = c.thread.x + c.block_dim.x * (c.thread.y + c.block_dim.y * c.thread.z);
    return static_cast<int>(linear % 32);
}

} // namespace mantissa_emu

// Execution-space and storage qualifiers: plain host C++ here.
#undef __global__
#define __global__
#undef __device__
#define __device__
#undef __host__
#define __host__
#undef __shared__
#define __shared__ static
#undef __forceinline__
#define __forceinline__ inline
#undef __grid_constant__
#define __grid_constant__
#ifndef __launch_bounds__
#define __launch_bounds__(...)
#endif

#define threadIdx (::mantissa_emu::here().thread)
#define blockIdx (::mantissa_emu::here().block)
#define blockDim (::mantissa_emu::here().block_dim)
#define gridDim (::mantissa_emu::here().grid_dim)
#define warpSize 32

// Macros, so that each barrier knows its source line: a thread that skipped one barrier and met
// the next would otherwise pass for one waiting at the first. (Not the return address: the
// compiler may copy one source barrier into several call sites.)
#define __syncthreads() ::mantissa_emu::block_barrier(0, __LINE__)
#define __syncthreads_or(predicate) ::mantissa_emu::block_barrier((predicate), __LINE__)
inline void __threadfence() {}
inline void __syncwarp(unsigned = 0xffffffffu) {}

template <class T>
T __shfl_xor_sync(unsigned /*mask*/, T value, int lane_mask, int width = 32) {
    const int lane = mantissa_emu::lane();
    int source = lane ^ lane_mask;
    if ((source & ~(width - 1)) != (lane & ~(width - 1))) // outside its segment: its own value
        source = lane;
    T theirs{};
    mantissa_emu::warp_exchange(&value, &theirs, sizeof(T), source);
    return theirs;
}
template <class T>
T __shfl_down_sync(unsigned /*mask*/, T value, unsigned delta, int width = 32) {
    const int lane = mantissa_emu::lane();
    int source = lane + static_cast<int>(delta);
    if ((source & ~(width - 1)) != (lane & ~(width - 1))) source = lane;
    T theirs{};
    mantissa_emu::warp_exchange(&value, &theirs, sizeof(T), source);
    return theirs;
}

// Atomics: fibers switch only at barriers, so a plain read-modify-write is atomic here.
template <class T>
T atomicAdd(T* address, T value) {
    const T old = *address;
    *address = old + value;
    return old;
}
template <class T>
T atomicMax(T* address, T value) {
    const T old = *address;
    *address = old < value ? value : old;
    return old;
}
template <class T>
T atomicOr(T* address, T value) {
    const T old = *address;
    *address = old | value;
    return old;
}

inline float __uint_as_float(unsigned v) {
    return std::bit_cast<float>(v);
}
inline unsigned __float_as_uint(float v) {
    return std::bit_cast<unsigned>(v);
}
inline float __int_as_float(int v) {
    return std::bit_cast<float>(v);
}
inline int __float_as_int(float v) {
    return std::bit_cast<int>(v);
}
inline long long __double_as_longlong(double v) {
    return std::bit_cast<long long>(v);
}
inline double __longlong_as_double(long long v) {
    return std::bit_cast<double>(v);
}
inline float __fmaf_rn(float a, float b, float c) {
    return std::fma(a, b, c);
}

// The device's min/max overloads, which kernels call unqualified (in the usual arithmetic
// conversions' type, as CUDA's integer overloads return).
template <class A, class B>
std::common_type_t<A, B> min(A a, B b) {
    using T = std::common_type_t<A, B>;
    return static_cast<T>(a) < static_cast<T>(b) ? static_cast<T>(a) : static_cast<T>(b);
}
template <class A, class B>
std::common_type_t<A, B> max(A a, B b) {
    using T = std::common_type_t<A, B>;
    return static_cast<T>(a) < static_cast<T>(b) ? static_cast<T>(b) : static_cast<T>(a);
}
