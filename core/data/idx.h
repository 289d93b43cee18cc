// IDX reader (the MNIST file format): validates magic, element type, dimensions, size and count.
// Every error names the file and says what was expected and what was found.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mantissa {

struct IdxArray {
    std::vector<std::int64_t> dims; // e.g. (60000, 28, 28) or (60000)
    std::vector<std::uint8_t> data; // unsigned bytes (type code 0x08), row-major
};

// Reads an unsigned-byte IDX file of `expected_rank` dimensions. Throws Error(Data) on a missing
// file, bad magic, wrong type or rank, absurd dimensions, or a size that does not match.
IdxArray read_idx_u8(const std::string& path, int expected_rank);

} // namespace mantissa
