// open_cli_device(): progress of a first GPU check as one updating stderr line, then warnings.
#include "app/cli/cli_device.h"

#include <cstdio>
#include <unistd.h>

#include "core/error.h"

namespace mantissa::cli {

namespace {

// Progress of a GPU check on stderr: a terminal gets one line rewritten in place; a log gets the
// start and the verdict only. `shown` tells the caller to end the rewritten line.
QualificationProgressFn stderr_progress(bool& shown) {
    const bool tty = isatty(fileno(stderr)) != 0;
    return [tty, &shown](const QualificationProgress& p) {
        if (tty) {
            std::fprintf(stderr, "\r\033[K%s", p.message.c_str());
            if (p.total > 0) std::fprintf(stderr, " (%d/%d)", p.done, p.total);
            shown = true;
        } else if (p.done == 0 || p.done == p.total) {
            std::fprintf(stderr, "%s\n", p.message.c_str());
        }
    };
}

} // namespace

DeviceChoice open_cli_device(const std::string& device) {
    DeviceOpenOptions options;
    bool progress_shown = false;
    options.progress = stderr_progress(progress_shown);
    DeviceChoice choice = open_device(device, options);
    if (progress_shown) std::fprintf(stderr, "\n");
    for (const std::string& warning : choice.warnings)
        std::fprintf(stderr, "warning: %s\n", warning.c_str());
    return choice;
}

int run_qualification(const std::string& device) {
    DeviceOpenOptions options;
    bool progress_shown = false;
    options.progress = stderr_progress(progress_shown);
    QualificationRecord record;
    try {
        record = qualify_device(device, options);
    } catch (const Error& err) {
        if (progress_shown) std::fprintf(stderr, "\n");
        if (err.kind() != ErrorKind::Device) throw;
        std::fprintf(stderr, "selftest --qualify: no CUDA device was checked: %s\n", err.what());
        return 3;
    }
    if (progress_shown) std::fprintf(stderr, "\n");
    std::printf("%s: %s\n", record.passed ? "qualified" : "FAILED", record.gpu.describe().c_str());
    std::printf("%d checks in %.1f s", record.cases, record.seconds);
    if (!record.passed)
        std::printf(", %d failed; the first: %s", record.failures, record.first_failure.c_str());
    std::printf("\nrecorded in %s%s\n", QualificationCache::default_path().c_str(),
                record.passed ? " (--device auto will now use this GPU)"
                              : " (--device auto will use the CPU engine on this set-up)");
    return record.passed ? 0 : 1;
}

} // namespace mantissa::cli
