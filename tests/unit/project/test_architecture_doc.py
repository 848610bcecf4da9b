"""docs/architecture.md names every module of checker/ (issue 28): its module-by-module list is held to the tree,
so a new module is described there or this fails. Line counts are the reader's guide and are not checked."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
_PACKAGE_LINE = re.compile(r"^(checker/(?:[a-z_]+/)?)(?:([a-z_]+\.py)\s+\d+)?")
_MODULE = re.compile(r"^\s+([a-z_]+\.py)\s+\d+\s")


def listed() -> set[str]:
    """checker/... paths of the doc's module-by-module block."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text.split("## The checker, module by module", 1)[1].split("```", 2)[1]
    out: set[str] = set()
    package = ""
    for line in block.splitlines():
        if m := _PACKAGE_LINE.match(line):
            package = m.group(1)
            if m.group(2):
                out.add(package + m.group(2))
        elif m := _MODULE.match(line):
            out.add(package + m.group(1))
    return out


def _only_a_docstring(path: Path) -> bool:
    body = ast.parse(path.read_text(encoding="utf-8")).body
    return len(body) <= 1 and all(isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) for n in body)


def modules() -> set[str]:
    found = set()
    for path in (ROOT / "checker").rglob("*.py"):
        if path.name == "__init__.py" and _only_a_docstring(path):
            continue  # a subpackage's docstring alone: its line names it
        found.add(path.relative_to(ROOT).as_posix())
    return found


def test_every_checker_module_is_named_in_the_architecture_doc() -> None:
    assert modules() - listed() == set(), "modules the doc does not name"
    assert listed() - modules() == set(), "the doc names modules that are gone"


def test_the_list_is_read_as_written() -> None:
    assert {"checker/__init__.py", "checker/upstream/rcp.py", "checker/rcp/verdict.py"} <= listed()
