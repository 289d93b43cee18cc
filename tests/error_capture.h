// errorOf(): runs a callable and returns the message of the mantissa::Error it throws, or a
// readable description of what happened instead, so a failing check prints something useful.
#pragma once

#include <QString>
#include <exception>

#include "core/error.h"

namespace mantissa::test {

template <class F>
QString errorOf(F&& f, ErrorKind expected_kind) {
    try {
        f();
    } catch (const Error& e) {
        if (e.kind() != expected_kind)
            return QStringLiteral("WRONG KIND %1: %2").arg(error_kind_name(e.kind()), e.what());
        return QString::fromStdString(e.what());
    } catch (const std::exception& e) {
        return QStringLiteral("FOREIGN EXCEPTION: %1").arg(e.what());
    }
    return QStringLiteral("NO ERROR THROWN");
}

} // namespace mantissa::test
