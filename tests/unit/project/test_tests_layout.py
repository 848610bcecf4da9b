"""The tests' layout. Tiers, one folder each (issue 56): unit/ and cli/ are the fast ones (`make test`), differential/
(mlperf-logging's tools and the corpus), install/ (wheel, venv, clone) and browser/ the slow ones (`make test-all`);
every test file lives in one of them, and the fast tiers neither read the corpus nor wait on the session-wide runs of
the reference tools. tests/unit/ mirrors the product's packages (issue 36), and tests/fixtures/ is the one home of
fixtures. A unit test lives in the folder of the package it tests (tests/unit/checker/rcp/ for checker/rcp/), or in
tests/unit/project/ when its subject is the project itself (docs, wheel, sizes, wording)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TESTS = ROOT / "tests"
UNIT = TESTS / "unit"

# the first folder under tests/unit/ and where its package is (`project` has none)
PACKAGES: dict[str, Path] = {
    "core": ROOT / "mlsubmit" / "core",
    "checker": ROOT / "checker",
    "submission": ROOT / "submission",
    "report": ROOT / "mlsubmit" / "report",
    "formats": ROOT / "mlsubmit" / "formats",
    "cli": ROOT / "mlsubmit" / "cli",
}
PROJECT = "project"


def _folders() -> list[Path]:
    return sorted({path.parent.relative_to(UNIT) for path in UNIT.rglob("*.py")})


def _package_of(folder: Path) -> Path | None:
    """The product package a folder of unit tests stands for, or None."""
    if not folder.parts or folder.parts[0] not in PACKAGES:
        return None  # tests/unit/ itself, or a folder named for no package
    package = PACKAGES[folder.parts[0]].joinpath(*folder.parts[1:])
    return package if (package / "__init__.py").is_file() else None


def test_every_unit_test_folder_names_a_package() -> None:
    strays = [str(folder) for folder in _folders()
              if folder != Path(PROJECT) and _package_of(folder) is None]  # fmt: skip
    assert strays == [], f"tests/unit/ folders with no package of that name: {strays}"


def test_no_unit_test_outside_a_package_folder() -> None:
    assert sorted(path.name for path in UNIT.glob("*.py")) == []


def test_fixtures_live_in_tests_fixtures_only() -> None:
    outside = [str(path.relative_to(TESTS)) for path in TESTS.rglob("*fix.py") if path.parent != TESTS / "fixtures"]
    assert outside == []
    assert sorted(path.name for path in TESTS.glob("*.py")) == ["conftest.py"]


def test_the_rule_is_read_as_meant() -> None:
    assert _package_of(Path("checker/rcp")) == ROOT / "checker" / "rcp"
    assert _package_of(Path("core")) == ROOT / "mlsubmit" / "core"
    assert _package_of(Path("checker/nothing")) is None
    assert _package_of(Path("fixtures")) is None


# --- tiers ---------------------------------------------------------------------------------------------------------
TIERS = ("unit", "cli", "differential", "install", "browser")
FAST_TIERS = ("unit", "cli")
# folders under tests/ that hold no test file: helpers, and the example files per finding code (their test is in cli/)
NOT_TIERS = ("fixtures", "examples")
# the corpus and the reference tools' session-wide runs over it (tests/conftest.py), and the helpers that run the
# reference tools or build the installed package: what a fast tier must not wait on
SLOW_FIXTURES = frozenset({"corpus", "reference", "reference_summaries", "rcp_reference"})
SLOW_HELPERS = frozenset({"fixtures.differential", "fixtures.summarizer_run", "fixtures.rcp_reference",
                          "fixtures.installed"})


def _test_files() -> list[Path]:
    return sorted(path.relative_to(TESTS) for path in TESTS.rglob("test_*.py") if "__pycache__" not in path.parts)


def _takes_fixtures(node: ast.FunctionDef) -> bool:
    """A test or a fixture: the functions whose arguments pytest fills with fixtures."""
    return node.name.startswith("test_") or any("fixture" in ast.unparse(d) for d in node.decorator_list)


def _parametrized(node: ast.FunctionDef) -> set[str]:
    """The argument names a parametrize decorator gives values (not fixtures)."""
    names: set[str] = set()
    for deco in node.decorator_list:
        if isinstance(deco, ast.Call) and "parametrize" in ast.unparse(deco.func) and deco.args:
            first = deco.args[0]
            texts = [first] if isinstance(first, ast.Constant) else getattr(first, "elts", [])
            names |= {n.strip() for c in texts if isinstance(c, ast.Constant) for n in str(c.value).split(",")}
    return names


def _slow_uses(source: str) -> list[str]:
    """What in a test module reads the corpus or waits on the reference runs: the `corpus` marker, a slow fixture
    taken as an argument (a fixture of the module's own of that name is its own business), a slow helper imported."""
    tree = ast.parse(source)
    own = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "corpus" and isinstance(node.value, ast.Attribute) \
                and node.value.attr == "mark":
            found.append(f"line {node.lineno}: the corpus marker")
        elif isinstance(node, ast.FunctionDef) and _takes_fixtures(node):
            found += [f"line {node.lineno}: fixture {arg.arg}" for arg in node.args.args
                      if arg.arg in SLOW_FIXTURES - own - _parametrized(node)]
        elif isinstance(node, ast.ImportFrom) and node.module in SLOW_HELPERS:
            found.append(f"line {node.lineno}: from {node.module}")
        elif isinstance(node, ast.Import):
            found += [f"line {node.lineno}: import {a.name}" for a in node.names if a.name in SLOW_HELPERS]
    return found


def test_each_tier_has_its_folder_and_nothing_else_holds_tests() -> None:
    assert all((TESTS / tier).is_dir() for tier in TIERS)
    folders = {path.name for path in TESTS.iterdir() if path.is_dir() and path.name != "__pycache__"}
    assert folders - {*TIERS, *NOT_TIERS} == set(), "folders under tests/ that are no tier"
    assert not (TESTS / "e2e").exists() and not (TESTS / "fuzz").exists()


def test_every_test_file_lives_in_one_tier() -> None:
    strays = [str(path) for path in _test_files() if len(path.parts) < 2 or path.parts[0] not in TIERS]
    assert strays == [], f"test files outside tests/{{{','.join(TIERS)}}}/: {strays}"


def test_the_fast_tiers_neither_read_the_corpus_nor_wait_on_the_reference_runs() -> None:
    slow = {str(path): uses for path in _test_files() if path.parts[0] in FAST_TIERS
            if (uses := _slow_uses((TESTS / path).read_text(encoding="utf-8")))}
    assert slow == {}, "move these tests to tests/differential/ (or tests/install/): " + repr(slow)


def test_the_tier_rule_is_read_as_meant() -> None:
    assert _slow_uses("@pytest.mark.corpus\ndef test_a(tmp_path): pass\n") == ["line 1: the corpus marker"]
    assert _slow_uses("def test_a(corpus, rcp_reference): pass\n") == ["line 1: fixture corpus",
                                                                         "line 1: fixture rcp_reference"]
    assert _slow_uses("def test_a():\n    from fixtures.summarizer_run import ours\n") == \
        ["line 2: from fixtures.summarizer_run"]
    # a module's own fixture named `reference` (a patched function, say) is not the session's reference run
    assert _slow_uses("def reference(): pass\ndef test_a(reference): pass\n") == []
    assert _slow_uses("import pytest\ndef test_a(tmp_path):\n    assert pytest.mark.slow\n") == []
    # a parametrized argument, or a helper's argument, of that name is no fixture
    assert _slow_uses("@pytest.mark.parametrize(('reference', 'x'), [])\ndef test_a(reference, x): pass\n") == []
    assert _slow_uses("def helper(corpus): pass\n") == []
