"""The log is checked as it is read (issue 26): the rule files, the facts and the HP table keep per-key state, never
the records, and give the same findings as a run over the whole list."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from fixtures.synth import RunSpec, render, write_run
from mlsubmit.checker.logs import sinks
from mlsubmit.checker.logs.facts import FactsBuilder, extract
from mlsubmit.checker.logs.reader import Record, read_log, read_stream
from mlsubmit.checker.rules import engine
from mlsubmit.checker.rules.engine import RuleStream, check_records
from mlsubmit.checker.rules.files import get_ruleset
from mlsubmit.checker.rules.tally import SHOWN_VALUES, KeyTally, short
from mlsubmit.checker.run.options import CheckOptions
from mlsubmit.checker.run.pipeline import run_check

SD_EVAL = {"metric": "FID", "samples_count": 512000}
RUNS = [
    RunSpec(benchmark="resnet", ruleset="1.0.0"),
    RunSpec(benchmark="resnet", ruleset="1.0.0", omit=("run_stop",), extra=[("opt_name", "adam", {})]),
    RunSpec(benchmark="bert", ruleset="5.1.0", extra=[("submission_benchmark", "common", {})]),
    RunSpec(benchmark="bert", ruleset="5.1.0", division="open", extra=[("eval_samples", 7, {})]),
    # a rule file that reads the whole log (`loglines`): run on the log read again
    RunSpec(benchmark="stable_diffusion", ruleset="4.0.0", extra=[("eval_accuracy", 90.0, SD_EVAL)]),
]


def _records(spec: RunSpec) -> list[Record]:
    return read_stream(io.BytesIO(render(spec).encode()), "x").records


def _streamed(records: list[Record], version: str, batch: int) -> list:  # type: ignore[type-arg]
    reread = [0]

    def again() -> list[Record]:
        reread[0] += 1
        return records

    rules = RuleStream(get_ruleset(version), "x", again)
    for i in range(0, len(records), batch):
        rules.feed(records[i : i + batch])
    return rules.finish()


@pytest.mark.parametrize("spec", RUNS, ids=lambda s: f"{s.ruleset}-{s.benchmark}-{len(s.extra)}-{s.omit}")
@pytest.mark.parametrize("prefix", [engine.PREFIX_RECORDS, 3])
def test_batches_give_the_findings_of_the_whole_list(spec: RunSpec, prefix: int,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    records = _records(spec)
    whole = check_records(records, get_ruleset(spec.ruleset), "x")
    monkeypatch.setattr(engine, "PREFIX_RECORDS", prefix)  # 3: files asked for later run on the log read again
    for batch in (1, 5, len(records)):
        assert _streamed(records, spec.ruleset, batch) == whole


def test_a_sink_takes_every_record_and_the_log_keeps_none() -> None:
    text = render(RunSpec(evals=30)).encode()
    kept = read_stream(io.BytesIO(text), "x")
    seen: list[Record] = []
    log = read_stream(io.BytesIO(text), "x", sink=seen.extend)
    assert log.records == [] and log.record_count == len(kept.records) == len(seen)
    assert [(r.key, r.line) for r in seen] == [(r.key, r.line) for r in kept.records]
    builder = FactsBuilder()
    builder.feed(seen)
    assert builder.facts(log) == extract(kept)


def test_what_the_engine_keeps_of_repeated_values_is_bounded() -> None:
    seen = KeyTally()
    for i in range(5 * SHOWN_VALUES):
        seen.add(i, i + 1)
    assert seen.count == 5 * SHOWN_VALUES and not seen.same and len(seen.shown) == SHOWN_VALUES + 1
    records = [Record("submission_division", {"value": f"d{i}", "metadata": {}}, 1.0, i + 1, i) for i in range(500)]
    found = [f for f in check_records(records, get_ruleset("1.0.0"), "x") if "submission_division' must" in f.message]
    assert len(found) == 1 and "found 500 with values [d0, d1, d10, d100, d11," in found[0].message.replace('"', "")
    assert found[0].message.endswith(', ...] (training_1.0.0/common.yaml)')  # 100 values listed, the rest elided


def test_repeated_values_are_printed_only_when_a_message_may_need_them(monkeypatch: pytest.MonkeyPatch) -> None:
    from mlsubmit.checker.rules import tally

    printed: list[object] = []

    def counting(value: object, limit: int = 120) -> str:
        printed.append(value)
        return short(value, limit)

    monkeypatch.setattr(tally, "short", counting)
    seen = KeyTally()
    for line in range(3):
        seen.add("x", line + 1)
    assert printed == [] and seen.same and seen.values() == {'"x"'}
    zeros = KeyTally()
    for line, value in enumerate((0.0, -0.0, 0.0, 1, True)):
        zeros.add(value, line + 1)
    assert not zeros.same and zeros.values() == {"0.0", "-0.0", "1", "true"}


def test_a_finished_log_run_is_freed_at_once_not_by_a_later_collection() -> None:
    import gc
    import weakref

    records = read_stream(io.BytesIO(render(RunSpec(evals=5)).encode()), "x").records
    stream = RuleStream(get_ruleset("1.0.0"), "x", lambda: records)
    stream.feed(records)
    assert stream.finish() == []
    assert stream.run is not None
    gone = weakref.ref(stream.run)
    gc.disable()  # files and engine must not be left in a cycle that only the collector would free
    try:
        del stream
        assert gone() is None
    finally:
        gc.enable()


def test_facts_keep_a_bounded_series(monkeypatch: pytest.MonkeyPatch) -> None:
    from mlsubmit.checker.logs import facts

    monkeypatch.setattr(facts, "MAX_SERIES", 3)
    monkeypatch.setattr(facts, "MAX_KEYS", 2)
    builder = FactsBuilder()
    builder.feed([Record(k, {"value": 1, "metadata": {}}, 1.0, n, n) for n, k in enumerate(["seed"] * 9 + ["a", "b"])])
    assert len(builder.series["seed"]) == 3 and list(builder.first) == ["seed", "a"]


def test_whole_log_rule_files_past_their_cap_are_a_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = write_run(tmp_path / "result_0.txt", RunSpec(benchmark="stable_diffusion", ruleset="4.0.0"))
    options = CheckOptions(ruleset="4.0.0", jobs=1, profile="reference")  # type: ignore[arg-type]  # no HP table
    before = run_check([str(log)], options).report.files[str(log)]
    assert "LOG012" not in [f.code for f in before]
    monkeypatch.setattr(sinks, "WHOLE_RECORDS", 10)
    after = run_check([str(log)], options).report.files[str(log)]
    cut = [f for f in after if f.code == "LOG012"]
    assert len(cut) == 1 and "first 10 records, of 41" in cut[0].message


def test_a_log_read_with_a_sink_keeps_its_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mlsubmit.checker.logs import limits

    monkeypatch.setattr(limits, "MAX_RECORDS", 20)
    path = write_run(tmp_path / "result_0.txt", RunSpec(evals=30))
    got: list[Record] = []
    log = read_log(path, sink=got.extend)
    assert len(got) == log.record_count == 20
    assert [f.line for f in log.findings if f.code == "LOG012"] == [got[-1].line]
    kept = read_log(path)  # a log that keeps its records has its own limit (limits.MAX_KEPT)
    assert kept.record_count == len(kept.records) > 20 and "LOG012" not in [f.code for f in kept.findings]


def test_the_rcp_lines_kept_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mlsubmit.checker.logs import limits

    path = write_run(tmp_path / "result_0.txt", RunSpec(evals=30))
    whole = read_log(path)
    assert len(whole.rcp_lines) > 10 and "LOG012" not in [f.code for f in whole.findings]
    monkeypatch.setattr(limits, "RCP_LINES", 10)
    cut = read_log(path)
    assert cut.rcp_lines == whole.rcp_lines[:10]
    assert [f.message for f in cut.findings if f.code == "LOG012"] == [
        "the lines the RCP check reads pass 10 lines or 4 MiB; it reads the first 10"]
