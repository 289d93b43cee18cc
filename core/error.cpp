// mantissa::Error implementation.
// Kept out of line so every library shares one typeinfo for catch sites.
#include "core/error.h"

namespace mantissa {

const char* error_kind_name(ErrorKind kind) {
    switch (kind) {
    case ErrorKind::InvalidArgument:
        return "invalid argument";
    case ErrorKind::Config:
        return "configuration error";
    case ErrorKind::Data:
        return "data error";
    case ErrorKind::Shape:
        return "shape error";
    case ErrorKind::OutOfMemory:
        return "out of memory";
    case ErrorKind::Device:
        return "device error";
    case ErrorKind::Io:
        return "I/O error";
    case ErrorKind::Diverged:
        return "training diverged";
    case ErrorKind::Internal:
        return "internal error";
    }
    return "error";
}

Error::Error(ErrorKind kind, const std::string& message)
    : std::runtime_error(message), m_kind(kind) {}

} // namespace mantissa
