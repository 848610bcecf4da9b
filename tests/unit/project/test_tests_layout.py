"""The tests' layout (issue 36): tests/unit/ mirrors the product's packages, and tests/fixtures/ is the one home of
fixtures. A unit test lives in the folder of the package it tests (tests/unit/checker/rcp/ for checker/rcp/), or in
tests/unit/project/ when its subject is the project itself (docs, wheel, sizes, wording)."""

from __future__ import annotations

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
