"""RCP check: the reference's own check_directory and reader, run on kept lines, against the real reference.

Every crafted folder is written to disk too and judged by the unmodified mlperf-logging module (real scipy and
numpy): our verdict, message and factor must be its verdict, message and factor, and where it raises we must name
the raise.
"""

from __future__ import annotations

import glob
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures.rcp_reference import Outcome, check_folder
from fixtures.rcpfix import run_lines
from hypothesis import given, settings
from hypothesis import strategies as st
from mlsubmit.checker.logs.facts import LogFacts, extract
from mlsubmit.checker.logs.reader import read_log
from mlsubmit.checker.rcp.verdict import RcpResult, evaluate, run_convergence


def write(folder: Path, runs: list[list[str]]) -> list[LogFacts]:
    folder.mkdir(parents=True, exist_ok=True)
    for i, lines in enumerate(runs):
        (folder / f"result_{i}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [extract(read_log(folder / f"result_{i}.txt")) for i in range(len(runs))]


@pytest.fixture
def quiet() -> Iterator[None]:
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


def reference(folder: Path, ruleset: str, bypass: bool = False) -> tuple[bool, str, float] | str:
    return as_compared(check_folder(folder, ruleset, bypass))


def as_compared(outcome: Outcome) -> tuple[bool, str, float] | str:
    """The reference's outcome as `same` compares it: (passed, message, factor), or the name of what it raised."""
    kind, answer = outcome
    return (bool(answer[0]), str(answer[1]), float(answer[2])) if kind == "ok" else str(answer)


def same(ours: RcpResult, ref: tuple[bool, str, float] | str) -> None:
    if isinstance(ref, str):
        assert ours.crash and ours.crash.startswith(ref), (ours, ref)
        return
    assert ours.crash is None, ours
    assert (ours.passed, ours.reference, ours.scaling_factor) == ref


CASES: dict[str, tuple[str, str, list[list[str]], bool]] = {
    "slower": ("resnet", "1.0.0", [run_lines(e) for e in (40, 40, 41, 42, 43)], False),
    "normalised": ("resnet", "1.0.0", [run_lines(e) for e in (34, 35, 35, 35, 36)], False),
    "too_fast": ("resnet", "1.0.0", [run_lines(30)] * 5, False),
    "bypass": ("resnet", "1.0.0", [run_lines(30)] * 5, True),
    "interpolated": ("resnet", "1.0.0", [run_lines(60, bs=8192)] * 5, False),
    "above_every_rcp": ("resnet", "1.0.0", [run_lines(90, bs=100_000)] * 5, False),
    "one_not_converged": ("resnet", "1.0.0", [run_lines(40)] * 4 + [run_lines(None)], False),
    "two_not_converged": ("resnet", "1.0.0", [run_lines(40)] * 3 + [run_lines(None)] * 2, False),
    "aborted": ("resnet", "1.0.0", [run_lines(40)] * 3 + [run_lines(40, status="aborted")] * 2, False),
    "no_batch_size": ("resnet", "1.0.0", [run_lines(40, bs=None)] * 5, False),
    "mixed_batch_sizes": ("resnet", "1.0.0", [run_lines(40)] * 4 + [run_lines(40, bs=1632)], False),
    "text_batch_size": ("resnet", "1.0.0", [run_lines(40, bs="3264")] * 5, False),
    "no_status": ("resnet", "1.0.0", [run_lines(40, status=None)] * 5, False),
    "text_epoch": ("resnet", "1.0.0", [run_lines("40")] * 5, False),
    "dlrm_unknown_to_the_reference": ("dlrm", "1.0.0", [run_lines(0.9, bs=65536, bench="dlrm")] * 5, False),
    "llama2_70b_lora_samples": ("llama2_70b_lora", "5.1.0",
                                [run_lines(s, bs=8, bench="llama2_70b_lora", unit="samples_count")
                                 for s in (3072, 3072, 3456, 3456, 3072, 3840, 3456, 3072, 3456, 3840)], False),
    "llama2_70b_lora_epoch_num_only": ("llama2_70b_lora", "5.1.0",
                                       [run_lines(3, bs=8, bench="llama2_70b_lora")] * 10, False),
    "llama31_405b": ("llama31_405b", "5.1.0",
                     [run_lines(s, bs=1152, bench="llama31_405b", unit="samples_count")
                      for s in (5_000_000, 5_100_000, 5_200_000)], False),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_verdict_message_and_factor_are_the_references(case: str, tmp_path: Path, quiet: None) -> None:
    benchmark, ruleset, runs, bypass = CASES[case]
    facts = write(tmp_path / benchmark, runs)
    same(evaluate(benchmark, ruleset, facts, bypass=bypass, closed=True), reference(tmp_path / benchmark, ruleset,
                                                                                    bypass))


def test_statuses_name_what_happened(tmp_path: Path) -> None:
    def status(case: str) -> str:
        benchmark, ruleset, runs, bypass = CASES[case]
        return evaluate(benchmark, ruleset, write(tmp_path / case, runs), bypass=bypass, closed=True).status

    assert [status(c) for c in ("slower", "too_fast", "bypass", "above_every_rcp", "aborted")] == [
        "pass", "fail", "bypassed", "error", "error"]  # fmt: skip
    assert status("dlrm_unknown_to_the_reference") == "not_checked"


def test_messages_give_the_numbers(tmp_path: Path) -> None:
    benchmark, ruleset, runs, _ = CASES["normalised"]
    res = evaluate(benchmark, ruleset, write(tmp_path, runs), closed=True)
    assert res.submission_mean == 35.0 and res.rcp_mean and res.min_epochs and res.min_epochs < 35.0
    assert res.scaling_factor == res.rcp_mean / 35.0 and "normalisation factor" in res.message
    benchmark, ruleset, runs, _ = CASES["too_fast"]
    fast = evaluate(benchmark, ruleset, write(tmp_path / "fast", runs), closed=True)
    assert fast.status == "fail" and fast.scaling_factor > 1.0  # the reference's factor is kept as data...
    assert "normalisation factor" not in fast.message  # ...but not said beside a fail
    two = evaluate("resnet", "1.0.0", write(tmp_path / "two", CASES["aborted"][2]), closed=True)
    assert two.message == "2 runs did not converge (at most 1 allowed)"
    mixed = evaluate("resnet", "1.0.0", write(tmp_path / "mixed", CASES["mixed_batch_sizes"][2]), closed=True)
    assert mixed.reference == "Batch sizes in files do not match" and "1632, 3264" in mixed.message


def test_each_run_is_read_by_the_references_reader(tmp_path: Path) -> None:
    facts = write(tmp_path, [run_lines(40.12345), run_lines(None), run_lines(7, bench="llama31_8b",
                                                                              unit="samples_count")])
    first, second, third = (run_convergence(f, "5.1.0") for f in facts)
    assert (first.converged, first.epochs) == (True, 40.123)  # rounded to 3 places, as the reference
    assert (second.converged, second.epochs) == (False, 1e9)
    assert (third.converged, third.epochs, third.benchmark) == (True, 7, "llama31_8b")


def test_open_division_and_minigo_are_not_applicable(tmp_path: Path) -> None:
    opened = [text.replace('"closed"', '"open"') for text in run_lines(30)]
    facts = write(tmp_path, [opened] * 5)
    assert evaluate("resnet", "1.0.0", facts).status == "not_applicable"
    assert evaluate("minigo", "1.0.0", facts, closed=True).status == "not_applicable"
    assert evaluate("resnet", "1.0.0", facts, closed=True).status == "fail"


def test_nothing_is_written_and_no_log_is_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    facts = write(tmp_path / "f", CASES["normalised"][2])
    for f in facts:
        os.chmod(f.path, 0)  # the reference's reader would fail on these; ours reads the kept lines
    before = sorted(p.name for p in (tmp_path / "f").iterdir())
    monkeypatch.chdir(tmp_path)
    res = evaluate("resnet", "1.0.0", facts, closed=True)
    assert res.passed and sorted(p.name for p in (tmp_path / "f").iterdir()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]


def test_a_log_without_kept_lines_is_a_run_that_did_not_converge() -> None:
    facts = [LogFacts(path=f"result_{i}.txt") for i in range(5)]
    res = evaluate("resnet", "1.0.0", facts, closed=True)
    assert res.crash and res.crash.startswith("KeyError")  # no benchmark: the reference's RCP_Checker(None)


def rounds(corpus: Path) -> list[tuple[Path, str]]:
    return [(p, p.name.split("_v")[1] + ".0") for p in sorted(corpus.glob("training_results_v*"))]


@pytest.mark.corpus
def test_same_verdict_and_factor_as_the_reference_on_every_corpus_folder(corpus: Path, quiet: None,
                                                                        rcp_reference: dict[str, Any]) -> None:
    """Every results folder of every corpus tree, closed or not, through the reference's check_directory (run once
    per session: tests/fixtures/rcp_reference.py) and ours."""
    compared = crashed = 0
    for rnd, ruleset in rounds(corpus):
        for folder in sorted(glob.glob(str(rnd / "*" / "results" / "*" / "*"))):
            files = sorted(glob.glob(folder + "/result_*.txt"))
            ours = evaluate(os.path.basename(folder), ruleset, [extract(read_log(f)) for f in files], closed=True)
            ref = as_compared(rcp_reference["folders"][str(Path(folder))])
            same(ours, ref)
            crashed += isinstance(ref, str)
            compared += 1
    assert compared > 0 and crashed < compared  # every folder the corpus holds, whatever it holds


@pytest.mark.parametrize("ruleset", ["1.0.0", "5.1.0"])
def test_statistics_kept_as_data_equal_the_computed_ones(ruleset: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The RCP statistics come from the data cache after the first run: the same records, types and pruning as
    when the reference computes them; a damaged or foreign copy is computed again."""
    from mlsubmit.checker.upstream import rcp_adapted as reference
    from mlsubmit.checker.upstream.installed import rcp_data_folder as rcp_folder

    mod = reference.module()

    def snapshot(benchmark: str) -> object:
        checker = mod.RCP_Checker("training", ruleset, benchmark, False)
        full, pruned = checker.rcp_data, checker.pruned_rcp_data
        assert all(pruned[n] is full[n] for n in pruned)
        return [(n, {k: (type(v).__name__, repr(v)) for k, v in r.items()}) for n, r in full.items()], list(pruned)

    benchmarks = sorted(p.name[5:-5] for p in rcp_folder(ruleset).iterdir() if p.name.startswith("rcps_"))
    benchmarks = [b for b in benchmarks if b in mod.submission_runs["training"]]
    first = None
    for cache in ("off", str(tmp_path), str(tmp_path), "damaged"):  # computed, stored, read back, rebuilt
        if cache == "damaged":
            for kept in tmp_path.glob("rcp-*.json"):
                kept.write_text(json.dumps({"rcp_data": {}, "pruned": []}), encoding="utf-8")
            cache = str(tmp_path)
        monkeypatch.setenv("MLSUBMIT_DATA_CACHE", cache)
        reference._KEPT.clear()
        got = {b: snapshot(b) for b in benchmarks}
        first = first or got
        assert got == first
    assert list(tmp_path.glob("rcp-*.json"))
    reference._KEPT.clear()


@pytest.mark.parametrize("case", sorted(CASES))
def test_answers_given_by_the_workers_change_nothing(case: str, tmp_path: Path, quiet: None) -> None:
    """The pipeline's workers keep the reader's answer on each closed run; the check then gives the same result as
    when it reads every run itself, raises included."""
    from mlsubmit.checker.rcp.verdict import answer_for

    benchmark, ruleset, runs, bypass = CASES[case]
    facts = write(tmp_path / benchmark, runs)
    plain = evaluate(benchmark, ruleset, facts, bypass=bypass, closed=True)
    for f in facts:
        f.rcp_answer = answer_for(f, ruleset)
    assert evaluate(benchmark, ruleset, facts, bypass=bypass, closed=True) == plain
    for f in facts:  # an answer for another ruleset, or a damaged one, is not used
        f.rcp_answer = ["0.0.0", [0, 1, 2, "x"]] if f.rcp_answer is None else [f.rcp_answer[0], "junk"]
    assert evaluate(benchmark, ruleset, facts, bypass=bypass, closed=True) == plain


_TOKEN = ":::MLLOG "


@given(st.lists(st.sampled_from([_TOKEN, ":::MLLOG", "MLLOG ", ":", " ", "\n", "\r", "x", '{"key": 1}', "é"]),
                max_size=12).map("".join))
@settings(max_examples=400, deadline=None)
def test_the_readers_regex_stand_in_equals_re_sub(text: str) -> None:
    """The private module's `re.sub` gives what the real one gives on the reader's call, newlines included."""
    import re

    from mlsubmit.checker.upstream import rcp_adapted as reference

    sub = reference.module().re.sub
    assert sub(".*" + _TOKEN, _TOKEN, text) == re.sub(".*" + _TOKEN, _TOKEN, text)
    assert sub("x+", "y", text) == re.sub("x+", "y", text)  # any other call goes to re.sub
