// Communicator: what data-parallel training needs from a group of ranks (MPI, or one process),
// without naming any MPI type, so the trainer and its tests never include <mpi.h>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

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
};

} // namespace mantissa
