// run_cli: runs the real mantissa-cli binary (MANTISSA_CLI_PATH, set by tests/CMakeLists.txt) for
// the CLI suites and returns its exit status and output.
#pragma once

#include <string>
#include <vector>

#include "tests/unit/process.h"

namespace mantissa::unit {

inline ProcessResult run_cli(const std::vector<std::string>& args,
                             const ProcessOptions& options = {}) {
    return run_process(MANTISSA_CLI_PATH, args, options);
}

} // namespace mantissa::unit
