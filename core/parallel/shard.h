// Which rows of a global batch each rank trains on: rank r takes rows [r * B/N, (r + 1) * B/N)
// of the batch one process would take, so N ranks see the same examples in the same order.
#pragma once

#include <cstdint>

namespace mantissa {

struct BatchShard {
    std::int64_t offset = 0; // first index into the epoch's permutation
    std::int64_t count = 0;  // rows this rank trains on (0 past the end of a short last batch)
    // This rank's share of the batch's rows (count / global count): its loss gradient is weighted
    // by it, so the sum over ranks is the mean over the whole batch even when the last batch is
    // short.
    double weight = 0;
};

// The batch one process would train on starts at `global_offset` and holds `global_count` rows
// (global_count <= local_batch * ranks). A rank with no rows keeps a valid offset (the batch's
// first row) so the gather stays in bounds; its count and weight are 0.
BatchShard batch_shard(std::int64_t global_offset, std::int64_t global_count,
                       std::int64_t local_batch, int rank);

// Throws Error(Config) naming batch_size when it does not divide by `ranks`.
std::int64_t local_batch_size(std::int64_t batch_size, int ranks);

} // namespace mantissa
