"""Raw run output -> result files: record extraction, run counts, convergence and median-window selection."""

from __future__ import annotations

import gzip
import io
import math
from pathlib import Path

import pytest
from fixtures.demo import write_runs
from fixtures.synth import RunSpec, render
from mlsubmit.checker.logs.input import MAX_LINE, record_lines
from mlsubmit.checker.logs.reader import read_log
from mlsubmit.submission.package_config import load_config
from mlsubmit.submission.run_selection import collect, olympic, stage_run

REC_A = b':::MLLOG {"namespace": "", "time_ms": 1, "key": "a", "value": 1, "metadata": {}}'
REC_B = b':::MLLOG {"namespace": "", "time_ms": 2, "key": "b", "value": 2, "metadata": {}}'


def lines(data: bytes) -> list[bytes]:
    return list(record_lines(io.BytesIO(data)))


# --- record extraction -------------------------------------------------------------------------------------------


def test_records_are_copied_byte_exact_without_prefixes_or_other_output() -> None:
    raw = b"starting job\n[1,0]<stdout>:" + REC_A + b"\r\nstep 1 loss 3.2\n0: " + REC_B + b"   \n"
    assert lines(raw) == [REC_A, REC_B]


def test_bare_cr_separates_records_and_the_last_token_wins() -> None:
    raw = REC_A + b"\r" + REC_B + b"\n" + b"junk :::MLLOG broken " + REC_A + b"\n"
    assert lines(raw) == [REC_A, REC_B, REC_A]


def test_broken_records_are_kept_so_the_check_still_sees_them() -> None:
    cut = REC_A[:40]
    assert lines(cut + b"\n" + REC_B) == [cut, REC_B]


def test_overlong_lines_are_skipped_like_the_reader_skips_them() -> None:
    raw = b"x" * (MAX_LINE + 10) + REC_A + b"\n" + REC_B + b"\n"
    assert lines(raw) == [REC_B]


def test_extracted_records_parse_to_the_same_records_as_the_raw_output(tmp_path: Path) -> None:
    text = render(RunSpec(benchmark="bert", ruleset="1.1.0", raw_output=True, crlf=True)).encode()
    raw = tmp_path / "job.out"
    raw.write_bytes(b"banner\n" + text)
    run, problems = stage_run(raw, "job.out", tmp_path / "staged.txt")
    assert problems == [] and run is not None
    staged = (tmp_path / "staged.txt").read_bytes()
    assert b"<stdout>" not in staged and b"\r" not in staged and b"loss=" not in staged
    original = [(r.key, r.value, r.timestamp) for r in read_log(raw).records]
    copied = [(r.key, r.value, r.timestamp) for r in read_log(tmp_path / "staged.txt").records]
    assert copied == original and run.records == len(original)


def test_gzipped_output_is_read_and_its_own_hash_recorded(tmp_path: Path) -> None:
    plain = render(RunSpec(benchmark="resnet", ruleset="1.1.0")).encode()
    source = tmp_path / "job.out.gz"
    source.write_bytes(gzip.compress(plain, mtime=0))
    run, problems = stage_run(source, "job.out.gz", tmp_path / "staged.txt")
    assert problems == [] and run is not None
    import hashlib

    assert run.source_sha256 == hashlib.sha256(source.read_bytes()).hexdigest()
    assert (tmp_path / "staged.txt").read_bytes() == plain  # mllog output is records only, one per line


def test_damaged_gzip_and_non_runs_are_findings(tmp_path: Path) -> None:
    bad = tmp_path / "cut.out.gz"
    bad.write_bytes(gzip.compress(render(RunSpec()).encode())[:200])
    run, problems = stage_run(bad, "cut.out.gz", tmp_path / "s1.txt")
    assert run is None and [f.code for f in problems] == ["PKG002"]
    other = tmp_path / "notes.txt"
    other.write_text("nothing to see\n")
    run, problems = stage_run(other, "notes.txt", tmp_path / "s2.txt")
    assert run is None and [f.code for f in problems] == ["PKG003"]


@pytest.mark.parametrize("limit", ["bytes", "records"])
def test_package_stops_reading_raw_output_where_check_stops(tmp_path: Path, limit: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 35: package read raw output past the 4 GiB at which check stops (LOG012). One home for the limits
    (checker/logs/limits.py): the same bytes give the same records and the same LOG012 in both."""
    from mlsubmit.checker.logs import input as log_input
    from mlsubmit.checker.logs import limits, reader
    from mlsubmit.checker.logs.reader import Record

    text = render(RunSpec(benchmark="resnet", ruleset="1.1.0", raw_output=True, evals=20)).encode()
    source = tmp_path / "job.out.gz"
    source.write_bytes(gzip.compress(b"banner\n" + b"\n" * 300 + text, mtime=0))
    total = len(read_log(source, unpack=True).records)
    for module in (log_input, reader):
        monkeypatch.setattr(module, "CHUNK", 256)  # the limits at a small scale: 256-byte chunks
    monkeypatch.setattr(limits, "MAX_BYTES" if limit == "bytes" else "MAX_RECORDS", 2000 if limit == "bytes" else 9)
    seen: list[Record] = []
    checked = read_log(source, "job.out.gz", unpack=True, sink=seen.extend)
    said = [(f.message, f.line) for f in checked.findings if f.code == "LOG012"]
    assert len(said) == 1 and 0 < len(seen) < total
    run, problems = stage_run(source, "job.out.gz", tmp_path / "staged.txt")
    assert run is not None and [(f.code, f.message, f.line) for f in problems] == [("LOG012", *said[0])]
    assert run.raw_lines == [r.line for r in seen] and run.records == len(seen)


# --- olympic scoring ---------------------------------------------------------------------------------------------


def test_olympic_drops_fastest_and_slowest() -> None:
    assert olympic([10, 20, 30, 40, 50], "resnet") == 30
    assert olympic([10, 20, 30, 40, math.inf], "resnet") == 30  # one failed run is the slowest, dropped
    assert math.isinf(olympic([10, 20, 30, math.inf, math.inf], "resnet"))


def test_olympic_unet3d_drops_four_each_side() -> None:
    times = [float(t) for t in range(1, 41)]
    assert olympic(times, "unet3d") == sum(range(5, 37)) / 32
    assert not math.isinf(olympic(times[:36] + [math.inf] * 4, "unet3d"))
    assert math.isinf(olympic(times[:35] + [math.inf] * 5, "unet3d"))


# --- selection through a config ----------------------------------------------------------------------------------


def _config(tmp_path: Path, *, ruleset: str = "1.1.0", select: str = "all", logs: str = '["runs/*"]',
            benchmark: str = "resnet") -> Path:
    cfg = tmp_path / "package.toml"
    cfg.write_text(
        f'org = "Graphcore"\nruleset = "{ruleset}"\nout = "out"\n\n[[results]]\nsystem = "pod64"\n'
        f'benchmark = "{benchmark}"\nlogs = {logs}\nselect = "{select}"\n'
    )
    return cfg


def _collect(tmp_path: Path, **kw: str):  # type: ignore[no-untyped-def]
    cfg = load_config(_config(tmp_path, **kw))
    staging = tmp_path / "staging"
    staging.mkdir(exist_ok=True)
    return collect(cfg, cfg.results[0], staging)


def codes(sel) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(f.code for f in sel.findings)


def test_exact_count_is_packaged_in_run_start_order(tmp_path: Path) -> None:
    paths = write_runs(tmp_path / "runs", "resnet", "IPU-POD64", 5, gzip_index=1)
    # File names sort in the opposite order of start times: the order must come from run_start.
    for k, p in enumerate(paths):
        p.rename(p.with_name(f"z{9 - k}-{p.name}"))
    sel = _collect(tmp_path)
    assert codes(sel) == []
    starts = [r.start_ms for r in sel.chosen]
    assert starts == sorted(starts) and len(sel.chosen) == 5
    assert sel.score == pytest.approx(olympic([r.minutes for r in sel.chosen], "resnet"))


def test_too_few_runs_is_an_error(tmp_path: Path) -> None:
    write_runs(tmp_path / "runs", "resnet", "IPU-POD64", 4)
    sel = _collect(tmp_path)
    assert codes(sel) == ["PKG004"]
    assert "4 usable run(s), the rules ask for 5" in sel.findings[0].message


def test_too_many_runs_without_a_declared_selection_keeps_them_all(tmp_path: Path) -> None:
    write_runs(tmp_path / "runs", "resnet", "IPU-POD64", 7)
    sel = _collect(tmp_path)
    assert codes(sel) == ["PKG005"] and len(sel.chosen) == 7 and sel.excluded == []


def test_median_window_scores_the_median_window_and_reports_the_rest(tmp_path: Path) -> None:
    # 7 runs -> 3 windows of 5; minutes chosen so the windows' olympic means are 21, 31 and 41 minutes.
    minutes = [10, 20, 20, 20, 40, 40, 40]
    write_runs(tmp_path / "runs", "resnet", "IPU-POD64", 7, minutes=[float(m) for m in minutes])
    sel = _collect(tmp_path, select="median-window")
    windows = sorted(olympic(minutes[i : i + 5], "resnet") for i in range(3))
    assert sel.score == pytest.approx(windows[1])
    assert [r.minutes for r in sel.chosen] == pytest.approx([20, 20, 20, 40, 40], abs=1e-3)  # window starting at run 1
    assert codes(sel) == ["PKG008", "PKG008"]
    assert sorted(r.display for r, _ in sel.excluded) == ["runs/job_00.out", "runs/job_06.out"]


def test_median_window_is_invalid_when_the_median_window_is(tmp_path: Path) -> None:
    write_runs(tmp_path / "runs", "resnet", "IPU-POD64", 6, non_converged=(1, 2, 3, 4))
    sel = _collect(tmp_path, select="median-window")
    assert "PKG007" in codes(sel)


def test_median_window_does_not_exist_before_ruleset_1_1(tmp_path: Path) -> None:
    write_runs(tmp_path / "runs", "resnet", "IPU-POD64", 6, ruleset="1.0.0")
    sel = _collect(tmp_path, select="median-window", ruleset="1.0.0")
    assert codes(sel) == ["PKG012"] and len(sel.chosen) == 6
    (tmp_path / "runs" / "job_05.out").unlink()  # exactly N runs: there is nothing to choose
    sel = _collect(tmp_path, select="median-window", ruleset="1.0.0")
    assert codes(sel) == [] and len(sel.chosen) == 5


def test_one_non_converged_run_is_reported_two_make_the_result_invalid(tmp_path: Path) -> None:
    write_runs(tmp_path / "one" / "runs", "resnet", "IPU-POD64", 5, non_converged=(2,))
    sel = _collect(tmp_path / "one")
    assert codes(sel) == ["PKG006"] and sel.findings[0].path == "runs/job_02.out"
    assert sel.findings[0].line is not None
    write_runs(tmp_path / "two" / "runs", "resnet", "IPU-POD64", 5, non_converged=(2, 3))
    sel = _collect(tmp_path / "two")
    assert codes(sel) == ["PKG006", "PKG006", "PKG007"]


def test_duplicates_wrong_benchmark_and_empty_patterns(tmp_path: Path) -> None:
    paths = write_runs(tmp_path / "runs", "resnet", "IPU-POD64", 5)
    (tmp_path / "runs" / "copy.out").write_bytes(paths[0].read_bytes())
    write_runs(tmp_path / "bert", "bert", "IPU-POD64", 1)
    sel = _collect(tmp_path, logs='["runs/*", "bert/*", "nothing/*.log"]')
    assert codes(sel) == ["PKG001", "PKG005", "PKG009", "PKG010"]
    dup = next(f for f in sel.findings if f.code == "PKG010")
    assert {dup.path, dup.related[0].path} == {"runs/copy.out", "runs/job_00.out"}
    wrong = next(f for f in sel.findings if f.code == "PKG009")
    assert wrong.path == "bert/job_00.out" and wrong.line is not None
    assert next(f for f in sel.findings if f.code == "PKG001").pointer == "/results/0/logs/2"


def test_unknown_benchmark_has_no_run_count(tmp_path: Path) -> None:
    write_runs(tmp_path / "runs", "resnet", "IPU-POD64", 2)
    sel = _collect(tmp_path, benchmark="gpt9")
    assert "PKG013" in codes(sel)


def test_a_broad_pattern_never_picks_up_a_previous_build(tmp_path: Path) -> None:
    write_runs(tmp_path / "runs", "resnet", "IPU-POD64", 5)
    old = tmp_path / "out" / "Org" / "results" / "pod64" / "resnet"
    old.mkdir(parents=True)
    (old / "result_0.txt").write_bytes((tmp_path / "runs" / "job_00.out").read_bytes() + b"\n")
    building = tmp_path / ".out.build-abc" / "x.out"
    building.parent.mkdir()
    building.write_bytes(b":::MLLOG {}\n")
    sel = _collect(tmp_path, logs='["**/*.out", "**/*.txt", "**/.*/*"]')
    assert len(sel.chosen) == 5 and codes(sel) == ["PKG001", "PKG001"]
    assert all("only files of a previous build" in f.message for f in sel.findings)
