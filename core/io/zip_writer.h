// A minimal writer of uncompressed ("stored") ZIP archives, which is what numpy.savez writes and
// numpy.load reads: local headers with CRC-32, a central directory and its end record.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/io/atomic_file.h"

namespace mantissa {

// CRC-32 (IEEE 802.3, the one ZIP uses) of `bytes`, continuing from `crc` (0 to start).
std::uint32_t crc32(std::string_view bytes, std::uint32_t crc = 0);

class ZipWriter {
public:
    // Streams into `sink` (e.g. an atomic file). Entries are never compressed.
    explicit ZipWriter(const ByteSink& sink) : m_sink(sink) {}

    // One member. `parts` are concatenated (a header and a tensor's bytes, without copying them
    // together). Throws Error(InvalidArgument) beyond ZIP's 4 GiB / 65535-entry limits (no ZIP64).
    void add(const std::string& name, const std::vector<std::string_view>& parts);
    // Writes the central directory; call once, last.
    void finish();

private:
    struct Entry {
        std::string name;
        std::uint32_t crc = 0, size = 0, offset = 0;
    };
    void emit(std::string_view bytes);

    const ByteSink& m_sink;
    std::vector<Entry> m_entries;
    std::uint64_t m_offset = 0;
};

} // namespace mantissa
