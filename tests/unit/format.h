// format() and arg_text(): text for failure messages in the Qt-free suites (QString::arg's role;
// "%.17g" gives a double's every digit, "%a" its exact bits).
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>

namespace mantissa::unit {

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 1, 2)))
#endif
inline std::string
format(const char* pattern, ...) {
    va_list args;
    va_start(args, pattern);
    va_list again;
    va_copy(again, args);
    const int size = std::vsnprintf(nullptr, 0, pattern, args);
    va_end(args);
    std::string text(size > 0 ? static_cast<std::size_t>(size) : 0, '\0');
    if (size > 0) std::vsnprintf(text.data(), text.size() + 1, pattern, again);
    va_end(again);
    return text;
}

// A value as QString::arg(value) writes it: text as is, integers in decimal, doubles with %g.
inline std::string arg_text(std::string_view text) {
    return std::string(text);
}
inline std::string arg_text(char c) {
    return std::string(1, c);
}
inline std::string arg_text(double value) {
    return format("%g", value);
}
template <class T>
requires std::is_integral_v<T> std::string arg_text(T value) {
    return std::to_string(value);
}

} // namespace mantissa::unit
