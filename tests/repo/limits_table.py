#!/usr/bin/env python3
"""Prints the Markdown table of sgdsim's guarded input limits from sim/core/limits.hpp.

Each limit there is one `inline constexpr` constant with a `///` comment: "what: value, why".
The table has one row per constant: what is limited (the comment before its first colon), the
constant's name and value (computed from its C++ initializer), and the rest of the comment.
docs/hardening.md embeds the output in a docs-check block, so the table follows the header.

usage: tests/repo/limits_table.py [HEADER]   (default: sim/core/limits.hpp)
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONST = re.compile(r"^inline constexpr [\w:]+ (k\w+) = (.+);$")


def value_of(expr):
    """The value of a constant's initializer: numbers, `uint64_t{N}` and shifts."""
    py = re.sub(r"u?int\d+_t\{(\d+)\}", r"\1", expr).replace("'", "")
    if not re.fullmatch(r"[\d.eE+\-<> ()*]+", py):
        raise ValueError(f"cannot evaluate {expr!r}")
    return eval(py)  # digits and operators only (checked above)


def shown(v):
    """1,000 / 4 GiB (2^32) / 2^48 / 10^9 / 0.5: how the docs write a value."""
    if isinstance(v, float) and not v.is_integer():
        return f"{v:g}"
    v = int(v)
    if v >= 1024 and v & (v - 1) == 0:
        exp = v.bit_length() - 1
        for shift, unit in ((30, "GiB"), (20, "MiB")):
            if shift <= exp < shift + 10:
                return f"{v >> shift} {unit} (2^{exp})"
        return f"2^{exp}"
    if v >= 10**6 and str(v).rstrip("0") == "1":
        return f"10^{len(str(v)) - 1}"
    return f"{v:,}"


def rows(path):
    comment = []
    for raw in open(path, encoding="utf-8"):
        line = raw.strip()
        if line.startswith("///"):
            comment.append(line[3:].strip())
            continue
        m = CONST.match(line)
        if m and comment:
            text = " ".join(comment)
            what, _, why = text.partition(": ")
            yield what, m.group(1), shown(value_of(m.group(2))), why
        comment = []


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "sim", "core", "limits.hpp")
    table = list(rows(path))
    if not table:
        sys.exit(f"limits_table.py: no documented constant in {path}")
    print("| limit | constant | value | value and why |")
    print("|---|---|---|---|")
    for what, name, value, why in table:
        print(f"| {what} | `{name}` | {value} | {why.replace('|', '/')} |")


if __name__ == "__main__":
    main()
