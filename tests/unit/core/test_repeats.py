"""A log's findings within a bound however many records fail (mlsubmit/core/repeats.py; issue 35, item 1 of "What got
through"): the first ones kept with their lines, the rest counted exactly in `repeats`, in every format."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fixtures.synth import write_run
from hypothesis import given
from hypothesis import strategies as st

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Report
from mlsubmit.core.repeats import CODE_KEPT, LINES_SHOWN, SAME_KEPT, Capped

EVAL = (':::MLLOG {"namespace": "", "time_ms": 1620000264000, "event_type": "POINT_IN_TIME", "key": "eval_accuracy", '
        '"value": "%s", "metadata": {"file": "x.py", "lineno": 1, "epoch_num": 1}}\n')


def _f(code: str, message: str, line: int):
    return finding(code, "log.txt", message, line=line)


def test_same_message_past_the_cap_is_one_finding_with_the_count_and_lines() -> None:
    kept = Capped(_f("RULE006", "bad value", n) for n in range(1, 10_001))
    found = list(kept)
    assert len(found) == SAME_KEPT + 1
    assert [f.line for f in found[:SAME_KEPT]] == list(range(1, SAME_KEPT + 1))
    fold = found[-1]
    assert fold.line == SAME_KEPT + 1 and fold.repeats == 10_000 - SAME_KEPT - 1
    assert f"and {10_000 - SAME_KEPT - 1:,} more at lines 22, 23" in fold.message and fold.message.endswith(", 10000)")
    assert sum(1 + f.repeats for f in found) == 10_000


def test_distinct_messages_past_the_codes_cap_are_one_finding() -> None:
    found = list(Capped(_f("RULE006", f"bad value {n}", n) for n in range(1, 50_001)))
    assert len(found) == CODE_KEPT + 1 and sum(1 + f.repeats for f in found) == 50_000  # no message came again
    assert "more RULE006 findings with other messages" in found[-1].message


def test_merging_collections_adds_their_counts_and_never_folds_twice() -> None:
    a, b = Capped(_f("RULE001", "m", n) for n in range(100)), Capped(_f("RULE001", "m", n) for n in range(100, 300))
    a.extend(b)
    again = Capped(a)
    found = list(again)
    assert sum(1 + f.repeats for f in found) == 300 and sum(1 for f in found if f.repeats) == 1
    assert found[-1].message.count("more at lines") == 1


@given(st.lists(st.tuples(st.sampled_from(["RULE001", "RULE006", "HP003"]), st.integers(0, 40)), max_size=3000))
def test_counts_are_exact_and_kept_findings_bounded(items: list[tuple[str, int]]) -> None:
    found = list(Capped(_f(code, f"m{m}", i + 1) for i, (code, m) in enumerate(items)))
    assert sum(1 + f.repeats for f in found) == len(items)
    for code in {c for c, _ in items}:
        assert sum(1 for f in found if f.code == code and not f.repeats) <= CODE_KEPT
    assert all(f.message.count("…") <= 1 and f.message.count(",") <= LINES_SHOWN + 2 for f in found if f.repeats)


@pytest.fixture(scope="module")
def failing_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ResNet-50 run with 30,000 eval_accuracy records of string values: 30,000 RULE006, of 1,500 messages."""
    path = write_run(tmp_path_factory.mktemp("repeats") / "result_0.txt", ruleset="1.1.0")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[-5:-5] = [EVAL % f"acc{i % 1500}" for i in range(30_000)]
    path.write_text("".join(lines), encoding="utf-8")
    return path


@pytest.mark.parametrize("fmt", ["json", "text", "sarif", "junit", "github"])
def test_every_format_is_bounded_and_counts_exactly(run_cli, failing_log: Path, fmt: str) -> None:
    code, out, err = run_cli("check", "--ruleset", "1.1.0", "--format", fmt, failing_log)
    assert code == 1, err
    assert len(out) < 3_000_000  # 30,000 findings kept whole were over 20 MB of JSON
    if fmt == "json":
        data = json.loads(out)
        rule006 = [f for e in data["files"] for f in e["findings"] if f["code"] == "RULE006"]
        # kept ones, a fold per kept message, one fold for the messages past the code's cap
        assert sum(1 + f.get("repeats", 0) for f in rule006) == 30_000 and len(rule006) <= 2 * CODE_KEPT + 1
        assert "30000" in json.dumps(data["summary"])
    if fmt == "text":
        assert "more RULE006 findings with other messages at lines" in out


def test_report_counts_include_repeats() -> None:
    report = Report()
    report.add_file("log.txt", Capped(_f("RULE006", "m", n) for n in range(1, 501)))
    assert report.counts()["error"] == 500


def test_bad_records_are_capped_in_the_reader(tmp_path: Path) -> None:
    from mlsubmit.checker.logs.reader import read_log

    path = tmp_path / "bad.txt"
    path.write_bytes(b":::MLLOG {not json\n" * 50_000)
    log = read_log(path, "bad.txt")
    bad = [f for f in log.findings if f.code in ("LOG004", "LOG005")]
    assert len(bad) <= SAME_KEPT + 1 and sum(1 + f.repeats for f in bad) == 50_000


def test_records_kept_without_a_sink_stay_within_a_byte_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    from mlsubmit.checker.logs import limits
    from mlsubmit.checker.logs.reader import read_log

    path = write_run(tmp_path / "wide.txt", ruleset="1.1.0")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[-5:-5] = [EVAL % ("x" * 2000) for _ in range(3000)]
    path.write_text("".join(lines), encoding="utf-8")
    monkeypatch.setattr(limits, "MAX_KEPT_BYTES", 2 << 20)
    kept = read_log(path, "wide.txt")
    assert limits.kept_cost(kept) <= (2 << 20) + (1 << 20) + 600 * 2000  # at most one 1 MiB chunk past the budget
    assert len(kept.records) < 1500
    assert any(f.code == "LOG012" and "MiB kept" in f.message for f in kept.findings)
    streamed = read_log(path, "wide.txt", sink=lambda batch: None)
    assert streamed.record_count == sum(":::MLLOG" in ln for ln in lines)  # a sink keeps what it needs: no budget
    assert not any(f.code == "LOG012" and "kept" in f.message for f in streamed.findings)


@given(st.text(max_size=150) | st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=150))
def test_short_quotes_a_value_as_json_dumps_does(value: str) -> None:
    from mlsubmit.checker.rules.tally import short_repr

    text = json.dumps(value, sort_keys=True)
    assert short_repr(value) == (text if len(text) <= 120 else text[:117] + "...")


def test_a_fold_keeps_its_findings_message_for_a_waiver() -> None:
    from mlsubmit.core.repeats import original_message

    same = list(Capped(_f("RULE006", "bad value (x)", n) for n in range(1, 100)))
    assert all(original_message(f) == "bad value (x)" for f in same)
    mixed = list(Capped(_f("RULE006", f"bad value {n}", n) for n in range(1, CODE_KEPT + 50)))
    assert original_message(mixed[-1]) is None and original_message(mixed[0]) == "bad value 1"


def test_a_waiver_of_a_message_covers_its_folded_repeats(run_cli, failing_log: Path, tmp_path: Path) -> None:
    """30,000 RULE006 of 1,500 messages: a waiver of one exact message covers the fold of that message too, and
    none of the fold of the messages past the code's cap."""
    code, out, err = run_cli("check", "--ruleset", "1.1.0", "--format", "json", failing_log)
    assert code == 1, err
    found = [f for e in json.loads(out)["files"] for f in e["findings"] if f["code"] == "RULE006"]
    message = found[0]["message"]
    waivers = tmp_path / "waivers.toml"
    pattern = json.dumps("^" + re.escape(message) + "$")  # a TOML basic string too
    waivers.write_text(f"[[waiver]]\ncode = \"RULE006\"\nmessage = {pattern}\nreason = \"test\"\n"
                       "reference = \"https://example.org/1\"\nwho = \"results chair\"\nexpires = 2099-01-01\n",
                       encoding="utf-8")
    _code, out, err = run_cli("check", "--ruleset", "1.1.0", "--format", "json", "--waivers", waivers, failing_log)
    assert out, err
    data = json.loads(out)
    same = [f for e in data["files"] for f in e["findings"] if f["code"] == "RULE006" and f["message"].startswith(
        message)]
    # acc0 is kept once before the code's cap; its 19 later ones fold into one finding, waived as well
    assert len(same) == 2 and same[1].get("repeats") == 18 and all("waived" in f for f in same), err
    assert sum(1 + f.get("repeats", 0) for f in same) == 20  # acc{k} comes 20 times in 30,000 records
    assert data["summary"]["waived"] == 20
