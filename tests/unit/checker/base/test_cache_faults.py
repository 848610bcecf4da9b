"""Caches cannot lie: planted faults in every cache (logs, RCP, data copies, hygiene) are misses, never answers.

Each fault is planted where the real entry lives, then the same question is asked again: the answer must equal
the one computed without a cache, no exception may escape, and (where the folder is writable) the entry must be
whole and valid again afterwards.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fixtures.logfix import check_log_file
from fixtures.rcpfix import run_lines
from mlsubmit.checker.base.cache import MISS, load_entry, store_entry
from mlsubmit.checker.base.targets import LogRef
from mlsubmit.checker.engine.pipeline import CheckOptions
from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.rcp.verdict import evaluate, evaluate_cached

from mlsubmit.core.support import cache_entries as entries_mod


def rcp_runs(epochs: list[int]) -> list[LogFacts]:
    """Closed ResNet-50 runs at batch 3264 converging at these epochs, as the RCP reader's kept lines."""
    return [LogFacts(path=f"result_{i}.txt", rcp_lines=tuple(run_lines(e))) for i, e in enumerate(epochs)]


Plant = Callable[[Path, Path], None]  # (entry, a valid entry of another key) -> None


def _truncate(entry: Path, _other: Path) -> None:
    data = entry.read_bytes()
    entry.write_bytes(data[: len(data) // 2])


def _wrong_shape(entry: Path, _other: Path) -> None:
    entry.write_text(json.dumps({"something": ["else", 1, None]}), encoding="utf-8")  # valid JSON, not ours


def _wrong_shape_valid_envelope(entry: Path, _other: Path) -> None:
    """A well-formed entry under the right key whose body has another shape (digest recomputed)."""
    key = json.loads(entry.read_bytes().partition(b"\n")[0])["key"]
    store_entry(entry.parent, entry, key, {"runs": "not a list", "display": 3, "facts": [], "findings": {}})


def _other_key(entry: Path, other: Path) -> None:
    entry.write_bytes(other.read_bytes())  # a well-formed entry copied under this key's name


def _link_out(entry: Path, other: Path) -> None:
    outside = entry.parent.parent.parent / "outside.json"  # beside the cache folder, never inside it
    outside.write_bytes(entry.read_bytes())
    entry.unlink()
    entry.symlink_to(outside)


def _altered_body(entry: Path, _other: Path) -> None:
    head, _, body = entry.read_bytes().partition(b"\n")
    entry.write_bytes(head + b"\n" + body.replace(b"1", b"2", 1).replace(b"true", b"false", 1))


def _deep_body(entry: Path, _other: Path) -> None:
    """A body 100,000 arrays deep under a right header (key, length, digest): json.loads raised RecursionError on
    every later run, and the entry was never replaced."""
    import hashlib

    key = json.loads(entry.read_bytes().partition(b"\n")[0])["key"]
    body = b"[" * 100_000 + b"]" * 100_000
    header = {"format": entries_mod.ENTRY_FORMAT, "key": key, "sha256": hashlib.sha256(body).hexdigest(),
              "length": len(body)}
    entry.write_bytes(json.dumps(header, sort_keys=True).encode() + b"\n" + body)


FAULTS: dict[str, Plant] = {
    "truncated": _truncate,
    "wrong-shape-json": _wrong_shape,
    "wrong-shape-with-valid-digest": _wrong_shape_valid_envelope,
    "another-key": _other_key,
    "link-out-of-cache": _link_out,
    "altered-body": _altered_body,
    "deep-body-with-valid-digest": _deep_body,
}


# --- the shared API ------------------------------------------------------------------------------------------


def test_entry_round_trip_and_each_fault_is_a_miss(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    for name, plant in FAULTS.items():
        entry, other = root / "a" / f"{name}.json", root / "a" / f"{name}-other.json"
        store_entry(root, entry, f"k/{name}", {"value": [1, 2, 3], "ok": True})
        store_entry(root, other, f"k/{name}-other", {"value": [9], "ok": False})
        assert load_entry(root, entry, f"k/{name}") == {"value": [1, 2, 3], "ok": True}
        plant(entry, other)
        assert load_entry(root, entry, f"k/{name}", _ours) is MISS, name


def _ours(body: Any) -> bool:
    return isinstance(body, dict) and isinstance(body.get("value"), list)


def test_a_planted_link_is_replaced_never_written_through(tmp_path: Path) -> None:
    root, target = tmp_path / "cache", tmp_path / "precious.txt"
    target.write_text("keep me", encoding="utf-8")
    (root / "a").mkdir(parents=True)
    (root / "a" / "x.json").symlink_to(target)
    store_entry(root, root / "a" / "x.json", "k", [1])
    assert target.read_text(encoding="utf-8") == "keep me"
    assert not (root / "a" / "x.json").is_symlink() and load_entry(root, root / "a" / "x.json", "k") == [1]


def test_a_linked_folder_leading_out_of_the_cache_is_not_used(tmp_path: Path) -> None:
    root, outside = tmp_path / "cache", tmp_path / "elsewhere"
    outside.mkdir()
    root.mkdir()
    (root / "a").symlink_to(outside, target_is_directory=True)
    store_entry(root, root / "a" / "x.json", "k", [1])
    assert list(outside.iterdir()) == []
    store_entry(outside, outside / "x.json", "k", [1])  # a valid entry, reached through the link
    assert load_entry(root, root / "a" / "x.json", "k") is MISS


def _enospc(*_a: object, **_k: object) -> Any:
    raise OSError(errno.ENOSPC, "No space left on device")


def _erofs(*_a: object, **_k: object) -> Any:
    raise OSError(errno.EROFS, "Read-only file system")


@pytest.mark.parametrize("failure", [_enospc, _erofs], ids=["full-disk", "read-only"])
def test_a_failing_write_leaves_no_entry_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: Callable[..., Any]
) -> None:
    root = tmp_path / "cache"
    root.mkdir()
    real_fdopen = os.fdopen

    class _Full:
        def __init__(self, fd: int, *a: Any, **k: Any) -> None:
            self.fh = real_fdopen(fd, *a, **k)

        def __enter__(self) -> _Full:
            return self

        def __exit__(self, *exc: object) -> None:
            self.fh.close()

        def write(self, _data: bytes) -> int:
            return failure()  # type: ignore[no-any-return]

    monkeypatch.setattr(entries_mod.os, "fdopen", _Full)
    store_entry(root, root / "x.json", "k", [1])
    assert list(root.iterdir()) == []


def _rewritten(change: Callable[[dict[str, Any]], None]) -> Plant:
    """A fault that alters a log entry's body and stores it again under its key: digest and key stay right."""

    def plant(entry: Path, _other: Path) -> None:
        head, _, body = entry.read_bytes().partition(b"\n")
        data = json.loads(body)
        change(data)
        store_entry(entry.parent, entry, json.loads(head)["key"], data)

    return plant


def _first_finding(**values: Any) -> Callable[[dict[str, Any]], None]:
    return lambda data: data["findings"][0].update(values)


# Bodies the old shape check (a dict with a list of dicts) let through: served as findings, or exit 3.
LOG_BODY_FAULTS: dict[str, Plant] = {
    "line-not-a-number": _rewritten(_first_finding(line="abc")),
    "invented-code": _rewritten(_first_finding(code="ZZZ999")),
    "message-not-text": _rewritten(_first_finding(message=["x"])),
    "finding-missing-hint": _rewritten(lambda d: d["findings"][0].pop("hint")),
    "facts-size-text": _rewritten(lambda d: d["facts"].update(size="big")),
    "occurrence-short": _rewritten(lambda d: d["facts"]["first"].update(run_start=[1, 2])),
    "extra-field": _rewritten(lambda d: d.update(extra=1)),
}


# --- each cache, through its own entry point -----------------------------------------------------------------


def _only_entry(folder: Path) -> Path:
    entries = [p for p in folder.rglob("*.json") if not p.name.startswith(".tmp-")]
    assert len(entries) == 1, entries
    return entries[0]


@pytest.mark.parametrize("fault", [*FAULTS, *LOG_BODY_FAULTS])
def test_log_cache_faults_are_misses(tmp_path: Path, make_run: Callable[..., Path], fault: str) -> None:
    log = make_run("result_0.txt", omit=("eval_samples",))
    other_log = make_run("result_1.txt")
    options = CheckOptions(ruleset="1.0.0", cache_dir=tmp_path / "cache")
    truth = check_log_file(LogRef(log, "x/result_0.txt"), CheckOptions(ruleset="1.0.0"))
    check_log_file(LogRef(log, "x/result_0.txt"), options)
    entry = _only_entry(tmp_path / "cache")
    check_log_file(LogRef(other_log, "x/result_1.txt"), options)
    other = next(p for p in (tmp_path / "cache").rglob("*.json") if p != entry)
    {**FAULTS, **LOG_BODY_FAULTS}[fault](entry, other)
    again = check_log_file(LogRef(log, "x/result_0.txt"), options)
    assert (again.findings, again.facts) == (truth.findings, truth.facts)
    assert not entry.is_symlink() and load_entry(tmp_path / "cache", entry, json.loads(
        entry.read_bytes().partition(b"\n")[0])["key"]) is not MISS  # rewritten


@pytest.mark.parametrize("fault", list(FAULTS))
def test_rcp_cache_faults_are_misses(tmp_path: Path, fault: str) -> None:
    """The issue's report: a wrong-shape entry under --cache DIR/rcp/ ended the run with KeyError 'runs'."""
    cache = tmp_path / "cache"
    passing = rcp_runs([38, 37, 39, 38, 40])
    failing = rcp_runs([20, 21, 19, 20, 22])
    truth = evaluate("resnet", "1.0.0", passing, bypass=False, closed=True)
    assert evaluate_cached("resnet", "1.0.0", passing, bypass=False, closed=True, cache_dir=cache) == truth
    entry = _only_entry(cache / "rcp")
    evaluate_cached("resnet", "1.0.0", failing, bypass=False, closed=True, cache_dir=cache)
    other = next(p for p in (cache / "rcp").glob("*.json") if p != entry)
    FAULTS[fault](other, entry) if fault == "another-key" else FAULTS[fault](entry, other)
    target = other if fault == "another-key" else entry
    runs = failing if fault == "another-key" else passing
    want = evaluate("resnet", "1.0.0", runs, bypass=False, closed=True)
    assert evaluate_cached("resnet", "1.0.0", runs, bypass=False, closed=True, cache_dir=cache) == want
    assert not target.is_symlink()


@pytest.mark.parametrize("fault", list(FAULTS))
def test_data_copy_faults_are_misses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str) -> None:
    from mlsubmit.core.support import datafiles

    copies = tmp_path / "copies" / "data"
    monkeypatch.setenv(datafiles.CACHE_ENV, str(copies))
    import importlib.resources

    one, two = tmp_path / "rep.yaml", tmp_path / "pkg.yaml"
    for path in (one, two):
        path.write_bytes(importlib.resources.files("mlsubmit.core").joinpath(f"codes/{path.name}").read_bytes())
    truth = datafiles.load_validated(one, "codes.schema.json", what="one")
    entry = _only_entry(copies)
    datafiles.load_validated(two, "codes.schema.json", what="two")
    other = next(p for p in copies.glob("*.json") if p != entry)
    FAULTS[fault](entry, other)
    assert datafiles.load_validated(one, "codes.schema.json", what="one") == truth
