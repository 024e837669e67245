#!/usr/bin/env python3
"""Functions longer than a limit (default 100 lines, from `fn` to its closing brace) in Quarry's
Rust sources outside tests: host/*/src and plugins' src, leaving out `#[cfg(test)]` modules
and `tests/`, `benches/` and `examples/` folders.

Usage: scripts/long_functions.py [--max N] [PATH ...]
Prints each long function with its length; exits 1 when there is one. `make lint` runs it.
"""

import re
import sys
from pathlib import Path

FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe|extern\s+\"[^\"]*\")\s+)*fn\s+(\w+)")
CFG_TEST = re.compile(r"^\s*#\[cfg\(test\)\]")


def blank_literals(text: str) -> str:
    """`text` with comments, strings and char literals blanked out (newlines kept), so braces
    inside them do not count."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif re.match(r'b?r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'(b?r)(#*)"', text[i:])
            hashes = m.group(2)
            end = text.find('"' + hashes, i + len(m.group(0)))
            j = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i:j + 1]))
            i = j + 1
        elif c == "'":
            m = re.match(r"'(?:\\(?:u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'\n])'", text[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:  # a lifetime
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def long_functions(path: Path, limit: int):
    text = blank_literals(path.read_text())
    lines = text.split("\n")
    found = []
    skip_until = -1
    for number, line in enumerate(lines):
        if number <= skip_until:
            continue
        if CFG_TEST.match(line):
            # The item after the attribute (a test module or function) is left out whole.
            end = block_end(lines, number + 1)
            if end is not None:
                skip_until = end
            continue
        m = FN.match(line)
        if not m:
            continue
        end = block_end(lines, number)
        if end is None:
            continue
        length = end - number + 1
        if length > limit:
            found.append((number + 1, m.group(1), length))
    return found


def block_end(lines, start):
    """The line where the block opened at or after `start` closes; `None` for an item that ends
    with `;` before any block (a function without a body)."""
    depth = 0
    opened = False
    for number in range(start, len(lines)):
        for c in lines[number]:
            if c == "{":
                depth += 1
                opened = True
            elif c == "}":
                depth -= 1
                if opened and depth == 0:
                    return number
            elif c == ";" and not opened and depth == 0:
                return None
    return None


def sources(root: Path, paths):
    if paths:
        for p in paths:
            yield from (p.rglob("*.rs") if p.is_dir() else [p])
        return
    for src in sorted(root.glob("host/*/src")) + sorted(root.glob("plugins/**/src")):
        if "target" in src.parts or "node_modules" in src.parts:
            continue
        yield from sorted(src.rglob("*.rs"))


def main() -> int:
    args = sys.argv[1:]
    limit = 100
    if "--max" in args:
        at = args.index("--max")
        limit = int(args[at + 1])
        del args[at:at + 2]
    root = Path(__file__).resolve().parent.parent
    failed = False
    for path in sources(root, [Path(a) for a in args]):
        if {"tests", "benches", "examples"} & set(path.relative_to(root).parts if path.is_absolute() else path.parts):
            continue
        for line, name, length in long_functions(path, limit):
            failed = True
            where = path.relative_to(root) if path.is_absolute() else path
            print(f"{where}:{line}: fn {name} is {length} lines (at most {limit})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
