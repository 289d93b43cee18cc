// fill: replicates one bit pattern (the value already rounded once on the host, exactly as the
// CPU engine rounds it) over a tensor of 1-, 2-, 4- or 8-byte elements.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace mantissa::cuda {

void launch_fill_bits(void* data, std::size_t elem_size, std::int64_t count, std::uint64_t bits,
                      cudaStream_t stream);

} // namespace mantissa::cuda
