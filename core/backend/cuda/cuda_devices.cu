// CUDA device enumeration through the runtime API (statically linked cudart).
// cudaGetDeviceCount fails cleanly without a driver; that is a normal CPU-only machine.
#include "core/backend/cuda/cuda_devices.h"

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <string>

namespace mantissa {

CudaDeviceList cuda_devices() {
    CudaDeviceList list;
    // Versions first: they are what a cached qualification is checked against, and the runtime's
    // own version and the libraries' are known even when no driver is there to ask.
    cudaRuntimeGetVersion(&list.runtime_version);
    if (cudaDriverGetVersion(&list.driver_version) != cudaSuccess) list.driver_version = 0;
    list.cublaslt_version = cublasLtGetVersion();
    list.cudnn_version = cudnnGetVersion();
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        // The runtime says "driver version is insufficient" both when the driver is too old and
        // when there is none at all; the driver's own version (0 without one) tells them apart,
        // so a laptop without an NVIDIA GPU is not told to update a driver it does not have.
        auto version = [](int v) {
            return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
        };
        if (list.driver_version == 0)
            list.reason = "CUDA unavailable: no NVIDIA driver is installed (" +
                          std::string(cudaGetErrorString(status)) + ")";
        else if (status == cudaErrorInsufficientDriver)
            list.reason = "CUDA unavailable: the NVIDIA driver supports CUDA " +
                          version(list.driver_version) + ", this build needs CUDA " +
                          version(list.runtime_version) + "; update the NVIDIA driver";
        else
            list.reason = std::string("CUDA unavailable: ") + cudaGetErrorString(status);
        cudaGetLastError(); // clear the sticky-free error so later calls start clean
        return list;
    }
    if (count == 0) list.reason = "no CUDA-capable device";
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
        CudaDevice device;
        device.index = i;
        device.name = prop.name;
        device.compute_major = prop.major;
        device.compute_minor = prop.minor;
        device.memory_total = prop.totalGlobalMem;
        list.devices.push_back(device);
    }
    return list;
}

} // namespace mantissa
