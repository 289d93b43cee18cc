// What identifies a GPU set-up for qualification: the card, its driver, the CUDA runtime, the
// cuBLASLt and cuDNN libraries and the Mantissa build. A result proven on one fingerprint says
// nothing about another, so a change of any field means "not checked" again.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace mantissa {

struct GpuFingerprint {
    std::string device_id; // "cuda:0": where the card is now, not part of its identity
    std::string name;      // "NVIDIA H100 80GB HBM3"
    int compute_major = 0, compute_minor = 0;
    std::size_t memory_total = 0; // bytes
    int driver_version = 0;       // cudaDriverGetVersion: 13000 = 13.0
    int runtime_version = 0;      // cudaRuntimeGetVersion
    std::size_t cublaslt_version = 0;
    std::size_t cudnn_version = 0;
    std::string build; // mantissa_build_id()

    // Every identifying field (all but device_id and memory_total) in one comparable string.
    std::string key() const;
    // "NVIDIA H100 80GB HBM3 (sm_90), driver 13.0, CUDA 13.0, cuBLASLt 130001, cuDNN 91400,
    // Mantissa 0.1.0+1a2b3c4"
    std::string describe() const;
};

// The GPUs this build can see, each with its versions, or the reason there are none
// ("this build has no CUDA engine", "CUDA unavailable: CUDA driver version is insufficient...").
struct GpuList {
    std::vector<GpuFingerprint> gpus;
    std::string reason;
    bool engine_built = false; // false: configured without nvcc
};

GpuList list_gpus();

// "0.1.0+<commit>": the version and the commit this build was configured from.
std::string mantissa_build_id();

} // namespace mantissa
