"""--cache: an unchanged log is never parsed again; anything that decides its result changes the key."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures.logfix import check_log_file
from mlsubmit.checker.base.cache import LogCache, context_key
from mlsubmit.checker.base.options import Profile
from mlsubmit.checker.base.targets import LogRef
from mlsubmit.checker.engine import pipeline
from mlsubmit.checker.engine.checks import plan
from mlsubmit.checker.engine.pipeline import CheckOptions


def _no_parse(*_a: object, **_k: object) -> None:
    raise AssertionError("the log was parsed although the cache holds it")


def test_round_trip_gives_the_same_findings_and_facts(tmp_path: Path, make_run: Callable[..., Path]) -> None:
    log = make_run("result_0.txt", omit=("eval_samples",), hyperparameters={"global_batch_size": 3264})
    options = CheckOptions(ruleset="1.0.0", cache_dir=tmp_path / "cache")
    cold = check_log_file(LogRef(log, "a/result_0.txt"), options)
    assert cold.findings, "the omitted record must give a finding"
    warm = check_log_file(LogRef(log, "a/result_0.txt"), options)
    assert warm.findings == cold.findings
    assert warm.facts == cold.facts
    assert warm.facts.error_codes == cold.facts.error_codes != ()


def test_a_hit_does_not_parse(tmp_path: Path, make_run: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> None:
    log = make_run()
    options = CheckOptions(ruleset="1.0.0", cache_dir=tmp_path / "cache")
    check_log_file(LogRef(log, "x"), options)
    monkeypatch.setattr(pipeline, "read_log", _no_parse)
    assert check_log_file(LogRef(log, "x"), options).facts.benchmark == "bert"


def test_the_same_content_elsewhere_is_reported_under_its_own_path(
    tmp_path: Path, make_run: Callable[..., Path]
) -> None:
    log = make_run(omit=("eval_samples",))
    copy = tmp_path / "copy" / "result_0.txt"
    copy.parent.mkdir()
    copy.write_bytes(log.read_bytes())
    options = CheckOptions(ruleset="1.0.0", cache_dir=tmp_path / "cache")
    check_log_file(LogRef(log, "first/result_0.txt"), options)
    second = check_log_file(LogRef(copy, "second/result_0.txt"), options)
    assert {f.path for f in second.findings} == {"second/result_0.txt"}
    assert second.facts.path == "second/result_0.txt"


def test_changed_content_ruleset_or_profile_misses(
    tmp_path: Path, make_run: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    log = make_run()
    cache = tmp_path / "cache"
    check_log_file(LogRef(log, "x"), CheckOptions(ruleset="1.0.0", cache_dir=cache))
    calls: list[str] = []
    real = pipeline.read_log

    def counting(path: Path, display: str | None = None, **kwargs: bool) -> object:
        calls.append(str(path))
        return real(path, display, **kwargs)

    monkeypatch.setattr(pipeline, "read_log", counting)
    check_log_file(LogRef(log, "x"), CheckOptions(ruleset="1.1.0", cache_dir=cache))
    check_log_file(LogRef(log, "x"), CheckOptions(ruleset="1.0.0", profile="reference", cache_dir=cache))
    log.write_bytes(log.read_bytes() + b"trailing job output\n")
    check_log_file(LogRef(log, "x"), CheckOptions(ruleset="1.0.0", cache_dir=cache))
    assert len(calls) == 3


def test_keys_differ_by_context() -> None:
    full, ref = plan(Profile.FULL.value).key(), plan(Profile.REFERENCE.value).key()
    keys = {context_key("1.0.0", full, ""), context_key("1.1.0", full, ""), context_key("1.0.0", ref, "")}
    assert len(keys) == 3


def test_damaged_entries_are_misses_and_writes_leave_no_temp_files(
    tmp_path: Path, make_run: Callable[..., Path]
) -> None:
    log = make_run()
    options = CheckOptions(ruleset="1.0.0", cache_dir=tmp_path / "cache")
    first = check_log_file(LogRef(log, "x"), options)
    entries = list((tmp_path / "cache").rglob("*.json"))
    assert len(entries) == 1 and not list((tmp_path / "cache").rglob(".tmp-*"))
    entries[0].write_text("{not json", encoding="utf-8")
    assert check_log_file(LogRef(log, "x"), options).facts == first.facts  # re-read, then rewritten
    assert LogCache(tmp_path / "cache", "ctx").get("0" * 64, "x") is None


def test_unwritable_cache_never_fails_the_check(tmp_path: Path, make_run: Callable[..., Path]) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be", encoding="utf-8")
    result = check_log_file(LogRef(make_run(), "x"), CheckOptions(ruleset="1.0.0", cache_dir=blocker))
    assert result.facts.benchmark == "bert"
