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
