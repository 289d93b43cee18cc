// Communicator: what data-parallel training needs from a group of ranks (MPI, or one process),
// without naming any MPI type, so the trainer and its tests never include <mpi.h>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/numeric/dtype.h"

namespace mantissa {

class Communicator {
public:
    virtual ~Communicator() = default;

    virtual int rank() const = 0; // 0 .. size() - 1
    virtual int size() const = 0;
    // "MPI (Open MPI v4.1.4)", "single process": for the run header and the banner.
    virtual std::string name() const = 0;

    // Sums `count` elements of `dtype` (float32, float64, bfloat16 or float16) in place over all
    // ranks; every rank ends with the same sums. 16-bit elements are added in float32 and rounded
    // once per pairwise sum. Throws Error(Device) naming the rank when the transport fails.
    virtual void allreduce_sum(void* data, std::size_t count, DType dtype) = 0;
    // The largest `value` over all ranks (a found-inf flag, a stop request).
    virtual std::int64_t allreduce_max(std::int64_t value) = 0;
    // all[r * mine.size() + i] = rank r's mine[i]; all.size() == size() * mine.size().
    virtual void allgather(std::span<const double> mine, std::span<double> all) = 0;
    virtual void barrier() = 0;
    // Ends every rank now (MPI_Abort) after this rank failed; a single process just returns.
    virtual void abort(int exit_code) = 0;

    // Where allreduce_sum's `data` and allreduce_max_in_place's `data` live. false: host memory,
    // the call returns with the result in place (MPI, one process, the CPU engine). true: the
    // memory of this rank's CUDA device; the call only enqueues the collective on the engine's
    // stream (NCCL), so GradientSync must never read those bytes back on the host mid-step.
    virtual bool reduces_on_device() const { return false; }
    // The element-wise MAX of `count` int32 values over all ranks, in place (found-inf flags).
    // Host memory unless reduces_on_device(); this default suits every host communicator.
    virtual void allreduce_max_in_place(std::int32_t* data, std::size_t count) {
        for (std::size_t i = 0; i < count; ++i)
            data[i] = static_cast<std::int32_t>(allreduce_max(data[i]));
    }
    // Rank `root`'s `bytes` bytes (host memory) copied to every rank (the ncclUniqueId). The
    // default goes through allgather, three bytes per double (exact integers): a communicator
    // with a native broadcast overrides it.
    virtual void broadcast_bytes(void* data, std::size_t bytes, int root) {
        auto* p = static_cast<unsigned char*>(data);
        const std::size_t words = (bytes + 2) / 3;
        std::vector<double> mine(words, 0.0), all(words * static_cast<std::size_t>(size()));
        for (std::size_t i = 0; i < bytes; ++i)
            mine[i / 3] += static_cast<double>(p[i]) * static_cast<double>(1u << (8 * (i % 3)));
        allgather(mine, all);
        const double* theirs = all.data() + static_cast<std::size_t>(root) * words;
        for (std::size_t i = 0; i < bytes; ++i)
            p[i] = static_cast<unsigned char>(
                (static_cast<std::uint32_t>(theirs[i / 3]) >> (8 * (i % 3))) & 0xFFu);
    }
};

} // namespace mantissa
