"""The log is checked as it is read (issue 26): the rule files, the facts and the HP table keep per-key state, never
the records, and give the same findings as a run over the whole list."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from fixtures.synth import RunSpec, render, write_run
from mlsubmit.checker.base.options import CheckOptions
from mlsubmit.checker.engine.pipeline import run_check
from mlsubmit.checker.logs import sinks
from mlsubmit.checker.logs.facts import FactsBuilder, extract
from mlsubmit.checker.logs.limits import records_that_fit
from mlsubmit.checker.logs.reader import Record, read_log, read_stream
from mlsubmit.checker.rules import engine
from mlsubmit.checker.rules.engine import RuleStream, check_records
from mlsubmit.checker.rules.files import get_ruleset
from mlsubmit.checker.rules.tally import SHOWN_VALUES, KeyTally, short_repr

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


def test_the_engine_counts_only_the_keys_its_files_name_once_no_file_can_start(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 35 item 9: a log of millions of distinct keys kept a count (and the key's text) for each of them."""
    records = _records(RunSpec(benchmark="resnet", ruleset="1.0.0", omit=("run_stop",)))
    # 3,000 records of distinct keys nobody names, then a required key's records after them: still counted
    odd = [Record(f"k{i:07d}", {"value": 1, "metadata": {}}, 1.0, 1000 + i, 1000 + i) for i in range(3000)]
    late = [Record("eval_accuracy", {"value": 0.5, "metadata": {"epoch_num": 1}}, 2.0, 5000, 5000)] * 2
    log = [*records[:-3], *odd, *late, *records[-3:]]
    whole = check_records(log, get_ruleset("1.0.0"), "x")
    monkeypatch.setattr(engine, "PREFIX_RECORDS", 10)
    rules = RuleStream(get_ruleset("1.0.0"), "x", lambda: log)
    for i in range(0, len(log), 7):
        rules.feed(log[i : i + 7])
    assert rules.run is not None
    counts = rules.run.counts
    assert not any(k.startswith("k0") for k in counts) and len(counts) <= len(rules.run.named) < 100
    assert counts["eval_accuracy"] == sum(r.key == "eval_accuracy" for r in log)
    assert rules.finish() == whole and any("run_stop" in f.message for f in whole)


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
        return short_repr(value, limit)

    monkeypatch.setattr(tally, "short_repr", counting)
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
    monkeypatch.setattr(sinks, "WHOLE_RECORDS", 1000)
    monkeypatch.setattr(sinks, "WHOLE_BYTES", 5_000)  # a record is ~600 bytes as the budget counts it
    cut = [f for f in run_check([str(log)], options).report.files[str(log)] if f.code == "LOG012"]
    # how many fit depends on the records' text (their metadata names the writing script's path): ask the budget
    fit, _ = records_that_fit(read_log(log).records, 5_000)
    assert 0 < fit < 10
    assert len(cut) == 1 and f"first {fit} records, of 41" in cut[0].message


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


def _wide(n: int, key: str = "eval_accuracy", size: int = 5000) -> list[Record]:
    return [Record(key, {"value": "x" * size, "metadata": {"epoch_num": i}}, 1.0, 100 + i, 100 + i) for i in range(n)]


def test_what_check_keeps_of_values_is_bounded_by_bytes_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 35: 600 records of 1 MB values took 2.4 GB under `check --cache` (the facts, the engine's prefix);
    each keeper stops at its byte budget, and the ones that leave records out say so (LOG012)."""
    from mlsubmit.checker.logs import facts, limits

    assert limits.value_size(["x" * 1000]) == 1004 + limits.KEPT_OVERHEAD  # '["xx...x"]'
    assert limits.value_size([10**5000]) == limits.MAX_LINE  # no str() of it: counted as the longest line
    monkeypatch.setattr(facts, "FACTS_BYTES", 5_000)
    builder = FactsBuilder()
    for batch in (_wide(2, size=1000), _wide(2, size=1000), _wide(2, size=1000), _wide(2, size=1000)):
        builder.feed(batch)
    assert len(builder.series["eval_accuracy"]) == 4  # the batch that passed the budget is kept, then no more
    cut = builder.cut("x")
    assert [f.code for f in cut] == ["LOG012"] and cut[0].line == 101  # the last record kept
    assert FactsBuilder().cut("x") == []
    monkeypatch.setattr(sinks, "HP_BYTES", 20_000)  # 5,000 bytes and 600 a record: three of them
    kept = sinks.RecordsOfKeys(frozenset({"global_batch_size"}))
    for _ in range(3):
        kept.feed(_wide(2, "global_batch_size"))
    assert len(kept.records) == 3 and "first 3 records of its keys, of 6" in kept.cut("x")[0].message


def test_records_of_keys_asks_for_its_keys_when_the_first_records_arrive() -> None:
    """The HP check's keys come from the round's table, read once the log is open (issue 56: the log first)."""
    asked: list[str] = []

    def keys() -> frozenset[str]:
        asked.append("keys")
        return frozenset({"global_batch_size"})

    kept = sinks.RecordsOfKeys(keys)
    assert asked == []
    kept.feed(_wide(2, "global_batch_size"))
    kept.feed(_wide(1, "other_key"))
    assert asked == ["keys"] and len(kept.records) == 2


def test_the_engine_prefix_is_bounded_by_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    records = _records(RunSpec(benchmark="resnet", ruleset="1.0.0"))
    log = [*records[:-3], *_wide(50, "some_key"), *records[-3:]]
    whole = check_records(log, get_ruleset("1.0.0"), "x")
    monkeypatch.setattr(engine, "PREFIX_BYTES", 50_000)
    rules = RuleStream(get_ruleset("1.0.0"), "x", lambda: log)
    for i in range(0, len(log), 5):
        rules.feed(log[i : i + 5])
        assert rules.run is not None
        assert rules.run.prefix is None or rules.run.prefix_bytes <= 50_000 + 5 * 6000
    assert rules.run.prefix is None and rules.finish() == whole


def test_log_content_in_messages_and_budgets_is_bounded_too() -> None:
    """A key or a time_ms may be as long as a line (16 MiB): messages quote 200 characters of it, and the byte
    budgets count keys as well as values."""
    from mlsubmit.checker.logs import limits

    key = "k" * 100_000
    text = (f':::MLLOG {{"key": "{key}", "value": NaN, "time_ms": 1, "metadata": {{}}}}\n'
            f':::MLLOG {{"key": "x", "value": 1, "time_ms": "{key}", "metadata": {{}}}}\n'
            f':::MLLOG {{"key": "{key}", "value": 1, "value": 2, "time_ms": 1, "metadata": {{}}}}\n')
    log = read_stream(io.BytesIO(text.encode()), "x")
    said = {f.code: f.message for f in log.findings}
    assert {"LOG006", "LOG007", "LOG008"} <= set(said) and all(len(m) < 400 for m in said.values())
    assert limits.records_size(log.records[:1]) > 100_000


@pytest.mark.parametrize("shape", [
    [{} for _ in range(5000)], [[] for _ in range(5000)], [{"a": 1.5} for _ in range(5000)],
    {f"k{i:04d}": i for i in range(1500)}, [f"{i:x}" for i in range(5000)], [1.5] * 5000, [[0]] * 5000,
    ["é" * 500 + "\U0001f600"] * 3,
])
def test_a_value_is_counted_at_least_at_what_it_takes_decoded(shape: object) -> None:
    """Budgets counted JSON text, and decoded objects took 10-24 times it: 5,800 records of 1,500-key objects kept
    661 MB under `check` (issue 54). value_size counts ELEMENT_COST an element on top of the text: never less than
    what json or msgspec build from it (tracemalloc), for the costliest shapes per byte."""
    import json
    import tracemalloc

    import msgspec
    from mlsubmit.checker.logs import limits

    text = msgspec.json.encode(shape)
    for decode in (json.loads, msgspec.json.decode):
        tracemalloc.start()
        value = decode(text)
        taken, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert limits.value_size([value]) - limits.KEPT_OVERHEAD >= taken, decode
        del value
