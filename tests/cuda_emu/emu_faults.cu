// The kernel emulator's own checks, each provoked on purpose by a kernel with the fault in it:
// ctest (tests/cuda_emu/CMakeLists.txt) runs this once per fault and passes when the emulator's
// report names it. Built, like the engine's kernels, through unchevron.py and emu_device.h.
//
// usage: cuda_emu_faults overrun|canary|skipped-barrier|none
#include <cstdio>
#include <cstring>

#include <cuda_runtime.h>

namespace {

__global__ void write_index(int* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = i;
}

// Writes one page past the end of `out` (beyond its 256-byte rounding: the guard page).
__global__ void write_past_page(int* out, int n) {
    if (threadIdx.x == 0) out[n + 1024] = 1;
}

// Writes one element past the request, inside the 256-byte rounding (the canary).
__global__ void write_one_past(int* out, int n) {
    const int i = threadIdx.x;
    if (i <= n) out[i] = i;
}

// Thread 5 skips the block's first barrier and meets the second while the others wait at the
// first.
__global__ void skip_barrier(int* out) {
    __shared__ int shared[32];
    shared[threadIdx.x] = threadIdx.x;
    if (threadIdx.x != 5) __syncthreads();
    out[threadIdx.x] = shared[31 - threadIdx.x];
    __syncthreads();
}

} // namespace

int main(int argc, char** argv) {
    const char* fault = argc > 1 ? argv[1] : "none";
    const int n = 40; // 160 bytes: the allocation rounds to 256
    int* out = nullptr;
    if (cudaMalloc(reinterpret_cast<void**>(&out), n * sizeof(int)) != cudaSuccess) return 2;
    if (std::strcmp(fault, "overrun") == 0)
        write_past_page<<<1, 32>>>(out, n);
    else if (std::strcmp(fault, "canary") == 0)
        write_one_past<<<1, 64>>>(out, n);
    else if (std::strcmp(fault, "skipped-barrier") == 0)
        skip_barrier<<<1, 32>>>(out);
    else
        write_index<<<2, 32>>>(out, n);
    int host[n];
    cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; ++i)
        if (host[i] != i) return 1;
    std::printf("cuda_emu_faults: no fault\n");
    return 0;
}
