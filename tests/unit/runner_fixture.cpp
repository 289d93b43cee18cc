// A suite that fails on purpose, run by tst_unit_runner to test the Qt-free runner itself: a failed
// CHECK_EQ, a skip, a data table with a failing row, a FETCH of the wrong type, and a function the
// MANTISSA_TEST_MAIN list leaves out. Built as an executable, never registered with ctest (its exit
// status is its failure count, 3). Keep it out of the tests/tst_*.cpp glob.
#include <cstdio>
#include <stdexcept>
#include <string>

#include "tests/unit/check_throws.h"
#include "tests/unit/unit_test.h"

using namespace mantissa::unit;

class RunnerFixture {
public:
    void passes() { CHECK_EQ(1 + 1, 2); }

    // The check ends the function: the line after it must not print.
    void failsCheckEq() {
        CHECK_EQ(2 + 2, 5);
        std::puts("after the failed check");
    }

    void skips() {
        SKIP_TEST("not on this machine");
        std::puts("after the skip");
    }

    // Two rows pass, "wrong" fails.
    void table_data() {
        add_column<int>("n");
        add_column<std::string>("word");
        new_row("one") << 1 << "one";
        new_row("two") << 2 << "two";
        new_row("wrong") << 3 << "four";
    }
    void table() {
        FETCH(int, n);
        FETCH(std::string, word);
        const char* names[] = {"", "one", "two", "three"};
        CHECK_EQ(word, std::string(names[n]));
    }

    // An int column fetched as a string: the row fails, naming the column.
    void wrongFetch_data() {
        add_column<int>("n");
        new_row("int") << 7;
    }
    void wrongFetch() {
        FETCH(std::string, n);
        std::puts(("fetched " + n).c_str());
    }

    // QCOMPARE's fuzzy floating point, and an expected exception.
    void fuzzyAndThrows() {
        CHECK_EQ(0.1 + 0.2, 0.3);
        CHECK_THROWS(std::runtime_error, throw std::runtime_error("expected"));
    }

    // Not in the MANTISSA_TEST_MAIN list below: it must not run.
    void notListed() { std::puts("the unlisted function ran"); }
};

MANTISSA_TEST_MAIN(RunnerFixture, passes, failsCheckEq, skips, table, wrongFetch, fuzzyAndThrows)
