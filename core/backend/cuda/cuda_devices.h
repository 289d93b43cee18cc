// Enumerates the CUDA devices the runtime can use, without exposing any CUDA type.
// A machine with no driver or no GPU yields an empty list and a reason, never an exception.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace mantissa {

struct CudaDevice {
    int index = 0;
    std::string name; // "NVIDIA H100 80GB HBM3"
    int compute_major = 0, compute_minor = 0;
    std::size_t memory_total = 0; // bytes
};

struct CudaDeviceList {
    std::vector<CudaDevice> devices;
    std::string reason; // why the list is empty ("no CUDA driver", "no CUDA-capable device", ...)
    // The versions a qualification result is tied to (0 where the call failed).
    int driver_version = 0, runtime_version = 0;
    std::size_t cublaslt_version = 0, cudnn_version = 0;
};

CudaDeviceList cuda_devices();

} // namespace mantissa
