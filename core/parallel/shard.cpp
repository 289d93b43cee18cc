// Batch sharding for data-parallel training.
#include "core/parallel/shard.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace mantissa {

BatchShard batch_shard(std::int64_t global_offset, std::int64_t global_count,
                       std::int64_t local_batch, int rank) {
    BatchShard shard;
    const std::int64_t first = static_cast<std::int64_t>(rank) * local_batch;
    shard.count = std::clamp<std::int64_t>(global_count - first, 0, local_batch);
    shard.offset = shard.count > 0 ? global_offset + first : global_offset;
    shard.weight = global_count > 0
                       ? static_cast<double>(shard.count) / static_cast<double>(global_count)
                       : 0.0;
    return shard;
}

std::int64_t local_batch_size(std::int64_t batch_size, int ranks) {
    if (ranks < 1)
        throw Error(ErrorKind::InvalidArgument,
                    "data parallel: " + std::to_string(ranks) + " ranks");
    if (batch_size % ranks != 0)
        throw Error(ErrorKind::Config,
                    "batch_size: " + std::to_string(batch_size) + " does not divide by the " +
                        std::to_string(ranks) + " ranks (each rank trains on batch_size / ranks " +
                        "examples of every batch); use a multiple of " + std::to_string(ranks));
    return batch_size / ranks;
}

} // namespace mantissa
