#!/usr/bin/env python3
"""No function in sim/ or models/ is longer than --max lines (default 80), counted from the
first line of its signature to its closing brace. A function is a brace block opened at
namespace or class scope after a parameter list; lambdas and local classes count as part of
the function that holds them.

usage: function_length.py ROOT [--max N]   (exit 1 and one line per long function)
       function_length.py --selftest       (shows the check fails on a planted long function)
"""
import pathlib
import re
import sys
import tempfile

TOKENS = re.compile(r'//[^\n]*|/\*.*?\*/|R"(\w*)\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|'
                    r"'(?:\\.|[^'\\\n])*'|[{};]|\n", re.S)


def functions(text):
    """Yields (first line, last line, signature) of every function definition."""
    line, start_of_stmt, stmt = 1, 1, ""
    stack = []  # (kind, start line, signature)
    pos = 0
    for m in TOKENS.finditer(text):
        chunk = text[pos:m.start()]
        pos = m.end()
        tok = m.group(0)
        if stmt.strip() == "" and chunk.strip():
            start_of_stmt = line + chunk[: len(chunk) - len(chunk.lstrip())].count("\n")
        stmt += chunk
        if tok.startswith(("//", "/*", '"', "'", 'R"')):
            line += tok.count("\n")
            stmt += " " if not tok.startswith('"') else '""'
            continue
        if tok == "\n":
            line += 1
            stmt += " "
            continue
        outer = stack[-1][0] if stack else "namespace"
        if tok == "{":
            head = stmt.strip()
            if outer in ("namespace", "type"):
                if re.search(r"\bnamespace\b", head) or head.startswith("extern"):
                    kind = "namespace"
                elif re.match(r"(template\s*<.*>\s*)?(class|struct|union|enum)\b", head) and "(" not in head.split("{")[0].split(":")[0]:
                    kind = "type"
                elif "(" in head and not head.endswith("=") and "=" not in head.split("(")[0]:
                    kind = "function"
                else:
                    kind = "other"
            else:
                kind = "block"
            stack.append((kind, start_of_stmt, head[:90]))
            stmt = ""
        elif tok == "}":
            if stack:
                kind, first, sig = stack.pop()
                if kind == "function":
                    yield first, line, sig
            stmt = ""
        elif tok == ";":
            stmt = ""
    return


def check(root, limit):
    found = []
    for base in ("sim", "models"):
        for p in sorted((root / base).rglob("*")):
            if p.suffix not in (".cpp", ".hpp"):
                continue
            for first, last, sig in functions(p.read_text()):
                n = last - first + 1
                if n > limit:
                    found.append((n, f"{p.relative_to(root)}:{first}", sig))
    for n, where, sig in sorted(found, reverse=True):
        print(f"function_length: {where}: {n} lines (max {limit}): {sig}")
    return 1 if found else 0


def selftest():
    with tempfile.TemporaryDirectory() as d:
        root = pathlib.Path(d)
        (root / "sim/x").mkdir(parents=True)
        (root / "models").mkdir()
        body = "\n".join(f"  int v{i} = {i};  // {{ not a brace" for i in range(79))
        ok = f'namespace a {{\nstruct S {{\n  int f() const {{\n{body}\n  }}\n}};\n}}\n'
        (root / "sim/x/ok.cpp").write_text(ok)
        if check(root, 81) != 0:
            print("selftest: an 81-line function was refused at --max 81")
            return 1
        if check(root, 80) == 0:
            print("selftest: an 81-line method was not found at --max 80")
            return 1
    print("selftest: function_length.py finds a planted 81-line method")
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if args == ["--selftest"]:
        sys.exit(selftest())
    limit = int(args[args.index("--max") + 1]) if "--max" in args else 80
    sys.exit(check(pathlib.Path(args[0] if args else "."), limit))
