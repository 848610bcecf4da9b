"""Registry = catalogue = emitters (issue 46): each code's catalogue entry names the checks and commands that emit it
(`emitted_by`), the registry takes a check's codes from there, and every code is written in the module that emits
it, so adding a code needs no number range anywhere."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from mlsubmit.checker.engine import checks

from mlsubmit.core.codes import catalogue

ROOT = Path(__file__).resolve().parents[4]
CODE = re.compile(r"^[A-Z]{2,4}\d{3}$")
# Catalogued but emitted no more: kept so that old reports and waivers are still explained (docs/tree-checks.md).
RETIRED = {"TREE029"}


def _literal_codes() -> dict[str, set[str]]:
    """Code-shaped string constants in the product's modules (the codes they emit or name), by module."""
    out: dict[str, set[str]] = {}
    for top in ("checker", "mlsubmit", "submission"):
        for path in (ROOT / top).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and CODE.match(node.value):
                    out.setdefault(node.value, set()).add(path.relative_to(ROOT).as_posix())
    for path in (ROOT / "schemas").glob("system-*.schema.json"):  # the system schemas name theirs as data
        for code in re.findall(r'"([A-Z]{2,4}\d{3})"', path.read_text(encoding="utf-8")):
            out.setdefault(code, set()).add(path.relative_to(ROOT).as_posix())
    return out


def test_every_code_names_a_registered_emitter() -> None:
    known = checks.names() | set(checks.COMMANDS)
    for code, entry in catalogue().items():
        assert entry.emitted_by, f"{code}: its catalogue entry names no check or command (emitted_by)"
        assert set(entry.emitted_by) <= known, f"{code}: emitted_by names {set(entry.emitted_by) - known}"


def test_the_registry_is_the_catalogue() -> None:
    assert checks.registered_codes() == set(catalogue())


def test_every_code_is_written_where_it_is_emitted() -> None:
    written = _literal_codes()
    assert sorted(set(catalogue()) - set(written) - RETIRED) == [], "codes no product module writes"
    assert set(catalogue()) >= RETIRED
    assert sorted(set(written) - set(catalogue())) == [], "codes written in the product but not catalogued"


def test_a_check_emits_its_codes_and_a_preparation_none() -> None:
    assert checks.check("read", "log").emits("LOG004")
    assert not checks.check("read", "log").emits("TREE001")
    assert not checks.check("tree", "prepare").emits("TREE001")
    assert checks.check("tree", "prepare").codes == frozenset()
    assert not checks.check("tree", "org").emits("NOPE001")
