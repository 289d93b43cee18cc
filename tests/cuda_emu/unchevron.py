#!/usr/bin/env python3
"""Rewrites a CUDA source's kernel launches for the kernel emulator (tests/cuda_emu).

`kernel<T, F><<<grid, block, shared, stream>>>(a, b)` becomes
`::mantissa_emu::launch("kernel<T, F>", grid, block, shared, stream, [=] { kernel<T, F>(a, b); })`,
which the host compiler accepts: every emulated thread calls the kernel with the same arguments,
copied when the launch is made (as CUDA copies them), so a captured launch replays them.
Everything else is copied unchanged, and each launch keeps its newlines (and a macro's line
continuations), so compiler messages name the source's own lines.

usage: unchevron.py SOURCE.cu OUTPUT.cpp
"""
import sys


def kernel_start(text, end):
    """Where the kernel expression that ends just before `end` starts (identifiers, ::, <...>)."""
    i = end
    while True:
        while i > 0 and (text[i - 1].isspace() or text[i - 1] == "\\"):
            i -= 1
        if i > 0 and text[i - 1] == ">":  # template arguments: match the angle brackets back
            depth = 0
            j = i - 1
            while j >= 0:
                if text[j] == ">":
                    depth += 1
                elif text[j] == "<":
                    depth -= 1
                    if depth == 0:
                        break
                j -= 1
            if j < 0:
                raise ValueError("unbalanced template arguments before a launch")
            i = j
            continue
        j = i
        while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_:"):
            j -= 1
        if j == i:
            raise ValueError("no kernel name before a launch")
        return j


def balanced(text, start, open_char, close_char):
    """Index just past the bracket that closes the one at `start`."""
    depth = 0
    i = start
    while i < len(text):
        if text[i] == open_char:
            depth += 1
        elif text[i] == close_char:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced brackets in a launch")


def rewrite(text):
    out = []
    pos = 0
    while True:
        chevron = text.find("<<<", pos)
        if chevron < 0:
            out.append(text[pos:])
            return "".join(out)
        start = kernel_start(text, chevron)
        close = text.find(">>>", chevron)
        config = text[chevron + 3 : close]
        paren = close + 3
        while text[paren].isspace() or text[paren] == "\\":
            paren += 1
        if text[paren] != "(":
            raise ValueError("a launch without arguments")
        args_end = balanced(text, paren, "(", ")")
        kernel_end = start
        while kernel_end < chevron and not (text[kernel_end].isspace() or text[kernel_end] == "\\"):
            if text[kernel_end] == "<":  # template arguments may hold spaces
                kernel_end = balanced(text, kernel_end, "<", ">")
            else:
                kernel_end += 1
        kernel = text[start:kernel_end]
        name = " ".join(kernel.split())
        out.append(text[pos:start])
        out.append(
            '::mantissa_emu::launch("%s",%s%s,%s[=] { %s%s; })'
            % (name, text[kernel_end:chevron], config, text[close + 3 : paren], kernel,
               text[paren:args_end])
        )
        pos = args_end


def main():
    source, output = sys.argv[1], sys.argv[2]
    with open(source, encoding="utf-8") as f:
        text = f.read()
    result = '#line 1 "%s"\n' % source + rewrite(text)
    with open(output, "w", encoding="utf-8") as f:
        f.write(result)


if __name__ == "__main__":
    main()
