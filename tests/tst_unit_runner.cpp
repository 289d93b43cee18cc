// The Qt-free runner (tests/unit/unit_test.h) tested from outside: it runs the fixture suite
// tests/unit/runner_fixture.cpp, which fails on purpose, and checks its exit status (the number of
// failed rows) and its QtTest-style PASS / FAIL! / SKIP / Totals lines.
#include <string>

#include "tests/unit/files.h"
#include "tests/unit/process.h"
#include "tests/unit/unit_test.h"

using namespace mantissa::unit;

namespace {

ProcessResult run_fixture(const std::vector<std::string>& args = {}) {
    return run_process(MANTISSA_UNIT_FIXTURE_PATH, args);
}

} // namespace

class TestUnitRunner {
public:
    void initTestCase() {
        m_run = run_fixture();
        CHECK_MSG(m_run.status >= 0, m_run.err);
    }

    // failsCheckEq, table(wrong) and wrongFetch(int) fail: the status counts failed rows.
    void exitStatusIsTheFailureCount() { CHECK_EQ(m_run.status, 3); }

    void totalsLine() {
        CHECK_MSG(contains(m_run.out, "Totals: 4 passed, 3 failed, 1 skipped\n"), m_run.out);
    }

    void passLines() {
        for (const char* row : {"passes()", "table(one)", "table(two)", "fuzzyAndThrows()"})
            CHECK_MSG(contains(m_run.out, std::string("PASS   : RunnerFixture::") + row + "\n"),
                      row);
    }

    // The failed CHECK_EQ names both expressions and values and ends the function.
    void failedCheckEq() {
        CHECK_MSG(contains(m_run.out, "FAIL!  : RunnerFixture::failsCheckEq() Compared values are "
                                      "not the same\n   Actual   (2 + 2): 4\n   Expected (5): 5\n"),
                  m_run.out);
        CHECK(contains(m_run.out, "tests/unit/runner_fixture.cpp("));
        CHECK(!contains(m_run.out, "after the failed check"));
    }

    void skipLine() {
        CHECK_MSG(contains(m_run.out, "SKIP   : RunnerFixture::skips() not on this machine\n"),
                  m_run.out);
        CHECK(!contains(m_run.out, "after the skip"));
        CHECK(!contains(m_run.out, "PASS   : RunnerFixture::skips()"));
    }

    // Each row runs once under its own tag; only the wrong one fails.
    void dataRows() {
        CHECK_MSG(contains(m_run.out, "FAIL!  : RunnerFixture::table(wrong) Compared values are "
                                      "not the same\n   Actual   (word): \"four\"\n"),
                  m_run.out);
        CHECK(!contains(m_run.out, "FAIL!  : RunnerFixture::table(one)"));
        CHECK(!contains(m_run.out, "FAIL!  : RunnerFixture::table(two)"));
    }

    void fetchOfTheWrongType() {
        CHECK_MSG(contains(m_run.out,
                           "FAIL!  : RunnerFixture::wrongFetch(int) FETCH: column \"n\" holds a "),
                  m_run.out);
        CHECK(!contains(m_run.out, "fetched "));
    }

    void unlistedFunctionDoesNotRun() { CHECK(!contains(m_run.out, "the unlisted function ran")); }

    // Naming tests on the command line runs only those.
    void namedTestsOnly() {
        const ProcessResult r = run_fixture({"passes", "skips"});
        CHECK_EQ(r.status, 0);
        CHECK_MSG(contains(r.out, "Totals: 1 passed, 0 failed, 1 skipped\n"), r.out);
        CHECK(!contains(r.out, "failsCheckEq"));
    }

    // CHECK_EQ compares C strings by their characters (as QCOMPARE does), never by address: two
    // equal strings in different buffers are equal, different ones are not.
    void cStringsCompareByContent() {
        const std::string a = "fixed", b = "fixed";
        CHECK(a.c_str() != b.c_str());
        CHECK(values_equal(a.c_str(), b.c_str()));
        CHECK(values_equal(a.c_str(), "fixed"));
        CHECK(!values_equal(a.c_str(), "fixe"));
        CHECK(!values_equal(static_cast<const char*>(nullptr), "fixed"));
        CHECK_EQ(describe_value(static_cast<const char*>(nullptr)), std::string("nullptr"));
    }

    void functionsOption() {
        const ProcessResult r = run_fixture({"-functions"});
        CHECK_EQ(r.status, 0);
        CHECK_EQ(split_lines(r.out),
                 (std::vector<std::string>{"passes()", "failsCheckEq()", "skips()", "table()",
                                           "wrongFetch()", "fuzzyAndThrows()"}));
    }

private:
    ProcessResult m_run;
};

MANTISSA_TEST_MAIN(TestUnitRunner, exitStatusIsTheFailureCount, totalsLine, passLines,
                   failedCheckEq, skipLine, dataRows, fetchOfTheWrongType,
                   unlistedFunctionDoesNotRun, namedTestsOnly, cStringsCompareByContent,
                   functionsOption)
