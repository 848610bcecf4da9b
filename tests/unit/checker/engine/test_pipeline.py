"""The pool: workers and this process share the logs, tree preparation runs beside them, results stay in order."""

from __future__ import annotations

from pathlib import Path

import mlsubmit.checker.base.pool as pool
import mlsubmit.checker.engine.pipeline as pipeline
import pytest
from fixtures.treefix import build_org, resnet_runs
from mlsubmit.checker.engine.pipeline import POOL_THRESHOLD, CheckOptions, run_check, run_rounds


@pytest.fixture(scope="module")
def org(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three closed ResNet-50 folders of five runs (one run too slow in the last), enough logs for a pool."""
    root = tmp_path_factory.mktemp("pool") / "training_results_v1.0" / "Graphcore"
    runs = {("pod16", "resnet"): resnet_runs([36, 37, 37, 38, 39]),
            ("pod64", "resnet"): resnet_runs([37, 37, 38, 38, 39]),
            ("pod128", "resnet"): resnet_runs([20, 37, 38, 38, 39])}  # fmt: skip
    return build_org(root, runs)


def _findings(options: CheckOptions, org: Path) -> tuple[dict[str, list[object]], list[object]]:
    report = run_check([str(org)], options).report.sorted()
    return dict(report.files), list(report.tree)


def test_a_pool_gives_what_one_process_gives(org: Path) -> None:
    assert len(list(org.glob("results/*/*/result_*.txt"))) >= POOL_THRESHOLD
    alone = _findings(CheckOptions(ruleset="1.0.0", jobs=1), org)
    assert _findings(CheckOptions(ruleset="1.0.0", jobs=2), org) == alone
    assert _findings(CheckOptions(ruleset="1.0.0", jobs=3), org) == alone
    codes = {f.code for fs in alone[0].values() for f in fs} | {f.code for f in alone[1]}  # type: ignore[attr-defined]
    assert codes  # not a vacuous comparison: the tree has findings


def test_this_process_checks_logs_too(org: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import os
    import time

    parent = os.getpid()
    here: list[str] = []
    real = pipeline._check_and_store
    reached = tmp_path / "this-process-reached-a-log"

    def counting(ref, options, sha):  # type: ignore[no-untyped-def]
        if os.getpid() == parent:
            here.append(ref.display)  # counts only calls in this process: the workers have their own copy
            reached.touch()
        else:
            # A worker waits for this process to reach a log: on a loaded machine the workers could otherwise take
            # all 15 small logs before this process took one, and the test failed alone (0 < 0).
            deadline = time.monotonic() + 60
            while not reached.exists() and time.monotonic() < deadline:
                time.sleep(0.01)
        return real(ref, options, sha)

    monkeypatch.setattr(pipeline, "_check_and_store", counting)
    run = run_check([str(org)], CheckOptions(ruleset="1.0.0", jobs=2))
    assert len(run.results) == 15
    assert 0 < len(here) <= 15


def test_preparation_runs_once_beside_the_pool(org: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def prep(tree, options):  # type: ignore[no-untyped-def]
        calls.append(tree.display)

    monkeypatch.setattr(pipeline, "org_preparations", lambda options: [prep])
    run_rounds({"1.0.0": [str(org)]}, CheckOptions(ruleset="1.0.0", jobs=2))
    assert calls == [str(org)]


def test_an_error_in_the_preparation_reaches_the_caller(org: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def prep(tree, options):  # type: ignore[no-untyped-def]
        raise RuntimeError("prep broke")

    monkeypatch.setattr(pipeline, "org_preparations", lambda options: [prep])
    with pytest.raises(RuntimeError, match="prep broke"):
        run_check([str(org)], CheckOptions(ruleset="1.0.0", jobs=2))
    assert run_check([str(org)], CheckOptions(ruleset="1.0.0", jobs=1)).results  # no pool: nothing prepared


def test_prepared_system_files_are_used_once(org: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mlsubmit.checker.systems.agreement as agreement

    checked: list[str] = []
    real = agreement.check_system_file

    def counting(path, shown, ruleset):  # type: ignore[no-untyped-def]
        checked.append(shown)
        return real(path, shown, ruleset)

    monkeypatch.setattr(agreement, "check_system_file", counting)
    run = run_check([str(org)], CheckOptions(ruleset="1.0.0", jobs=2))
    assert sorted(checked) == sorted(p for p in run.report.files if "/systems/" in p)
    assert len(checked) == 3


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_hygiene_scan_runs_once(org: Path, monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    """With a pool it runs in the preparation, beside the log checks; without one, in the tree check."""
    import mlsubmit.checker.hygiene.scan as hygiene

    (org / "benchmarks" / "notes.txt~").parent.mkdir(exist_ok=True)
    (org / "benchmarks" / "notes.txt~").write_text("editor backup")
    scans: list[str] = []
    real = hygiene.scan

    def counting(root, display, **kwargs):  # type: ignore[no-untyped-def]
        scans.append(display)
        return real(root, display, **kwargs)

    monkeypatch.setattr(hygiene, "scan", counting)
    try:
        run = run_check([str(org)], CheckOptions(ruleset="1.0.0", jobs=jobs))
    finally:
        (org / "benchmarks" / "notes.txt~").unlink()
    assert scans == [str(org)]
    assert any(f.path.endswith("notes.txt~") for f in run.report.tree)


@pytest.mark.parametrize("how", ["raises", "dies"])
def test_a_failing_worker_is_an_error_here(org: Path, monkeypatch: pytest.MonkeyPatch, how: str,
                                           tmp_path: Path) -> None:
    import os
    import time

    parent = os.getpid()
    real = pipeline._check_and_store
    reached = tmp_path / "worker-reached-a-log"

    def flaky(ref, options, sha):  # type: ignore[no-untyped-def]
        if os.getpid() != parent:  # only in the worker
            reached.touch()
            if how == "dies":
                os._exit(7)
            raise ValueError("worker broke")
        # This process waits for the worker to reach a log: the worker first takes the secret scan from the back,
        # and a fast check of these small logs would otherwise leave it none.
        deadline = time.monotonic() + 60
        while not reached.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        return real(ref, options, sha)

    monkeypatch.setattr(pipeline, "_check_and_store", flaky)
    want = "worker broke" if how == "raises" else "ended without reporting"
    with pytest.raises(pool.WorkerError, match=want):
        run_check([str(org)], CheckOptions(ruleset="1.0.0", jobs=2))


def test_a_worker_that_dies_holding_the_counter_does_not_hang_the_run(org: Path, monkeypatch: pytest.MonkeyPatch
                                                                      ) -> None:
    """The next log's index travels through a pipe; a worker killed between reading it and handing it on would
    leave this process waiting for it, unless the receiver puts an end value in its place."""
    import os

    parent = os.getpid()
    real = pool._Counter.take

    def take(self, **kwargs):  # type: ignore[no-untyped-def]
        if os.getpid() != parent:
            os.read(self._read, 16)  # holds the pair, never hands it on
            os._exit(9)
        return real(self, **kwargs)

    monkeypatch.setattr(pool._Counter, "take", take)
    with pytest.raises(pool.WorkerError, match="ended without reporting"):
        run_check([str(org)], CheckOptions(ruleset="1.0.0", jobs=2))


def test_the_counter_hands_out_every_index_once_across_processes() -> None:
    """This process from the front, a forked one from the back, until none is left; then None for both."""
    import os

    counter = pool._Counter(1000)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: take from the back until none is left, report them
        taken = []
        while (i := counter.take(from_back=True)) is not None:
            taken.append(i)
        os.write(write, b",".join(b"%d" % i for i in taken) + b"\n")
        os._exit(0)
    mine = []
    while (i := counter.take()) is not None:
        mine.append(i)
    os.waitpid(pid, 0)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        theirs = [int(x) for x in fh.read().strip().split(b",") if x]
    assert counter.take() is None and counter.take(from_back=True) is None
    counter.close()
    assert mine == sorted(mine) and theirs == sorted(theirs, reverse=True)  # each end in its order
    assert sorted(mine + theirs) == list(range(1000))


def test_the_command_runs_without_the_cyclic_collector_and_main_leaves_it_alone(monkeypatch: pytest.MonkeyPatch
                                                                                ) -> None:
    import gc

    from mlsubmit.cli import entry as cli

    seen: list[bool] = []
    monkeypatch.setattr(cli, "main", lambda argv=None: seen.append(gc.isenabled()) or 0)
    assert gc.isenabled()
    try:
        assert cli.console() == 0
        assert seen == [False]
        assert gc.get_freeze_count() > 0  # frozen for the exit: Python's last collection skips it all
    finally:
        gc.unfreeze()
        gc.enable()


def test_loose_logs_skip_their_facts_only_when_the_caller_reads_only_reports(org: Path, tmp_path: Path) -> None:
    import shutil

    from mlsubmit.checker.engine.pipeline import run_rounds

    loose = tmp_path / "result_0.txt"  # outside the tree
    shutil.copy(next(org.glob("results/*/*/result_*.txt")), loose)
    paths = [str(loose), str(org)]
    full = run_rounds({"1.0.0": paths}, CheckOptions(ruleset="1.0.0", jobs=1))[0]
    lean = run_rounds({"1.0.0": paths}, CheckOptions(ruleset="1.0.0", jobs=1), loose_facts=False)[0]
    cached = run_rounds({"1.0.0": paths}, CheckOptions(ruleset="1.0.0", jobs=1, cache_dir=tmp_path / "cache"),
                        loose_facts=False)[0]
    (shown,) = [ref.display for ref in lean.targets.loose_logs]
    assert full.results[shown].facts.first and cached.results[shown].facts.first  # a cache keeps whole facts
    assert not lean.results[shown].facts.first and lean.results[shown].findings == full.results[shown].findings
    for ref in lean.targets.orgs[0].logs:  # logs of the tree keep theirs: the tree checks read them
        assert lean.results[ref.display].facts == full.results[ref.display].facts
    assert lean.report.files == full.report.files and lean.report.tree == full.report.tree


def test_a_result_that_does_not_unpickle_is_a_worker_error(org: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    parent = os.getpid()
    real = pool._send

    def garbled(out, message):  # type: ignore[no-untyped-def]
        if os.getpid() != parent and message is not None:
            out.write((5).to_bytes(8, "little") + b"junk!")
            out.flush()
            return
        real(out, message)

    monkeypatch.setattr(pool, "_send", garbled)
    with pytest.raises(pool.WorkerError, match=r"UnpicklingError|unpickl"):
        run_check([str(org)], CheckOptions(ruleset="1.0.0", jobs=2))


@pytest.mark.parametrize("jobs", [1, 2])
def test_progress_goes_to_the_callers_tracker(org: Path, jobs: int) -> None:
    """The checker draws nothing itself: it reports to the Tracker it is given (the CLI gives its terminal bar)."""
    from contextlib import contextmanager

    opened: list[tuple[int, str]] = []
    advanced: list[str] = []

    @contextmanager
    def tracker(total, label):  # type: ignore[no-untyped-def]
        opened.append((total, label))
        yield lambda: advanced.append(label)

    from mlsubmit.checker.hygiene import scan as hygiene

    walked = hygiene.walk(org, secrets_under=("benchmarks", "benchmark"))
    assert walked is not None and walked.secret_paths  # the code is scanned by the same pool, on the same bar
    run_check([str(org)], CheckOptions(ruleset="1.0.0", jobs=jobs), progress=tracker)
    total = 15 + len(walked.secret_paths)
    assert opened == [(total, "checking logs and code")]
    done = advanced.count("checking logs and code")
    assert 0 < done <= total if jobs > 1 else done == total  # a pool's bar counts this process's share
