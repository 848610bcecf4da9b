"""Registry = catalogue = emitters (issue 46, issue 56): each check declares the codes it may emit beside it (a
`CODES` constant in its module), each command other than `check` in the registry's COMMAND_CODES; the catalogue's
view of who emits a code is worked out from those declarations (`emitters`), and every code is written in the
module that emits it, so adding a code needs no number range anywhere and no list kept by hand in the catalogue."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from mlsubmit.checker.base.contract import may_emit
from mlsubmit.checker.engine import checks

from mlsubmit.core.codes import catalogue

ROOT = Path(__file__).resolve().parents[4]
CODE = re.compile(r"^[A-Z]{2,4}\d{3}$")


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


def test_every_catalogued_code_is_declared_by_a_check_or_command_or_retired() -> None:
    undeclared = set(catalogue()) - checks.registered_codes()
    assert sorted(undeclared) == sorted(checks.RETIRED), "codes no check or command declares (CODES)"
    assert sorted(checks.registered_codes() - set(catalogue())) == [], "declared codes the catalogue lacks"


def test_the_catalogues_emitters_are_derived_from_the_declarations() -> None:
    for code in catalogue():
        names = checks.emitters(code)
        assert bool(names) != (code in checks.RETIRED), code
        assert set(names) <= checks.names() | set(checks.COMMANDS)
        assert all(code in checks.emitted_by(name) for name in names)
    assert checks.emitters("TREE007") == ("results-folders", "reference-tree", "run-sets")
    assert checks.emitters("PKG045") == ("package", "verify")
    assert checks.emitters("TREE029") == ()
    assert checks.emitters("SYS016") == ("systems",)  # a family declared whole ("SYS"), read from the catalogue
    assert checks.command_codes()["review"] == {code for code in catalogue() if code.startswith("REV")}


def test_the_policy_sees_the_declarations_without_the_engine() -> None:
    assert may_emit("rules", "RULE004") and may_emit("hyperparameters", "RULE001")
    assert not may_emit("read", "RULE004") and not may_emit("nosuch", "RULE004")
    assert may_emit("read", "LOG011") and may_emit("systems", "SYS049")  # whole families: no catalogue read


def test_the_catalogue_files_hold_no_hand_written_emitters() -> None:
    for path in (ROOT / "mlsubmit" / "core" / "codes").glob("*.yaml"):
        assert "emitted_by" not in path.read_text(encoding="utf-8"), path.name


def test_every_code_is_written_where_it_is_emitted() -> None:
    written = _literal_codes()
    assert sorted(set(catalogue()) - set(written) - checks.RETIRED) == [], "codes no product module writes"
    assert set(catalogue()) >= checks.RETIRED
    assert sorted(set(written) - set(catalogue())) == [], "codes written in the product but not catalogued"


def test_a_check_emits_its_codes_and_a_preparation_none() -> None:
    assert checks.check("read", "log").emits("LOG004")
    assert not checks.check("read", "log").emits("TREE001")
    assert checks.check("layout", "org").emits("TREE001")
    assert not checks.check("layout", "prepare").emits("TREE001")
    assert checks.check("hygiene", "code").codes == frozenset()
    assert not checks.check("results-folders", "org").emits("NOPE001")


def test_every_org_check_may_report_what_it_cannot_read() -> None:
    for (_, stage), check in checks.CHECKS.items():
        assert check.emits("TREE048") or stage != "org", check
