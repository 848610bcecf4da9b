"""checker/__init__.py, the checker's public API (issue 36): a short list of names, plainly imported, and a documented
list of public modules. docs/architecture.md ("The checker's public API"), `__all__` and pyproject.toml's
import-linter contract say the same thing; these tests hold them equal. The contract forbids every checker module
but the public ones, so only a new public module is written down."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import mlsubmit.checker as api

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "architecture.md"
CONTRACT = "the command line, formats, report and submission use the checker's public API, never its other modules"


def _section() -> str:
    return DOC.read_text(encoding="utf-8").split("## The checker's public API", 1)[1].split("\n## ", 1)[0]


def documented_names() -> list[str]:
    names = _section().split("Names (", 1)[1].split("Public modules", 1)[0]
    return re.findall(r"^- `(\w+)`: ", names, re.M)


def documented_modules() -> set[str]:
    modules = _section().split("Public modules", 1)[1]
    return {f"mlsubmit.checker.{m}" for m in re.findall(r"^- `([\w.]+)`: ", modules, re.M)}


def checker_modules() -> set[str]:
    out = set()
    for path in (ROOT / "checker").rglob("*.py"):
        parts = path.relative_to(ROOT / "checker").with_suffix("").parts
        out.add(".".join(("mlsubmit", "checker", *(parts[:-1] if parts[-1] == "__init__" else parts))))
    return out


def imported_by_the_layers_above() -> set[str]:
    """The checker modules that mlsubmit/ and submission/ import (a `from X import name` counts as X, unless `name`
    is a module of X)."""
    modules, out = checker_modules(), set()
    for top in ("mlsubmit", "submission"):
        for path in (ROOT / top).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mlsubmit.checker"):
                    for alias in node.names:
                        name = f"{node.module}.{alias.name}"
                        out.add(name if name in modules else str(node.module))
    return out


def _contract() -> dict[str, list[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract: dict[str, list[str]] = next(c for c in config["tool"]["importlinter"]["contracts"]
                                          if c["name"] == CONTRACT)
    return contract


def let_through() -> set[str]:
    """The modules the contract's ignore_imports let the layers above import: `mlsubmit.** -> <module>`."""
    return {line.split(" -> ", 1)[1] for line in _contract().get("ignore_imports", [])}


def test_the_documented_names_are_the_modules_names() -> None:
    assert sorted(documented_names()) == sorted(api.__all__)
    assert len(api.__all__) <= 25
    for name in api.__all__:
        assert getattr(api, name) is not None, name


def test_every_name_is_documented_in_the_module_too() -> None:
    text = (ROOT / "checker" / "__init__.py").read_text(encoding="utf-8")
    for name in api.__all__:
        assert re.search(rf'^    "{name}",  # \S', text, re.M), f"{name} has no comment in __all__"


def test_the_documented_public_modules_are_the_ones_used() -> None:
    assert imported_by_the_layers_above() - {"mlsubmit.checker"} == documented_modules()


def test_the_contract_forbids_every_checker_module_but_the_public_ones() -> None:
    """Deny by default: every module of a checker subpackage is forbidden to the layers above, and the public ones
    alone are let through, so a new private module needs no line anywhere (issue 56)."""
    assert _contract()["forbidden_modules"] == ["mlsubmit.checker.*.*"]
    assert all(line.startswith("mlsubmit.** -> ") for line in _contract()["ignore_imports"])
    assert let_through() == documented_modules()


def test_a_module_is_still_reachable_as_a_submodule_import() -> None:
    from mlsubmit.checker import rcp

    assert rcp.__name__ == "mlsubmit.checker.rcp"
