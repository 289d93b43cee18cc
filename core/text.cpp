// Text helpers: ASCII lower-casing and shortest round-trip number formatting.
// std::to_chars gives the shortest text that reads back to the same double, locale-free.
#include "core/text.h"

#include <array>
#include <charconv>

namespace mantissa {

std::string lower_ascii(std::string_view text) {
    std::string out(text);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

std::string number_text(double value) {
    std::array<char, 64> text{};
    const auto result = std::to_chars(text.data(), text.data() + text.size(), value);
    return std::string(text.data(), result.ptr);
}

} // namespace mantissa
