"""Shipped YAML is validated on load; a validated copy lets later processes skip the YAML parse and jsonschema."""

from __future__ import annotations

import importlib.resources
from pathlib import Path

import pytest

import mlsubmit.core.support.schema_loader as schema_loader
from mlsubmit.core.support.datafiles import CACHE_ENV, _read_copy, _store, cache_dir, load_validated
from mlsubmit.core.support.schema_loader import SchemaError

SCHEMA = "codes.schema.json"


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A valid data file: a copy of the shipped REP code family."""
    path = tmp_path / "rep.yaml"
    path.write_bytes(importlib.resources.files("mlsubmit.core").joinpath("codes/rep.yaml").read_bytes())
    return path


@pytest.fixture
def copies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "copies"
    monkeypatch.setenv(CACHE_ENV, str(folder))
    return folder


def _count_validations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = schema_loader.validate_or_raise

    def counting(data: object, schema: dict[str, object], *, what: str) -> None:
        calls.append(what)
        real(data, schema, what=what)

    monkeypatch.setattr(schema_loader, "validate_or_raise", counting)
    return calls


def test_second_load_uses_the_copy_without_validating(
    source: Path, copies: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _count_validations(monkeypatch)
    first = load_validated(source, SCHEMA, what="rep.yaml")
    assert calls == ["rep.yaml"]
    assert len(list(copies.glob("*.json"))) == 1
    assert load_validated(source, SCHEMA, what="rep.yaml") == first
    assert calls == ["rep.yaml"]  # the copy answered


def test_an_edited_file_is_validated_again(source: Path, copies: Path) -> None:
    load_validated(source, SCHEMA, what="rep.yaml")
    source.write_text(source.read_text() + "\nunexpected: field\n")
    with pytest.raises(SchemaError, match=r"rep\.yaml"):
        load_validated(source, SCHEMA, what="rep.yaml")


def test_a_damaged_copy_is_ignored_and_replaced(source: Path, copies: Path) -> None:
    data = load_validated(source, SCHEMA, what="rep.yaml")
    (copy,) = copies.glob("*.json")
    copy.write_text('{"family": "REP", "co')
    assert load_validated(source, SCHEMA, what="rep.yaml") == data
    assert _read_copy(copy) == data
    assert [p.name for p in copies.iterdir() if p.name.startswith(".tmp-")] == []


def test_an_unusable_cache_location_still_loads(source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(CACHE_ENV, str(blocker / "copies"))
    assert load_validated(source, SCHEMA, what="rep.yaml")["family"] == "REP"


def test_off_validates_every_time_and_writes_nothing(
    source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, "off")
    assert cache_dir() is None
    calls = _count_validations(monkeypatch)
    load_validated(source, SCHEMA, what="rep.yaml")
    load_validated(source, SCHEMA, what="rep.yaml")
    assert calls == ["rep.yaml", "rep.yaml"]


def test_default_location_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "mlsubmit" / "data"


def test_data_json_cannot_hold_exactly_is_not_copied(tmp_path: Path) -> None:
    _store(tmp_path / "int-keys.json", {1: "one"})  # JSON would turn the key into "1"
    _store(tmp_path / "nan.json", {"x": float("nan")})  # NaN != NaN: the round trip cannot be proved
    assert list(tmp_path.iterdir()) == []
    _store(tmp_path / "inf.json", {"max": float("inf")})  # the HP table's open upper bounds
    assert _read_copy(tmp_path / "inf.json") == {"max": float("inf")}


def test_every_shipped_data_file_round_trips_through_its_copy(copies: Path) -> None:
    """The loaders give the same data from a fresh validation and from the copy, for every shipped file."""
    from mlsubmit.checker.hyperparameters.table import _read_tables
    from mlsubmit.checker.rules.engine import _notes
    from mlsubmit.checker.systems.knowledge import knowledge
    from mlsubmit.checker.tree.folders import tree_policy

    from mlsubmit.core.codes import families, family_codes

    def load_all() -> list[object]:
        for fn in (_notes, knowledge, tree_policy, family_codes):
            fn.cache_clear()
        return [_notes(), _read_tables(), knowledge(), tree_policy(), [family_codes(f) for f in families()]]

    fresh = load_all()
    folder = importlib.resources.files("mlsubmit.checker").joinpath("tables")
    hp_tables = sum(1 for e in folder.iterdir() if e.name.startswith("hyperparameters-"))  # one per round, 1.0-6.1
    assert hp_tables == 12
    assert len(list(copies.glob("*.json"))) == hp_tables + 3 + len(families())  # HP tables, notes, knowledge, policy
    assert load_all() == fresh
