// POSIX implementation of the atomic write (open O_EXCL, write, fsync, rename) and of read_file.
// Raw file descriptors instead of iostreams because iostreams cannot fsync or report errno.
#include "core/io/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <random>
#include <unistd.h>

#include "core/error.h"

namespace mantissa {
namespace {

[[noreturn]] void io_fail(const std::string& what, const std::string& path, int err) {
    throw Error(ErrorKind::Io, what + " '" + path + "': " + std::strerror(err));
}

std::string temp_name_for(const std::string& path) {
    std::random_device rd;
    char suffix[64];
    std::snprintf(suffix, sizeof suffix, ".tmp-%ld-%08x", static_cast<long>(::getpid()),
                  static_cast<unsigned>(rd()));
    return path + suffix;
}

// Removes the temp file on every exit path unless the rename has taken it over.
struct TempGuard {
    std::string path;
    int fd = -1;
    bool committed = false;
    ~TempGuard() {
        if (fd >= 0) ::close(fd);
        if (!committed) ::unlink(path.c_str());
    }
};

} // namespace

void write_file_atomic(const std::string& path, std::string_view contents) {
    write_file_atomic(path, [contents](const ByteSink& sink) { sink(contents); });
}

void write_file_atomic(const std::string& path,
                       const std::function<void(const ByteSink&)>& produce) {
    if (path.empty()) throw Error(ErrorKind::Io, "cannot write a file with an empty path");
    const std::string temp = temp_name_for(path);
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) io_fail("cannot write", path, errno);
    TempGuard guard{temp, fd};

    const ByteSink sink = [&](std::string_view bytes) {
        const char* p = bytes.data();
        std::size_t left = bytes.size();
        while (left > 0) {
            const ssize_t n = ::write(fd, p, left);
            if (n < 0) {
                if (errno == EINTR) continue;
                io_fail("cannot write", path, errno);
            }
            p += n;
            left -= static_cast<std::size_t>(n);
        }
    };
    produce(sink);
    // Without fsync a crash after the rename can leave an empty file under the new name.
    if (::fsync(fd) != 0) io_fail("cannot write", path, errno);
    const int fd_to_close = guard.fd;
    guard.fd = -1;
    if (::close(fd_to_close) != 0) io_fail("cannot write", path, errno);
    if (::rename(temp.c_str(), path.c_str()) != 0) io_fail("cannot replace", path, errno);
    guard.committed = true;

    // Make the rename itself durable; a failure here cannot undo a completed write, so ignore it.
    std::filesystem::path dir = std::filesystem::path(path).parent_path();
    std::error_code ec; // a vanished working folder only skips the directory fsync
    if (dir.empty()) dir = std::filesystem::current_path(ec);
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
}

std::string read_file(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) io_fail("cannot read", path, errno);
    std::string out;
    char buf[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            ::close(fd);
            io_fail("cannot read", path, err);
        }
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return out;
}

} // namespace mantissa
