// run_process: starts a program with arguments (no shell), optionally with extra environment
// variables, waits up to a timeout and returns its exit status and output (the Qt-free suites'
// QProcess). A crash or a timeout is status -1 with the reason in `err`.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace mantissa::unit {

struct ProcessResult {
    int status = -1; // exit code; -1 when it crashed, could not start or timed out
    std::string out, err;
};

struct ProcessOptions {
    std::vector<std::pair<std::string, std::string>> env; // set (or, with "", keep empty) these
    std::vector<std::string> unset_env;                   // remove these from the environment
    std::string working_dir;                              // "" = the test's own
    int timeout_ms = 300000;
};

ProcessResult run_process(const std::string& program, const std::vector<std::string>& args,
                          const ProcessOptions& options = {});

} // namespace mantissa::unit
