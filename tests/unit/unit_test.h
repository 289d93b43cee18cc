// The Qt-free test runner for the core and CLI suites (they build in the headless preset, where
// there is no Qt). It keeps QtTest's shape so a suite reads the same as a GUI suite: a class whose
// public test functions run in order on one instance, optional `name_data()` tables fetched with
// FETCH, initTestCase/cleanupTestCase/init/cleanup hooks, and checks that end the test function on
// the first failure (like QCOMPARE/QVERIFY). Floating-point CHECK_EQ is fuzzy the way QCOMPARE is
// (relative 1e-12 for double, 1e-5 for float; NaN equals NaN); use CHECK(a == b) for bit-exact.
//
//   class TestThing {
//   public:
//       void adds_data() { add_column<int>("a"); new_row("one") << 1; }
//       void adds() { FETCH(int, a); CHECK_EQ(a + a, 2 * a); }
//   };
//   MANTISSA_TEST_MAIN(TestThing, adds)
//
// A test listed in MANTISSA_TEST_MAIN runs; a function not listed does not (keep the list in the
// order of the class). `tst_thing NAME...` runs only the named tests; `tst_thing -functions` lists.
#pragma once

#include <any>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace mantissa::unit {

// ---- what the checks report ----

void record_failure(const char* file, int line, const std::string& message);
void record_skip(const char* file, int line, const std::string& message);
bool current_test_failed();
// The running test's data row name ("" without a data table).
const std::string& current_data_tag();

// A C string (char pointer or array): compared by its characters, as QCOMPARE does, never by
// address.
template <class T>
inline constexpr bool is_c_string_v =
    std::is_same_v<std::decay_t<T>, const char*> || std::is_same_v<std::decay_t<T>, char*>;

// A printable form of a checked value: strings quoted, numbers in full precision, enums as their
// number, anything with operator<< streamed.
template <class T>
std::string describe_value(const T& value) {
    if constexpr (std::is_same_v<T, bool>) {
        return value ? "true" : "false";
    } else if constexpr (is_c_string_v<T>) {
        const char* text = value;
        return text ? "\"" + std::string(text) + "\"" : std::string("nullptr");
    } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
        return "\"" + std::string(std::string_view(value)) + "\"";
    } else if constexpr (std::is_floating_point_v<T>) {
        std::ostringstream out;
        out.precision(std::numeric_limits<T>::max_digits10);
        out << value;
        return out.str();
    } else if constexpr (std::is_enum_v<T>) {
        return std::to_string(static_cast<long long>(value));
    } else if constexpr (requires(std::ostream & out) { out << value; }) {
        std::ostringstream out;
        out << value;
        return out.str();
    } else if constexpr (requires {
                             value.size();
                             value.begin();
                         }) {
        std::string s = "[";
        bool first = true;
        for (const auto& element : value) {
            if (!first) s += ", ";
            first = false;
            s += describe_value(element);
        }
        return s + "]";
    } else {
        return "(a value of type " + std::string(typeid(T).name()) + ")";
    }
}

// QCOMPARE's floating-point rule, so suites keep their meaning when they leave QtTest.
template <class F>
bool fuzzy_equal(F actual, F expected) {
    if (std::isnan(actual) || std::isnan(expected))
        return std::isnan(actual) && std::isnan(expected);
    if (std::isinf(actual) || std::isinf(expected)) return actual == expected;
    const F null_bound = std::is_same_v<F, float> ? F(1e-5) : F(1e-12);
    const F scale = std::is_same_v<F, float> ? F(100000) : F(1000000000000.0);
    if (actual == 0 || expected == 0)
        return std::fabs(actual) <= null_bound && std::fabs(expected) <= null_bound;
    return std::fabs(actual - expected) * scale <=
           std::fmin(std::fabs(actual), std::fabs(expected));
}

template <class A, class B>
bool values_equal(const A& actual, const B& expected) {
    constexpr bool strings = is_c_string_v<A> || is_c_string_v<B>;
    if constexpr (strings && std::is_convertible_v<const A&, std::string_view> &&
                  std::is_convertible_v<const B&, std::string_view>) {
        // Only a pointer can be null (an array, such as a string literal, cannot).
        const bool actual_null = [&] {
            if constexpr (std::is_pointer_v<A>) return actual == nullptr;
            return false;
        }();
        const bool expected_null = [&] {
            if constexpr (std::is_pointer_v<B>) return expected == nullptr;
            return false;
        }();
        if (actual_null || expected_null) return actual_null && expected_null;
        return std::string_view(actual) == std::string_view(expected);
    } else if constexpr (std::is_floating_point_v<A> && std::is_floating_point_v<B>) {
        using F =
            std::conditional_t<std::is_same_v<A, float> && std::is_same_v<B, float>, float, double>;
        return fuzzy_equal<F>(static_cast<F>(actual), static_cast<F>(expected));
    } else if constexpr (std::is_integral_v<A> && std::is_integral_v<B> &&
                         !std::is_same_v<A, bool> && !std::is_same_v<B, bool>) {
        return std::cmp_equal(actual, expected);
    } else {
        return actual == expected;
    }
}

template <class A, class B>
bool compare(const A& actual, const B& expected, const char* actual_text, const char* expected_text,
             const char* file, int line) {
    if (values_equal(actual, expected)) return true;
    record_failure(file, line,
                   std::string("Compared values are not the same\n   Actual   (") + actual_text +
                       "): " + describe_value(actual) + "\n   Expected (" + expected_text +
                       "): " + describe_value(expected));
    return false;
}

inline std::string message_text(const char* message) {
    return message ? message : "";
}
inline std::string message_text(const std::string& message) {
    return message;
}

// ---- data tables (QTest::addColumn / newRow / QFETCH) ----

class DataRow {
public:
    explicit DataRow(std::vector<std::any>* cells) : m_cells(cells) {}
    // String literals become std::string, so a row reads like QtTest's `<< "text"`.
    DataRow& operator<<(const char* text) {
        m_cells->emplace_back(std::string(text));
        return *this;
    }
    template <class T>
    DataRow& operator<<(T&& value) {
        m_cells->emplace_back(std::decay_t<T>(std::forward<T>(value)));
        return *this;
    }

private:
    std::vector<std::any>* m_cells;
};

void add_column_named(const std::string& name);
DataRow new_row(const std::string& name);
// The running row's cell for `column`; a missing column ends the test with a failure naming it.
const std::any& data_cell(const char* column);
[[noreturn]] void bad_fetch(const char* column, const char* wanted, const std::any& held);

template <class T>
void add_column(const std::string& name) {
    add_column_named(name);
}

// The cell as T: exactly T, or a number of another arithmetic type (rows often write `<< 3` for a
// double column).
template <class T>
T fetch(const char* column) {
    const std::any* cell = &data_cell(column);
    if (const T* exact = std::any_cast<T>(cell)) return *exact;
    if constexpr (std::is_arithmetic_v<T>) {
#define MANTISSA_UNIT_TRY(type)                                                                    \
    if (const type* v = std::any_cast<type>(cell)) return static_cast<T>(*v);
        MANTISSA_UNIT_TRY(int)
        MANTISSA_UNIT_TRY(unsigned)
        MANTISSA_UNIT_TRY(long)
        MANTISSA_UNIT_TRY(unsigned long)
        MANTISSA_UNIT_TRY(long long)
        MANTISSA_UNIT_TRY(unsigned long long)
        MANTISSA_UNIT_TRY(double)
        MANTISSA_UNIT_TRY(float)
        MANTISSA_UNIT_TRY(bool)
#undef MANTISSA_UNIT_TRY
    }
    bad_fetch(column, typeid(T).name(), *cell);
}

// ---- registration and the runner ----

struct TestFunction {
    std::string name;
    std::function<void()> data; // empty: no data table
    std::function<void()> run;
};

struct Hooks {
    std::function<void()> init_test_case, cleanup_test_case, init, cleanup;
};

// Runs `functions` (or those named in argv) and returns the number of failed test rows, like
// QTest::qExec.
int run_suite(const char* suite, const std::vector<TestFunction>& functions, const Hooks& hooks,
              int argc, char** argv);

template <class Suite>
Hooks hooks_of(Suite& suite) {
    Hooks h;
    if constexpr (requires { suite.initTestCase(); })
        h.init_test_case = [&] { suite.initTestCase(); };
    if constexpr (requires { suite.cleanupTestCase(); })
        h.cleanup_test_case = [&] { suite.cleanupTestCase(); };
    if constexpr (requires { suite.init(); }) h.init = [&] { suite.init(); };
    if constexpr (requires { suite.cleanup(); }) h.cleanup = [&] { suite.cleanup(); };
    return h;
}

} // namespace mantissa::unit

// ---- the checks: each ends the current test function on failure, as QtTest's do ----

#define CHECK(condition)                                                                           \
    do {                                                                                           \
        if (!static_cast<bool>(condition)) {                                                       \
            ::mantissa::unit::record_failure(__FILE__, __LINE__,                                   \
                                             "'" #condition "' returned FALSE.");                  \
            return;                                                                                \
        }                                                                                          \
    } while (false)

#define CHECK_MSG(condition, message)                                                              \
    do {                                                                                           \
        if (!static_cast<bool>(condition)) {                                                       \
            ::mantissa::unit::record_failure(__FILE__, __LINE__,                                   \
                                             "'" #condition "' returned FALSE. (" +                \
                                                 ::mantissa::unit::message_text(message) + ")");   \
            return;                                                                                \
        }                                                                                          \
    } while (false)

#define CHECK_EQ(actual, expected)                                                                 \
    do {                                                                                           \
        if (!::mantissa::unit::compare((actual), (expected), #actual, #expected, __FILE__,         \
                                       __LINE__))                                                  \
            return;                                                                                \
    } while (false)

#define FAIL_TEST(message)                                                                         \
    do {                                                                                           \
        ::mantissa::unit::record_failure(__FILE__, __LINE__,                                       \
                                         ::mantissa::unit::message_text(message));                 \
        return;                                                                                    \
    } while (false)

#define SKIP_TEST(message)                                                                         \
    do {                                                                                           \
        ::mantissa::unit::record_skip(__FILE__, __LINE__,                                          \
                                      ::mantissa::unit::message_text(message));                    \
        return;                                                                                    \
    } while (false)

#define FETCH(Type, name) Type name = ::mantissa::unit::fetch<Type>(#name)

// ---- MANTISSA_TEST_MAIN(Suite, test1, test2, ...) ----
// A for-each over the listed names (the __VA_OPT__ recursion idiom; up to 256 names).
#define MANTISSA_UNIT_PARENS ()
#define MANTISSA_UNIT_EXPAND(...)                                                                  \
    MANTISSA_UNIT_EXPAND3(                                                                         \
        MANTISSA_UNIT_EXPAND3(MANTISSA_UNIT_EXPAND3(MANTISSA_UNIT_EXPAND3(__VA_ARGS__))))
#define MANTISSA_UNIT_EXPAND3(...)                                                                 \
    MANTISSA_UNIT_EXPAND2(                                                                         \
        MANTISSA_UNIT_EXPAND2(MANTISSA_UNIT_EXPAND2(MANTISSA_UNIT_EXPAND2(__VA_ARGS__))))
#define MANTISSA_UNIT_EXPAND2(...)                                                                 \
    MANTISSA_UNIT_EXPAND1(                                                                         \
        MANTISSA_UNIT_EXPAND1(MANTISSA_UNIT_EXPAND1(MANTISSA_UNIT_EXPAND1(__VA_ARGS__))))
#define MANTISSA_UNIT_EXPAND1(...) __VA_ARGS__
#define MANTISSA_UNIT_FOR_EACH(Suite, ...)                                                         \
    __VA_OPT__(MANTISSA_UNIT_EXPAND(MANTISSA_UNIT_FOR_EACH_STEP(Suite, __VA_ARGS__)))
#define MANTISSA_UNIT_FOR_EACH_STEP(Suite, name, ...)                                              \
    MANTISSA_UNIT_FUNCTION(Suite, name)                                                            \
    __VA_OPT__(MANTISSA_UNIT_FOR_EACH_AGAIN MANTISSA_UNIT_PARENS(Suite, __VA_ARGS__))
#define MANTISSA_UNIT_FOR_EACH_AGAIN() MANTISSA_UNIT_FOR_EACH_STEP

// One entry: the function, and its name_data() table when the suite has one.
#define MANTISSA_UNIT_FUNCTION(Suite, name)                                                        \
    functions.push_back(                                                                           \
        ::mantissa::unit::TestFunction{#name,                                                      \
                                       [&suite]() -> std::function<void()> {                       \
                                           auto data_of = [](auto& s) -> std::function<void()> {   \
                                               if constexpr (requires { s.name##_data(); })        \
                                                   return [&s] { s.name##_data(); };               \
                                               else                                                \
                                                   return {};                                      \
                                           };                                                      \
                                           return data_of(suite);                                  \
                                       }(),                                                        \
                                       [&suite] { suite.name(); }});

#define MANTISSA_TEST_MAIN(Suite, ...)                                                             \
    int main(int argc, char** argv) {                                                              \
        Suite suite;                                                                               \
        std::vector<::mantissa::unit::TestFunction> functions;                                     \
        MANTISSA_UNIT_FOR_EACH(Suite, __VA_ARGS__)                                                 \
        return ::mantissa::unit::run_suite(#Suite, functions, ::mantissa::unit::hooks_of(suite),   \
                                           argc, argv);                                            \
    }
