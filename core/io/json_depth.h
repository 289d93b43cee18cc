// How deeply a JSON text nests, found by scanning it before parsing. nlohmann's parser is
// iterative, but copying, dumping and merging a value recurse once per level: a file of 100,000 '['
// overflowed the stack (a crash, not an error) in the lesson, metrics and safetensors readers.
#pragma once

#include <cstddef>
#include <string_view>

namespace mantissa {

// Far more than any file Mantissa writes or ships (an experiment nests 5 levels, a lesson 8).
inline constexpr std::size_t kMaxJsonDepth = 64;

// The deepest nesting of [ and { outside strings. Exact for valid JSON; for invalid text it is
// only a bound, which is enough: such text fails to parse anyway.
inline std::size_t json_nesting_depth(std::string_view text) {
    std::size_t depth = 0, deepest = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\')
                ++i; // the escaped character cannot end the string
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > deepest) deepest = depth;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return deepest;
}

} // namespace mantissa
