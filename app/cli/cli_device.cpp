// open_cli_device(): progress of a first GPU check as one updating stderr line, then warnings.
#include "app/cli/cli_device.h"

#include <cstdio>
#include <unistd.h>

namespace mantissa::cli {

DeviceChoice open_cli_device(const std::string& device) {
    DeviceOpenOptions options;
    const bool tty = isatty(fileno(stderr)) != 0;
    bool progress_shown = false;
    options.progress = [&](const QualificationProgress& p) {
        // A terminal gets one line rewritten in place; a log gets the start and the verdict only.
        if (tty) {
            std::fprintf(stderr, "\r\033[K%s", p.message.c_str());
            if (p.total > 0) std::fprintf(stderr, " (%d/%d)", p.done, p.total);
            progress_shown = true;
        } else if (p.done == 0 || p.done == p.total) {
            std::fprintf(stderr, "%s\n", p.message.c_str());
        }
    };
    DeviceChoice choice = open_device(device, options);
    if (progress_shown) std::fprintf(stderr, "\n");
    for (const std::string& warning : choice.warnings)
        std::fprintf(stderr, "warning: %s\n", warning.c_str());
    return choice;
}

} // namespace mantissa::cli
