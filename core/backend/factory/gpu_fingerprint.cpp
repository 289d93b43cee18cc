// GPU fingerprints: the CUDA device list and library versions turned into one comparable key.
#include "core/backend/factory/gpu_fingerprint.h"

#ifdef MANTISSA_HAVE_CUDA
#include "core/backend/cuda/cuda_devices.h"
#endif

#ifndef MANTISSA_BUILD_ID
#define MANTISSA_BUILD_ID "unknown"
#endif

namespace mantissa {

namespace {

// 13000 -> "13.0" (the CUDA driver and runtime encode major*1000 + minor*10).
std::string cuda_version_text(int v) {
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

} // namespace

std::string GpuFingerprint::key() const {
    return name + "|sm_" + std::to_string(compute_major) + std::to_string(compute_minor) +
           "|driver " + std::to_string(driver_version) + "|cudart " +
           std::to_string(runtime_version) + "|cublasLt " + std::to_string(cublaslt_version) +
           "|cudnn " + std::to_string(cudnn_version) + "|mantissa " + build;
}

std::string GpuFingerprint::describe() const {
    return name + " (sm_" + std::to_string(compute_major) + std::to_string(compute_minor) +
           "), driver " + cuda_version_text(driver_version) + ", CUDA " +
           cuda_version_text(runtime_version) + ", cuBLASLt " + std::to_string(cublaslt_version) +
           ", cuDNN " + std::to_string(cudnn_version) + ", Mantissa " + build;
}

std::string mantissa_build_id() {
    return MANTISSA_BUILD_ID;
}

GpuList list_gpus() {
    GpuList out;
#ifdef MANTISSA_HAVE_CUDA
    out.engine_built = true;
    CudaDeviceList list = cuda_devices();
    out.reason = list.reason;
    for (const CudaDevice& device : list.devices) {
        GpuFingerprint g;
        g.device_id = "cuda:" + std::to_string(device.index);
        g.name = device.name;
        g.compute_major = device.compute_major;
        g.compute_minor = device.compute_minor;
        g.memory_total = device.memory_total;
        g.driver_version = list.driver_version;
        g.runtime_version = list.runtime_version;
        g.cublaslt_version = list.cublaslt_version;
        g.cudnn_version = list.cudnn_version;
        g.build = mantissa_build_id();
        out.gpus.push_back(g);
    }
#else
    out.reason = "this build has no CUDA engine (configured without nvcc)";
#endif
    return out;
}

} // namespace mantissa
