// A scratch file for fuzz targets whose reader takes a path, not bytes: one file per process,
// rewritten for every input, removed at exit (libFuzzer may run several processes at once).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace mantissa::fuzz {

class InputFile {
public:
    InputFile() {
        const char* dir = std::getenv("TMPDIR");
        m_path = std::string(dir && *dir ? dir : "/tmp") + "/mantissa-fuzz-" +
                 std::to_string(::getpid()) + ".bin";
    }
    ~InputFile() { std::remove(m_path.c_str()); }
    InputFile(const InputFile&) = delete;
    InputFile& operator=(const InputFile&) = delete;

    // Replaces the file's content with `data`; returns its path.
    const std::string& write(const std::uint8_t* data, std::size_t size) {
        std::FILE* f = std::fopen(m_path.c_str(), "wb");
        if (!f) std::abort(); // the harness itself is broken, not the code under test
        if (size && std::fwrite(data, 1, size, f) != size) std::abort();
        std::fclose(f);
        return m_path;
    }
    const std::string& path() const { return m_path; }

private:
    std::string m_path;
};

} // namespace mantissa::fuzz
