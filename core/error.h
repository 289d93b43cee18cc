// mantissa::Error: the one exception type the engine throws, with a kind the UI and CLI can act on.
// Messages are for people: they name the file, layer, field or argument and say what to do.
#pragma once

#include <stdexcept>
#include <string>

namespace mantissa {

enum class ErrorKind {
    InvalidArgument, // a bad value passed by the caller (CLI argument, API misuse)
    Config,          // an experiment file or setting that cannot be used
    Data,            // a missing or corrupt dataset file
    Shape,           // a layer stack whose shapes do not fit
    OutOfMemory,     // an allocation the device (or host) could not satisfy
    Device,          // a CUDA / cuBLAS / cuDNN failure or a missing device
    Io,              // a file that could not be read or written
    Diverged,        // training produced a non-finite loss and was stopped
    Internal,        // a broken invariant: a bug in Mantissa
};

const char* error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
public:
    Error(ErrorKind kind, const std::string& message);
    ErrorKind kind() const { return m_kind; }

private:
    ErrorKind m_kind;
};

} // namespace mantissa
