// error_of(): runs a callable and returns the message of the mantissa::Error it throws, or a
// readable description of what happened instead, so a failing check prints something useful.
#pragma once

#include <exception>
#include <string>

#include "core/error.h"

namespace mantissa::unit {

template <class F>
std::string error_of(F&& f, ErrorKind expected_kind) {
    try {
        f();
    } catch (const Error& e) {
        if (e.kind() != expected_kind)
            return "WRONG KIND " + std::string(error_kind_name(e.kind())) + ": " + e.what();
        return e.what();
    } catch (const std::exception& e) {
        return std::string("FOREIGN EXCEPTION: ") + e.what();
    }
    return "NO ERROR THROWN";
}

} // namespace mantissa::unit
