"""Facts keep what tree checks and the scorer read, and little else: they cross process boundaries."""

from __future__ import annotations

from pathlib import Path

from fixtures.synth import RunSpec, write_run
from mlsubmit.checker.logs.facts import SERIES_KEYS, extract
from mlsubmit.checker.logs.reader import read_log


def test_call_site_metadata_is_kept_for_seeds_only(tmp_path: Path) -> None:
    log = write_run(tmp_path / "result_0.txt", RunSpec(evals=3))
    facts = extract(read_log(log, str(log)))
    (seed,) = facts.all("seed")
    assert {"file", "lineno"} <= set(seed.metadata)  # the seed check tells seeds apart by call site
    evals = facts.all("eval_accuracy")
    assert len(evals) == 3
    assert all(set(e.metadata) == {"epoch_num"} for e in evals)  # RCP and scoring read epoch_num only
    (stop,) = facts.all("run_stop")
    assert stop.metadata == {"status": "success"}
    assert facts.converged


def test_series_hold_every_occurrence_and_first_the_first(tmp_path: Path) -> None:
    log = write_run(tmp_path / "result_0.txt", RunSpec(evals=5))
    facts = extract(read_log(log, str(log)))
    evals = facts.all("eval_accuracy")
    assert facts.first["eval_accuracy"] == evals[0]
    assert [e.line for e in evals] == sorted(e.line for e in evals)
    assert "block_stop" in facts.first and "block_stop" not in facts.series  # nobody reads the whole series
    assert {"eval_accuracy", "seed", "run_stop", "init_start", "init_stop"} <= SERIES_KEYS


def test_metadata_that_is_not_an_object_is_kept_as_it_is(tmp_path: Path) -> None:
    log = tmp_path / "result_0.txt"
    log.write_text(
        ':::MLLOG {"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "run_stop", '
        '"value": null, "metadata": ["odd"]}\n'
    )
    facts = extract(read_log(log, str(log)))
    assert facts.first["run_stop"].metadata == ["odd"]
    assert facts.status is None


def test_long_values_are_kept_clipped_with_their_length_and_digest() -> None:
    """Issue 49: 10 logs with a 15 MiB submission_platform each took 1.4 GB; the facts keep a value clipped."""
    from mlsubmit.checker.logs.facts import FactsBuilder
    from mlsubmit.checker.logs.limits import VALUE_BYTES, VALUE_CHARS, clip_value
    from mlsubmit.checker.logs.reader import Record

    assert clip_value("x" * VALUE_CHARS) == ("x" * VALUE_CHARS, False)
    assert clip_value(3.5) == (3.5, False) and clip_value([1, 2]) == ([1, 2], False)
    a, b = clip_value("a" * 20_000)[0], clip_value("a" * 19_999 + "b")[0]
    assert a.startswith("a" * VALUE_CHARS + "... [clipped: 20,000 characters, sha256 ") and a != b
    listed, cut = clip_value(["x" * 100] * 500)
    assert cut and len(listed) < VALUE_CHARS + 80 and listed.endswith(f"[clipped: {500 * 103 + 1:,} characters, "
                                                                       f"sha256 {listed[-17:-1]}]")
    assert VALUE_BYTES > VALUE_CHARS
    builder = FactsBuilder()
    builder.feed([Record("submission_platform", {"value": "p" * 50_000, "metadata": {}}, 1.0, 5, 5),
                  Record("run_stop", {"value": None, "metadata": {"status": "s" * 5000, "epoch_num": 3}}, 2.0, 9, 9)])
    assert len(builder.first["submission_platform"].value) < VALUE_CHARS + 80
    stop = builder.first["run_stop"].metadata
    assert stop["epoch_num"] == 3 and stop["status"].startswith("s" * VALUE_CHARS + "... [clipped: 5,000")
    (note,) = builder.cut("x.txt")
    assert note.code == "LOG012" and note.line == 5 and "'submission_platform'" in note.message


def test_a_check_keeps_the_first_record_of_the_keys_the_tree_checks_read(tmp_path: Path) -> None:
    """40 logs of 9,000 keys each kept every key's first record: 517 MB in all (issue 54). A check keeps the first
    record of TREE_KEYS only, and the earliest record of the others when it starts the run (a log with no
    run_start is put in order by it)."""
    from mlsubmit.checker.logs.facts import TREE_KEYS, FactsBuilder

    log = write_run(tmp_path / "result_0.txt", RunSpec(evals=3))
    extra = "".join(f':::MLLOG {{"namespace": "", "time_ms": {5 + k}, "event_type": "POINT_IN_TIME", "key": '
                    f'"extra_{k}", "value": "{"v" * 1000}", "metadata": {{}}}}\n' for k in range(500))
    log.write_text(log.read_text() + extra)
    whole = extract(read_log(log, str(log)))
    builder = FactsBuilder(TREE_KEYS)
    kept = builder.facts(read_log(log, str(log), sink=builder.feed))
    assert len(whole.first) > 500 and set(kept.first) == (set(whole.first) & TREE_KEYS) | {"extra_0"}  # earliest
    assert kept.series == whole.series and kept.started_ms == whole.started_ms
    assert {"submission_platform", "config_filename", "seed", "global_batch_size"} <= TREE_KEYS
    no_start = tmp_path / "result_1.txt"
    no_start.write_text("".join(line for line in log.read_text().splitlines(keepends=True) if "run_start" not in line))
    whole = extract(read_log(no_start, str(no_start)))
    builder = FactsBuilder(TREE_KEYS)
    kept = builder.facts(read_log(no_start, str(no_start), sink=builder.feed))
    assert kept.run_start_ms is None and kept.started_ms == whole.started_ms == 5.0
