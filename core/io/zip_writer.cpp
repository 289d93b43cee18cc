// Stored ZIP members with their CRC-32: the fields are little-endian and fixed-size, so the
// archive is built with explicit byte pushes rather than packed structs (no padding surprises).
#include "core/io/zip_writer.h"

#include <array>

#include "core/error.h"

namespace mantissa {

namespace {

const std::array<std::uint32_t, 256>& crc_table() {
    static const std::array<std::uint32_t, 256> table = [] {
        std::array<std::uint32_t, 256> t{};
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            t[i] = c;
        }
        return t;
    }();
    return table;
}

void put16(std::string& out, std::uint32_t v) {
    out.push_back(static_cast<char>(v & 0xFF));
    out.push_back(static_cast<char>((v >> 8) & 0xFF));
}
void put32(std::string& out, std::uint32_t v) {
    put16(out, v & 0xFFFF);
    put16(out, v >> 16);
}

// 1980-01-01 00:00 in DOS format: a fixed timestamp keeps exports byte-reproducible.
constexpr std::uint32_t kDosTime = 0, kDosDate = (0 << 9) | (1 << 5) | 1;
constexpr std::uint32_t kVersion = 20; // 2.0: what stored members with directories need

} // namespace

std::uint32_t crc32(std::string_view bytes, std::uint32_t crc) {
    const auto& table = crc_table();
    crc = ~crc;
    for (unsigned char b : bytes) crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

void ZipWriter::emit(std::string_view bytes) {
    m_sink(bytes);
    m_offset += bytes.size();
}

void ZipWriter::add(const std::string& name, const std::vector<std::string_view>& parts) {
    std::uint64_t size = 0;
    std::uint32_t crc = 0;
    for (std::string_view p : parts) {
        size += p.size();
        crc = crc32(p, crc);
    }
    if (size > 0xFFFFFFFFull || m_offset > 0xFFFFFFFFull || m_entries.size() >= 0xFFFF ||
        name.size() > 0xFFFF)
        throw Error(ErrorKind::InvalidArgument,
                    "'" + name +
                        "' does not fit a ZIP archive without ZIP64 (4 GiB, 65535 "
                        "members); export to safetensors instead");
    Entry e{name, crc, static_cast<std::uint32_t>(size), static_cast<std::uint32_t>(m_offset)};
    std::string header;
    put32(header, 0x04034b50); // local file header signature
    put16(header, kVersion);
    put16(header, 0); // flags
    put16(header, 0); // method: stored
    put16(header, kDosTime);
    put16(header, kDosDate);
    put32(header, e.crc);
    put32(header, e.size); // compressed size
    put32(header, e.size); // uncompressed size
    put16(header, static_cast<std::uint32_t>(name.size()));
    put16(header, 0); // extra field length
    header += name;
    emit(header);
    for (std::string_view p : parts) emit(p);
    m_entries.push_back(std::move(e));
}

void ZipWriter::finish() {
    const std::uint64_t directory_start = m_offset;
    std::string dir;
    for (const Entry& e : m_entries) {
        put32(dir, 0x02014b50); // central directory header signature
        put16(dir, kVersion);   // made by
        put16(dir, kVersion);   // needed to extract
        put16(dir, 0);
        put16(dir, 0);
        put16(dir, kDosTime);
        put16(dir, kDosDate);
        put32(dir, e.crc);
        put32(dir, e.size);
        put32(dir, e.size);
        put16(dir, static_cast<std::uint32_t>(e.name.size()));
        put16(dir, 0); // extra
        put16(dir, 0); // comment
        put16(dir, 0); // disk number
        put16(dir, 0); // internal attributes
        put32(dir, 0); // external attributes
        put32(dir, e.offset);
        dir += e.name;
    }
    if (directory_start + dir.size() > 0xFFFFFFFFull)
        throw Error(ErrorKind::InvalidArgument,
                    "the archive exceeds 4 GiB, which ZIP needs ZIP64 for; export to safetensors");
    std::string end;
    put32(end, 0x06054b50); // end of central directory signature
    put16(end, 0);
    put16(end, 0);
    put16(end, static_cast<std::uint32_t>(m_entries.size()));
    put16(end, static_cast<std::uint32_t>(m_entries.size()));
    put32(end, static_cast<std::uint32_t>(dir.size()));
    put32(end, static_cast<std::uint32_t>(directory_start));
    put16(end, 0); // comment length
    emit(dir);
    emit(end);
}

} // namespace mantissa
