// Small text helpers for messages and name lookups, shared by the parts of core that parse
// names ("RMSprop", "Dense") and echo numbers back to the user.
#pragma once

#include <string>
#include <string_view>

namespace mantissa {

// ASCII lower case ("RMSprop" -> "rmsprop"); names in Mantissa are ASCII.
std::string lower_ascii(std::string_view text);
// Shortest round-trip text of a number ("0.001", "nan", "-inf"), so messages echo what the
// user wrote.
std::string number_text(double value);

} // namespace mantissa
