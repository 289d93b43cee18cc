// gather_batch: builds a training batch on the device from the resident uint8 MNIST: the rows
// the permutation names, each pixel mapped through a 256-entry table of pixel/255 bit patterns.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace mantissa::cuda {

// pixel value -> bit pattern of pixel / 255 in the batch dtype, rounded once on the host.
struct PixelTable {
    std::uint64_t bits[256];
};

struct GatherArgs {
    const std::uint8_t* images = nullptr; // (examples, features)
    const std::uint8_t* labels = nullptr; // (examples)
    const std::int32_t* rows = nullptr;   // permutation + offset: the first `count` entries used
    std::int64_t examples = 0, features = 0, count = 0, batch_rows = 0;
    void* batch = nullptr; // (batch_rows, features), elements of elem_size bytes
    std::size_t elem_size = 4;
    std::int32_t* batch_labels = nullptr; // (batch_rows)
    // Issue 26: when set, the batch starts at rows[*position] (StepScalars::batch_position, read
    // on the device so one captured graph serves every position); else at rows[0].
    const std::int64_t* position = nullptr;
    std::int64_t permutation_size = 0; // entries from `rows` on, for the position's bounds
};

void launch_gather_batch(const GatherArgs& args, const PixelTable& table, cudaStream_t stream);

} // namespace mantissa::cuda
