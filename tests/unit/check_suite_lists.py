#!/usr/bin/env python3
"""Every test function of a Qt-free suite must be listed in its MANTISSA_TEST_MAIN.

The runner (tests/unit/unit_test.h) runs only the functions named in MANTISSA_TEST_MAIN(Suite, ...),
so a test added to the class but not to the list would silently never run (QtTest found slots by
itself). For every tests/tst_*.cpp with MANTISSA_TEST_MAIN this parses the suite class's public
`void name()` functions (declared or defined inline; *_data tables and the initTestCase /
cleanupTestCase / init / cleanup hooks excluded) and fails naming each function missing from the
list, and each listed name the class does not declare.

Usage: check_suite_lists.py TESTS_DIR   (ctest: unit_suite_lists)
"""
import glob
import os
import re
import sys

HOOKS = {"initTestCase", "cleanupTestCase", "init", "cleanup"}


def strip_comments_and_strings(text):
    """Comments and string/char literals blanked out (newlines kept), so braces in them don't count."""
    pattern = re.compile(
        r'//[^\n]*|/\*.*?\*/|R"(?P<delim>[^(\s]*)\(.*?\)(?P=delim)"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
        re.S)

    def blank(m):
        s = m.group(0)
        if s.startswith('"') or s.startswith("R\""):
            return '""'
        if s.startswith("'"):
            return "' '"
        return re.sub(r"[^\n]", " ", s)

    return pattern.sub(blank, text)


def matching(text, open_at, open_ch, close_ch):
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == open_ch:
            depth += 1
        elif text[i] == close_ch:
            depth -= 1
            if depth == 0:
                return i
    return -1


def top_level(body):
    """The class body with every nested {...} block removed (function bodies, initialisers)."""
    out, depth = [], 0
    for ch in body:
        if ch == "{":
            if depth == 0:
                out.append(";")
            depth += 1
        elif ch == "}":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def listed_tests(code):
    """(suite, [names]) from the MANTISSA_TEST_MAIN(...) invocation, or None."""
    m = re.search(r"^MANTISSA_TEST_MAIN\s*\(", code, re.M)
    if not m:
        return None
    close = matching(code, m.end() - 1, "(", ")")
    args = [a.strip() for a in code[m.end():close].split(",")]
    args = [a for a in args if a]
    return args[0], args[1:]


def declared_tests(code, suite):
    """The public `void name()` test functions of `class suite`, or None when it is not found."""
    m = re.search(r"\b(class|struct)\s+%s\b[^;{]*\{" % re.escape(suite), code)
    if not m:
        return None
    close = matching(code, m.end() - 1, "{", "}")
    body = top_level(code[m.end():close])
    access = "public" if m.group(1) == "struct" else "private"
    names = []
    for token in re.finditer(r"\b(public|private|protected)\s*:(?!:)|\bvoid\s+(\w+)\s*\(\s*(void\s*)?\)",
                             body):
        if token.group(1):
            access = token.group(1)
        elif access == "public":
            name = token.group(2)
            if name.endswith("_data") or name in HOOKS:
                continue
            names.append(name)
    return names


def check_source(path, code):
    """Problems found in one suite's source (empty: its list is complete)."""
    code = strip_comments_and_strings(code)
    listed = listed_tests(code)
    if listed is None:
        return []
    suite, names = listed
    declared = declared_tests(code, suite)
    if declared is None:
        return ["%s: MANTISSA_TEST_MAIN names class %s, which is not defined here" % (path, suite)]
    problems = []
    for name in declared:
        if name not in names:
            problems.append("%s: %s::%s() is a test function but is not in MANTISSA_TEST_MAIN, "
                            "so it never runs" % (path, suite, name))
    for name in names:
        if name not in declared:
            problems.append("%s: MANTISSA_TEST_MAIN lists %s, which %s does not declare as a "
                            "public void %s()" % (path, name, suite, name))
    seen = set()
    for name in names:
        if name in seen:
            problems.append("%s: MANTISSA_TEST_MAIN lists %s twice" % (path, name))
        seen.add(name)
    if not declared:
        problems.append("%s: found no test function in %s (the parser may be broken)" % (path, suite))
    return problems


def self_check():
    """The parser must catch what it exists to catch; a checker that finds nothing proves nothing."""
    sample = """
class TestSample {
    void privateHelper();
public:
    void first_data() { add_column<int>("x"); new_row("a{") << 1; }
    void first() { if (true) { CHECK(1); } }
    void initTestCase() {}
    // void commented();
    void second();
    void forgotten() { const char* s = "}"; (void)s; }
private:
    void notATest() {}
};
MANTISSA_TEST_MAIN(TestSample, first, second, ghost)
"""
    problems = check_source("sample", sample)
    expected = ["TestSample::forgotten() is a test function", "lists ghost, which"]
    ok = len(problems) == 2 and all(any(e in p for p in problems) for e in expected)
    if not ok:
        print("check_suite_lists: the self-check failed; problems found in the sample: %r" % problems)
    return ok


def main():
    tests_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    if not self_check():
        return 1
    suites, problems = 0, []
    for path in sorted(glob.glob(os.path.join(tests_dir, "tst_*.cpp"))):
        with open(path, encoding="utf-8") as f:
            code = f.read()
        if not re.search(r"^MANTISSA_TEST_MAIN\s*\(", code, re.M):
            continue
        suites += 1
        problems += check_source(os.path.relpath(path, tests_dir), code)
    for p in problems:
        print("FAIL: " + p)
    if suites == 0:
        print("FAIL: no tst_*.cpp with MANTISSA_TEST_MAIN under %s" % tests_dir)
        return 1
    print("%d Qt-free suites checked, %d problems" % (suites, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
