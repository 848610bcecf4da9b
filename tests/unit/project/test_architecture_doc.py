"""docs/architecture.md is true by test (issues 28, 46): its list of the checker's packages is held to the tree (every
subpackage has a line saying what it holds, every module named there exists; a new module needs no line), every path it
names exists, and it keeps no line counts by hand."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "architecture.md"
_PACKAGE_LINE = re.compile(r"^(checker/(?:[a-z_]+/)?)(?:([a-z_]+\.py))?(\s+\S.*)?$")
_MODULE = re.compile(r"^\s+([a-z_]+\.py)\s+\S")
# a path in backquotes: a file or folder of the repository (globs and placeholders are left out)
_PATH = re.compile(r"`((?:checker|mlsubmit|submission|schemas|systems|tests|tools|examples|docs)/[\w./-]*)`")
# a checker module named from its subpackage (`engine/checks.py`)
_SUB = re.compile(r"`([a-z_]+/[a-z_]+\.py)`")


def _block() -> str:
    return DOC.read_text(encoding="utf-8").split("## The checker, module by module", 1)[1].split("```", 2)[1]


def listed() -> set[str]:
    """checker/... paths of the doc's module-by-module block."""
    out: set[str] = set()
    package = ""
    for line in _block().splitlines():
        if m := _PACKAGE_LINE.match(line):
            package = m.group(1)
            if m.group(2):
                out.add(package + m.group(2))
        elif m := _MODULE.match(line):
            out.add(package + m.group(1))
    return out


def described_packages() -> set[str]:
    """The subpackages with a line of their own that says what they hold."""
    return {m.group(1) for line in _block().splitlines() if (m := _PACKAGE_LINE.match(line)) and not m.group(2)
            and m.group(3)}


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


def test_every_module_the_architecture_doc_names_exists() -> None:
    # The doc describes packages and the modules a newcomer meets first; a new module needs no line (issue 56), but
    # a line may not outlive its module.
    assert listed() - modules() == set(), "the doc names modules that are gone"


def test_every_checker_subpackage_is_described() -> None:
    packages = {p.parent.relative_to(ROOT).as_posix() + "/" for p in (ROOT / "checker").glob("*/__init__.py")}
    packages |= {"checker/tables/"}
    assert packages - described_packages() == set(), "subpackages the doc does not describe"
    assert described_packages() - packages == set(), "the doc describes subpackages that are gone"


def test_every_path_the_doc_names_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    named = {p.rstrip(".") for p in _PATH.findall(text) if not re.search(r"[<>*{]|X\.Y", p)}
    assert sorted(p for p in named if not (ROOT / p).exists()) == []
    tops = ("checker", "mlsubmit", "submission", "tools", "tests")
    short = {p for p in _SUB.findall(text) if p.split("/")[0] not in tops}
    gone = [p for p in short if not any((ROOT / top / p).exists() for top in ("checker", "mlsubmit", "submission"))]
    assert sorted(gone) == []


def test_no_line_counts() -> None:
    counted = [line for line in _block().splitlines() if re.match(r"^\s*\S+\.py\s+\d+\s", line)]
    assert counted == [], "line counts go stale: the list describes, `wc -l` counts"


def test_the_list_is_read_as_written() -> None:
    assert {"checker/__init__.py", "checker/upstream/rcp_adapted.py", "checker/rcp/verdict.py"} <= listed()
    assert {"checker/base/", "checker/engine/", "checker/tables/"} <= described_packages()
