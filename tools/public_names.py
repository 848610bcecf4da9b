"""The package's public names and how many of them are one word (issue 56 item 5: names that say what they hold).

    python tools/public_names.py [--list] [ROOT]     # ROOT: a checkout (default: this one)

A public name is one a module offers, read from the source (nothing is imported): a module-level function, class or
constant (an UPPER_CASE assignment), and a method of a public class, each not starting with `_`. Modules are those
of mlsubmit/, checker/ and submission/. One word: no `_` in a snake_case or UPPER_CASE name (`check`, `CODES`), one
capitalised word in a class name (`Policy`, not `RcpResult`). `--list` prints each one-word name with its place.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

SOURCES = ("mlsubmit", "checker", "submission")
CONSTANT = re.compile(r"[A-Z][A-Z0-9_]*")
ONE_CLASS_WORD = re.compile(r"[A-Z][a-z0-9]*|[A-Z][A-Z0-9]*")

Name = tuple[str, int, str]  # path, line, qualified name


def _assigned(node: ast.stmt) -> list[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return [t.id for t in targets if isinstance(t, ast.Name)]


def _methods(cls: ast.ClassDef) -> Iterator[tuple[int, str]]:
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            yield node.lineno, f"{cls.name}.{node.name}"


def public_names(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """(line, name) of the module's public names; a method is `Class.method`."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
            yield node.lineno, node.name
            if isinstance(node, ast.ClassDef):
                yield from _methods(node)
        for name in _assigned(node):
            if CONSTANT.fullmatch(name):
                yield node.lineno, name


def is_one_word(qualified: str) -> bool:
    name = qualified.rpartition(".")[2]
    if name[0].isupper() and not CONSTANT.fullmatch(name):
        return bool(ONE_CLASS_WORD.fullmatch(name))
    return "_" not in name


def every_name(root: Path) -> list[Name]:
    out = []
    for top in SOURCES:
        for path in sorted((root / top).rglob("*.py")):
            shown = path.relative_to(root).as_posix()
            for line, name in public_names(ast.parse(path.read_text(encoding="utf-8"), shown)):
                out.append((shown, line, name))
    return out


def main(argv: list[str]) -> int:
    args = [a for a in argv[1:] if a != "--list"]
    root = Path(args[0]) if args else Path(__file__).resolve().parents[1]
    names = every_name(root)
    single = [n for n in names if is_one_word(n[2])]
    if "--list" in argv:
        for path, line, name in single:
            print(f"{path}:{line}: {name}")
    print(f"public names {len(names)}; one word {len(single)} ({100 * len(single) / max(len(names), 1):.0f} %)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
