#!/usr/bin/env python3
"""The import map of Quarry's host crates: which file of a crate uses which other file of it
(by its `use crate::...`, `crate::...` paths, `super::` and `self::` paths), and every circle of
files. A circle is files that reach each other through such uses, directly or not: a module
that uses its own submodules counts only through what it names, so `mod.rs` declaring its
children is no use of them.

Layers are checked too: in the runtime, `policy/` (no instance state) uses nothing of the
sandbox or the WIT versions, and `sandbox/` nothing of the WIT versions (see `LAYERS`).

Usage: scripts/import_map.py [--map] [CRATE_DIR ...] (default: every host/* crate).
Prints the circles and the uses across layers (and with --map every file's uses); exits 1
when a crate has either. `make lint` runs it.
"""

import re
import sys
from pathlib import Path

USE_PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
# A `use` group: `use crate::a::{b, c::d, e::{f, g}}` names a::b, a::c, a::e.
GROUP = re.compile(r"\buse\s+(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^;]*)\}\s*;", re.S)
LINE_COMMENT = re.compile(r"//[^\n]*")
STRING = re.compile(r'"(?:\\.|[^"\\])*"')


def module_of(src: Path, path: Path) -> tuple:
    """The module path of a file: src/a/b.rs and src/a/b/mod.rs are ("a", "b")."""
    rel = path.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def files_of(src: Path) -> dict:
    """Every .rs file of a crate's src by its module path."""
    files = {}
    for path in sorted(src.rglob("*.rs")):
        files[module_of(src, path)] = path
    return files


def owner(files: dict, module: tuple):
    """The file holding `module` (the longest module path of a file that prefixes it)."""
    for length in range(len(module), -1, -1):
        if module[:length] in files:
            return module[:length]
    return None


# Per crate: (a folder, the folders and files its files may not use).
LAYERS = {
    "runtime": [
        ("policy", ("sandbox", "wit", "engine", "plugin")),
        ("sandbox", ("wit", "engine", "plugin")),
    ],
}


def layer_breaches(crate: str, edges: dict) -> list:
    """The uses that point up a layer of `LAYERS`."""
    found = []
    for folder, banned in LAYERS.get(crate, []):
        for module, uses in edges.items():
            if module[:1] != (folder,):
                continue
            for target in uses:
                if target[:1] and target[0] in banned:
                    found.append((module, target))
    return sorted(found)


CHILD = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([a-z_][a-z0-9_]*)\s*;", re.M)
PUB_USE = re.compile(r"\bpub\s+use\s+([^;]+);", re.S)


def reexports(files: dict) -> dict:
    """Names a module file re-exports (`pub use a::b::{C, D}` in lib.rs or a mod.rs), by the
    module path they are reached at, mapped to the module they come from: `crate::C` is a use of
    `a/b`, not of the crate root."""
    found = {}
    for module, path in files.items():
        if path.stem not in ("mod", "lib", "main"):
            continue
        text = LINE_COMMENT.sub("", STRING.sub('""', path.read_text()))
        for spec in PUB_USE.findall(text):
            spec = " ".join(spec.split())
            group = re.match(r"(.*?)::\{(.*)\}$", spec)
            items = []
            if group:
                prefix = group.group(1)
                items = [(prefix, i.strip()) for i in re.split(r",(?![^{]*\})", group.group(2))]
            else:
                prefix, _, last = spec.rpartition("::")
                items = [(prefix, last)]
            for prefix, item in items:
                item = item.split(" as ")[-1].strip() if " as " in item else item
                original = item.split("::")[-1]
                parts = [p for p in prefix.split("::") if p and p not in ("self", "crate")]
                source = module + tuple(parts) if not prefix.startswith("crate") else tuple(parts)
                found[module + (original,)] = source
    return found


def targets(files: dict, here: tuple, text: str, exported: dict):
    """The files `text` (of the file of module `here`) uses."""
    text = LINE_COMMENT.sub("", STRING.sub('""', text))
    # Tests of a file are the file's own business.
    cut = text.find("#[cfg(test)]")
    if cut >= 0:
        text = text[:cut]
    paths = []
    for root, prefix, group in GROUP.findall(text):
        for item in re.split(r",(?![^{]*\})", group):
            item = item.strip()
            if not item or item == "self":
                paths.append((root, prefix))
                continue
            head = re.match(r"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*", item)
            if head:
                paths.append((root, prefix + "::" + head.group(0)))
    text = GROUP.sub("", text)
    paths.extend(USE_PATH.findall(text))
    # A child module this file declares, named bare (`search::search`, `use routes::{a, b}`);
    # re-exports (`pub use child::Item`) are the module tree's face, not uses.
    children = CHILD.findall(text)
    text = PUB_USE.sub("", text)
    for child in children:
        for rest in re.findall(r"(?<![:\w])" + child + r"((?:::[A-Za-z_][A-Za-z0-9_]*)+)", text):
            paths.append(("self", "::" + child + rest))
        for group in re.findall(r"(?<![:\w])" + child + r"::\{([^}]*)\}", text):
            for item in group.split(","):
                item = item.strip().split("::")[0].split(" ")[0]
                if item and item != "self":
                    paths.append(("self", "::" + child + "::" + item))
    found = set()
    for root, rest in paths:
        names = [n for n in rest.split("::") if n]
        if root == "crate":
            module = tuple(names)
        else:
            # `self` is the file's own module (a folder's, for its mod.rs).
            base = here
            if root == "super":
                base = base[:-1]
                while names and names[0] == "super":
                    base, names = base[:-1], names[1:]
            module = base + tuple(names)
        # A name a parent re-exports is a use of the module it comes from.
        for length in range(len(module), 0, -1):
            if module[:length] in exported:
                module = exported[module[:length]]
                break
        target = owner(files, module)
        if target is not None and target != here:
            found.add(target)
    return found


def circles(edges: dict) -> list:
    """The strongly connected components of more than one file (Tarjan)."""
    index, low, on_stack, stack, result = {}, {}, set(), [], []
    counter = [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    sys.setrecursionlimit(10000)
    for node in sorted(edges):
        if node not in index:
            visit(node)
    return result


def name(module: tuple) -> str:
    return "/".join(module) or "lib"


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    show_map = "--map" in sys.argv
    root = Path(__file__).resolve().parent.parent
    crates = [Path(a) for a in args] or sorted((root / "host").iterdir())
    failed = False
    for crate in crates:
        src = crate / "src"
        if not src.is_dir():
            continue
        files = files_of(src)
        exported = reexports(files)
        edges = {}
        for module, path in files.items():
            edges[module] = targets(files, module, path.read_text(), exported)
        found = circles(edges)
        print(f"{crate.name}: {len(files)} files, {sum(len(e) for e in edges.values())} uses, "
              f"{len(found)} circle(s)")
        if show_map:
            for module in sorted(edges):
                uses = ", ".join(name(t) for t in sorted(edges[module]))
                print(f"  {name(module)} -> {uses or '-'}")
        for component in found:
            failed = True
            print("  circle: " + " <-> ".join(name(m) for m in component))
        for module, target in layer_breaches(crate.name, edges):
            failed = True
            print(f"  up a layer: {name(module)} -> {name(target)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
