// The Qt-free runner behind tests/unit/unit_test.h: runs each test function (once per data row),
// prints QtTest-style PASS / FAIL! / SKIP lines and a totals line, and returns the failure count.
#include "tests/unit/unit_test.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>

namespace mantissa::unit {
namespace {

// Thrown by a FETCH that cannot be served: the row is broken, so the test function cannot go on.
struct AbortTest : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Row {
    std::string tag;
    std::vector<std::any> cells;
};

struct State {
    std::string suite, function, tag;
    bool failed = false, skipped = false;
    std::vector<std::string> columns; // the current data table
    std::vector<Row> rows;
    const Row* row = nullptr; // the row running now
};

State& state() {
    static State s;
    return s;
}

std::string where() {
    const State& s = state();
    std::string w = s.suite + "::" + s.function + "(";
    if (!s.tag.empty()) w += s.tag;
    return w + ")";
}

// Runs `body`, turning an escaping exception into a failure of the current row.
void guarded(const std::function<void()>& body) {
    try {
        body();
    } catch (const AbortTest&) {
        // already recorded
    } catch (const std::exception& e) {
        record_failure("(unknown)", 0, std::string("Caught unhandled exception: ") + e.what());
    } catch (...) {
        record_failure("(unknown)", 0, "Caught unhandled exception of unknown type");
    }
}

bool selected(const std::string& name, int argc, char** argv) {
    bool any_name = false;
    for (int i = 1; i < argc; ++i) {
        if (argv[i][0] == '-') continue;
        any_name = true;
        if (name == argv[i]) return true;
    }
    return !any_name;
}

} // namespace

void record_failure(const char* file, int line, const std::string& message) {
    State& s = state();
    s.failed = true;
    std::printf("FAIL!  : %s %s\n   Loc: [%s(%d)]\n", where().c_str(), message.c_str(), file, line);
    std::fflush(stdout);
}

void record_skip(const char* file, int line, const std::string& message) {
    State& s = state();
    s.skipped = true;
    std::printf("SKIP   : %s %s\n   Loc: [%s(%d)]\n", where().c_str(), message.c_str(), file, line);
}

bool current_test_failed() {
    return state().failed;
}
const std::string& current_data_tag() {
    return state().tag;
}

void add_column_named(const std::string& name) {
    state().columns.push_back(name);
}

DataRow new_row(const std::string& name) {
    State& s = state();
    s.rows.push_back(Row{name, {}});
    return DataRow(&s.rows.back().cells);
}

const std::any& data_cell(const char* column) {
    const State& s = state();
    for (std::size_t i = 0; i < s.columns.size(); ++i) {
        if (s.columns[i] != column) continue;
        if (!s.row || i >= s.row->cells.size()) break;
        return s.row->cells[i];
    }
    record_failure("(data)", 0, std::string("FETCH: no data for column \"") + column + "\"");
    throw AbortTest(column);
}

void bad_fetch(const char* column, const char* wanted, const std::any& held) {
    record_failure("(data)", 0,
                   std::string("FETCH: column \"") + column + "\" holds a " + held.type().name() +
                       ", not a " + wanted);
    throw AbortTest(column);
}

int run_suite(const char* suite, const std::vector<TestFunction>& functions, const Hooks& hooks,
              int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "-functions") == 0) {
            for (const TestFunction& f : functions) std::printf("%s()\n", f.name.c_str());
            return 0;
        }
    }
    State& s = state();
    s.suite = suite;
    int passed = 0, failed = 0, skipped = 0;
    std::printf("********* Start testing of %s *********\n", suite);

    auto run_phase = [&](const char* name, const std::function<void()>& body) {
        if (!body) return true;
        s.function = name;
        s.tag.clear();
        s.failed = s.skipped = false;
        guarded(body);
        if (s.failed) ++failed;
        return !s.failed && !s.skipped;
    };

    if (run_phase("initTestCase", hooks.init_test_case)) {
        for (const TestFunction& f : functions) {
            if (!selected(f.name, argc, argv)) continue;
            s.columns.clear();
            s.rows.clear();
            s.row = nullptr;
            if (f.data) {
                s.function = f.name + "_data";
                s.tag.clear();
                s.failed = false;
                guarded(f.data);
                if (s.failed) {
                    ++failed;
                    continue;
                }
            }
            std::vector<const Row*> rows;
            for (const Row& r : s.rows) rows.push_back(&r);
            if (!f.data) rows.push_back(nullptr);
            for (const Row* row : rows) {
                s.function = f.name;
                s.row = row;
                s.tag = row ? row->tag : "";
                s.failed = s.skipped = false;
                const auto started = std::chrono::steady_clock::now();
                if (hooks.init) guarded(hooks.init);
                if (!s.failed && !s.skipped) guarded(f.run);
                const bool failed_before_cleanup = s.failed;
                if (hooks.cleanup) guarded(hooks.cleanup);
                if (s.failed || failed_before_cleanup) {
                    ++failed;
                } else if (s.skipped) {
                    ++skipped;
                } else {
                    ++passed;
                    std::printf("PASS   : %s\n", where().c_str());
                }
                // The slow rows by name, so that a suite's time can be traced to its functions
                // (CI's 40 minutes; RELIABILITY.md). Not an assertion: timing is not a test.
                const double seconds =
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
                        .count();
                if (seconds >= 1.0)
                    std::printf("INFO   : %s took %.1f s\n", where().c_str(), seconds);
            }
        }
    }
    run_phase("cleanupTestCase", hooks.cleanup_test_case);
    std::printf("Totals: %d passed, %d failed, %d skipped\n", passed, failed, skipped);
    std::printf("********* Finished testing of %s *********\n", suite);
    std::fflush(stdout);
    return failed;
}

} // namespace mantissa::unit
