// SingleProcessCommunicator: checks its arguments like the MPI one would, then changes nothing.
#include "core/parallel/single_process_communicator.h"

#include <algorithm>

#include "core/error.h"

namespace mantissa {

void SingleProcessCommunicator::allreduce_sum(void* data, std::size_t count, DType dtype) {
    (void)data;
    (void)count;
    if (dtype != DType::Float32 && dtype != DType::Float64 && dtype != DType::BFloat16 &&
        dtype != DType::Float16)
        throw Error(ErrorKind::InvalidArgument,
                    "allreduce_sum: cannot sum " + std::string(dtype_name(dtype)) + " elements");
}

void SingleProcessCommunicator::allgather(std::span<const double> mine, std::span<double> all) {
    if (all.size() != mine.size())
        throw Error(ErrorKind::InvalidArgument, "allgather: output holds " +
                                                    std::to_string(all.size()) + " values, not " +
                                                    std::to_string(mine.size()));
    std::copy(mine.begin(), mine.end(), all.begin());
}

} // namespace mantissa
