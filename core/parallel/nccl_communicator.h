// The NCCL communicator: data-parallel CUDA ranks, one GPU each, reducing gradients in device
// memory on the CUDA engine's stream. MPI starts the ranks and carries the host-side collectives
// (the ncclUniqueId, the step records). Built only with CUDA + NCCL + MPI; otherwise
// make_nccl_communicator() says how to get it. This header names no CUDA or NCCL type.
#pragma once

#include <memory>

#include "core/backend/backend.h"
#include "core/parallel/communicator.h"

namespace mantissa {

// True when this build has the NCCL path (CUDA engine, nccl.h and libnccl, MPI).
bool nccl_built_in();

// An NCCL communicator on `engine` (the CUDA engine opened on this rank's GPU, see
// rank_device()) that takes over `host` (the MPI communicator that started the ranks) for the
// host-side collectives: rank 0 makes the ncclUniqueId, MPI broadcasts it, every rank joins with
// ncclCommInitRank. allreduce_sum / allreduce_max_in_place then take device pointers and return
// once the collective is enqueued on the engine's stream (reduces_on_device() is true);
// allgather, allreduce_max, barrier and abort stay on MPI. A watchdog thread turns an NCCL error
// reported asynchronously, or a collective still unfinished after MANTISSA_NCCL_TIMEOUT_S seconds
// (default 300: a dead or stuck peer), into an aborted communicator and an Error(Device) naming
// the rank at the next call. Throws Error(Config) without NCCL in the build, Error(Device) when
// NCCL cannot start; `host` then stays with the caller, to end every rank through it.
std::unique_ptr<Communicator> make_nccl_communicator(std::unique_ptr<Communicator>& host,
                                                     Backend& engine);

} // namespace mantissa
