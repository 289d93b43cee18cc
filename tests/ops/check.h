// A tiny test harness for the Qt-free tests (built in the headless preset too): CHECK records a
// failure with its file and line and goes on; main returns test_exit_code().
#pragma once

#include <cstdio>

namespace mantissa::test {

inline int& check_failures() {
    static int failures = 0;
    return failures;
}

inline void check_failed(const char* file, int line, const char* expr, const char* detail) {
    std::fprintf(stderr, "%s:%d: CHECK failed: %s%s%s\n", file, line, expr, detail[0] ? ": " : "",
                 detail);
    ++check_failures();
}

inline int test_exit_code(const char* name) {
    const int failures = check_failures();
    std::printf("%s: %s (%d failure(s))\n", name, failures ? "FAILED" : "passed", failures);
    return failures ? 1 : 0;
}

} // namespace mantissa::test

#define CHECK(expr) CHECK_MSG(expr, "")
#define CHECK_MSG(expr, detail)                                                                    \
    do {                                                                                           \
        if (!(expr)) ::mantissa::test::check_failed(__FILE__, __LINE__, #expr, (detail));          \
    } while (0)
