#!/usr/bin/env python3
"""Code that nvcc compiles for the device must not call the standard bit-counting functions.

nvcc compiles libstdc++'s std::bit_width on a 64-bit unsigned long to the constant 0 in device
code, silently (its __builtin_clzl is no device builtin): on the first H100 run that decoded every
subnormal element code wrongly. The shared arithmetic uses core/hd_bits.h instead. This scans every
file the CUDA kernels compile from shared code (headers with MANTISSA_HD) and every .cu / .cuh, with
comments and string literals blanked, and fails naming each file:line that calls one of those
functions or a __builtin_ bit intrinsic.

Usage: check_hd_headers.py SOURCE_DIR   (ctest: hd_headers)
"""
import pathlib
import re
import sys

FORBIDDEN = re.compile(
    r"\bstd::(bit_width|countl_zero|countl_one|countr_zero|countr_one|popcount|bit_floor|bit_ceil"
    r"|has_single_bit|rotl|rotr|byteswap)\b"
    r"|\b__builtin_(clz|ctz|popcount|ffs|parity|bswap|clrsb)\w*")
COMMENT_OR_STRING = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"', re.S)


def blank(match):
    return re.sub(r"[^\n]", " ", match.group(0))


def main():
    core = pathlib.Path(sys.argv[1]) / "core"
    files = sorted(p for p in core.rglob("*") if p.suffix in (".h", ".cuh", ".cu"))
    scanned, problems = 0, []
    for path in files:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".h" and "MANTISSA_HD" not in text:
            continue
        scanned += 1
        code = COMMENT_OR_STRING.sub(blank, text)
        for number, line in enumerate(code.splitlines(), 1):
            for m in FORBIDDEN.finditer(line):
                problems.append(f"{path.relative_to(core.parent)}:{number}: {m.group(0)}")
    if scanned < 5:
        print(f"hd_headers: only {scanned} files scanned under {core}: wrong source dir?")
        return 1
    for p in problems:
        print(p + ": not safe in CUDA device code; use core/hd_bits.h (mantissa::hd::bit_width)")
    print(f"hd_headers: {scanned} files scanned, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
