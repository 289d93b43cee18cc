// Rank -> GPU mapping and the allreduce dtypes' NCCL types (see nccl_rank.h).
#include "core/parallel/nccl_rank.h"

#include <cerrno>
#include <cstdlib>

#include "core/error.h"

namespace mantissa {

int local_rank_from_env(const std::function<const char*(const char*)>& getenv) {
    for (const char* name :
         {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID", "PMIX_LOCAL_RANK"}) {
        const char* text = getenv(name);
        if (!text || !*text) continue;
        char* end = nullptr;
        errno = 0;
        const long value = std::strtol(text, &end, 10);
        if (errno != 0 || *end != '\0' || value < 0 || value > 1'000'000) return -1;
        return static_cast<int>(value);
    }
    return -1;
}

int cuda_device_for_rank(int rank, int local_rank, int visible_devices) {
    if (visible_devices <= 0)
        throw Error(ErrorKind::Device,
                    "rank " + std::to_string(rank) +
                        ": no CUDA device is visible (check nvidia-smi and CUDA_VISIBLE_DEVICES "
                        "on this host), or train with --device cpu");
    const int index = local_rank >= 0 ? local_rank : rank;
    return index % visible_devices;
}

std::string rank_device(const std::string& device, int rank, int local_rank, int visible_devices) {
    if (device != "cuda")
        throw Error(ErrorKind::Config,
                    "device '" + device +
                        "': a data-parallel run gives each rank its own GPU, so use --device cuda "
                        "(rank r takes GPU local_rank % GPUs; pick the GPUs with "
                        "CUDA_VISIBLE_DEVICES)");
    return "cuda:" + std::to_string(cuda_device_for_rank(rank, local_rank, visible_devices));
}

NcclWireType nccl_wire_type(DType dtype) {
    switch (dtype) {
    case DType::Float32:
        return NcclWireType::Float32;
    case DType::Float64:
        return NcclWireType::Float64;
    case DType::BFloat16:
        return NcclWireType::BFloat16;
    case DType::Float16:
        return NcclWireType::Float16;
    case DType::Int32:
        return NcclWireType::Int32;
    default:
        throw Error(ErrorKind::InvalidArgument, "NCCL allreduce: cannot reduce " +
                                                    std::string(dtype_name(dtype)) + " elements");
    }
}

} // namespace mantissa
