// IDX reader: parses the header, checks every field against the file's real size, then reads.
// The size check comes before any allocation, so a corrupt header cannot make us allocate
// gigabytes.
#include "core/data/idx.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "core/error.h"

namespace mantissa {
namespace {

// A dimension above this is not an image dataset but a corrupt header (MNIST's largest is 60000).
constexpr std::int64_t kMaxDim = std::int64_t{1} << 24;
// The whole payload must also stay addressable; 2^40 bytes is far beyond any IDX file we load.
constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw Error(ErrorKind::Data, path + ": " + what);
}

std::string hex32(std::uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08X", static_cast<unsigned>(v));
    return buf;
}

std::string hex8(unsigned v) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02X", v & 0xFFu);
    return buf;
}

// The IDX type codes, so a wrong file says what it holds instead of just "bad type".
const char* idx_type_name(unsigned code) {
    switch (code) {
    case 0x08:
        return "unsigned byte";
    case 0x09:
        return "signed byte";
    case 0x0B:
        return "int16";
    case 0x0C:
        return "int32";
    case 0x0D:
        return "float32";
    case 0x0E:
        return "float64";
    default:
        return "unknown type";
    }
}

std::uint32_t read_be32(const unsigned char* p) {
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
           std::uint32_t{p[3]};
}

} // namespace

IdxArray read_idx_u8(const std::string& path, int expected_rank) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (!fs::exists(status)) {
        // A symlink loop or an unreadable folder is not "not found": say what it is.
        if (ec && ec != std::errc::no_such_file_or_directory) fail(path, ec.message());
        fail(path, "file not found");
    }
    if (!fs::is_regular_file(status)) fail(path, "not a regular file");
    const std::uintmax_t file_size = fs::file_size(path, ec);
    if (ec) fail(path, "cannot read the file size: " + ec.message());

    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path, "cannot open the file for reading");

    const std::uint32_t expected_magic = 0x00000800u | static_cast<std::uint32_t>(expected_rank);
    unsigned char magic[4] = {};
    if (file_size < 4 || !in.read(reinterpret_cast<char*>(magic), 4))
        fail(path, "truncated: the file has " + std::to_string(file_size) +
                       " bytes, fewer than the 4-byte IDX magic number (expected " +
                       hex32(expected_magic) + ")");
    const std::uint32_t found_magic = read_be32(magic);
    if (magic[0] != 0 || magic[1] != 0)
        fail(path, "not an IDX file: magic number is " + hex32(found_magic) + ", expected " +
                       hex32(expected_magic) + " (two zero bytes, type 0x08, rank " +
                       std::to_string(expected_rank) + ")");
    if (magic[2] != 0x08)
        fail(path, "element type code is " + hex8(magic[2]) + " (" + idx_type_name(magic[2]) +
                       "), expected 0x08 (unsigned byte); magic " + hex32(found_magic) +
                       ", expected " + hex32(expected_magic));
    if (magic[3] != expected_rank)
        fail(path, "has " + std::to_string(magic[3]) + " dimensions, expected " +
                       std::to_string(expected_rank) + " (magic " + hex32(found_magic) +
                       ", expected " + hex32(expected_magic) + ")");

    const std::uintmax_t header_size = 4 + 4 * static_cast<std::uintmax_t>(expected_rank);
    if (file_size < header_size)
        fail(path, "truncated header: expected " + std::to_string(header_size) +
                       " header bytes for " + std::to_string(expected_rank) +
                       " dimensions, the file has " + std::to_string(file_size) + " bytes");

    IdxArray out;
    out.dims.resize(static_cast<std::size_t>(expected_rank));
    std::int64_t elements = 1;
    for (int i = 0; i < expected_rank; ++i) {
        unsigned char b[4];
        if (!in.read(reinterpret_cast<char*>(b), 4)) fail(path, "cannot read the header");
        const std::int64_t d = read_be32(b);
        if (d <= 0)
            fail(path, "dimension " + std::to_string(i) + " is 0, expected a positive size");
        if (d >= kMaxDim)
            fail(path, "dimension " + std::to_string(i) + " is " + std::to_string(d) +
                           ", expected less than " + std::to_string(kMaxDim) +
                           " (a corrupt header?)");
        // Checked before multiplying: 2^40 elements times a dimension near 2^24 would overflow
        // int64 (found by fuzz/fuzz_idx).
        if (elements > kMaxElements / d)
            fail(path, "dimensions multiply to more than " + std::to_string(kMaxElements) +
                           " elements (a corrupt header?)");
        elements *= d;
        out.dims[static_cast<std::size_t>(i)] = d;
    }

    const std::uintmax_t expected_size = header_size + static_cast<std::uintmax_t>(elements);
    if (file_size != expected_size) {
        std::string dims;
        for (std::int64_t d : out.dims) dims += (dims.empty() ? "" : " x ") + std::to_string(d);
        const bool truncated = file_size < expected_size;
        fail(path, std::string(truncated ? "truncated" : "trailing bytes") + ": expected " +
                       std::to_string(expected_size) + " bytes (" + std::to_string(header_size) +
                       "-byte header + " + dims + " bytes of data), found " +
                       std::to_string(file_size) + " bytes");
    }

    out.data.resize(static_cast<std::size_t>(elements));
    if (!in.read(reinterpret_cast<char*>(out.data.data()), static_cast<std::streamsize>(elements)))
        fail(path, "read failed after " + std::to_string(in.gcount()) + " of " +
                       std::to_string(elements) + " data bytes");
    return out;
}

} // namespace mantissa
