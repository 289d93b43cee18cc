// Small file and text helpers for the Qt-free suites: read or write a whole file, split lines,
// and a substring test (std::string::contains is C++23).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mantissa::unit {

// The whole file; "" when it cannot be read (check exists() when that matters).
std::string read_file(const std::string& path);
// Writes (truncates) `path`; returns false when it cannot.
bool write_file(const std::string& path, std::string_view bytes);
bool exists(const std::string& path);
std::vector<std::string> split_lines(std::string_view text); // without the trailing empty line
// The full path of `program` found on $PATH, or "" (QStandardPaths::findExecutable).
std::string find_executable(const std::string& program);

// The parts between separators, empty ones kept (QString::split's default): "a,,b" -> a, "", b.
inline std::vector<std::string> split(std::string_view text, char separator) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (;;) {
        const std::size_t end = text.find(separator, start);
        parts.emplace_back(text.substr(start, end - start));
        if (end == std::string_view::npos) return parts;
        start = end + 1;
    }
}

// The full path of `program` found on $PATH (an executable file), or "" (QStandardPaths::
// findExecutable).
std::string find_executable(const std::string& program);

inline bool contains(std::string_view text, std::string_view part) {
    return text.find(part) != std::string_view::npos;
}

} // namespace mantissa::unit
