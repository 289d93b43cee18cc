// What the NCCL path decides without NCCL or a GPU: which CUDA device a rank drives, and which
// ncclDataType_t carries each allreduce dtype. Pure functions, so tests check them anywhere.
#pragma once

#include <functional>
#include <string>

#include "core/numeric/dtype.h"

namespace mantissa {

// The rank's index among the ranks on its own host, from the launcher's environment: Open MPI's
// OMPI_COMM_WORLD_LOCAL_RANK, Slurm's SLURM_LOCALID, MPICH/Hydra's MPI_LOCALRANKID, PMIx's
// PMIX_LOCAL_RANK (first one set wins). -1 when none is set or the value is not a number >= 0.
// `getenv` is std::getenv in the program and a table in the tests.
int local_rank_from_env(const std::function<const char*(const char*)>& getenv);

// The CUDA device index for a rank: its local rank modulo the visible devices (one GPU per rank
// on each host), or the global rank modulo them when the launcher gave no local rank. Throws
// Error(Device) when no GPU is visible, naming the rank and CUDA_VISIBLE_DEVICES.
int cuda_device_for_rank(int rank, int local_rank, int visible_devices);

// The device string a data-parallel CUDA rank opens: "cuda" becomes "cuda:N" per
// cuda_device_for_rank(). An explicit "cuda:K" would put every rank on one GPU, so it is refused
// with Error(Config) saying to use "cuda" (and CUDA_VISIBLE_DEVICES to pick the GPUs).
std::string rank_device(const std::string& device, int rank, int local_rank, int visible_devices);

// ncclDataType_t's values (nccl.h; nccl_communicator.cpp static_asserts that they agree).
enum class NcclWireType : int { Int32 = 2, Float16 = 6, Float32 = 7, Float64 = 8, BFloat16 = 9 };

// The NCCL type that carries `dtype` elements (float32, float64, bfloat16, float16; int32 for the
// found-inf flag). NCCL sums 16-bit floats natively, so no uint16 workaround as with MPI. Throws
// Error(InvalidArgument) for any other dtype.
NcclWireType nccl_wire_type(DType dtype);

} // namespace mantissa
