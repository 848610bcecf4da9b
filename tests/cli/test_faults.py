"""Faults: a packaging run killed with SIGKILL, four checks racing on one cache, read-only and full output folders.

None of these asserts timings. Kills land at fractions of an uninterrupted build timed on this machine, and once as
soon as the build's hidden folder appears, so some kill lands mid-build however fast the machine is; each outcome is
checked by state (the tree is absent or complete; the cache entries are whole; the exit code and message are the
documented ones).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import tree_digest
from fixtures.synth import RunSpec, write_run

ROOT = Path(__file__).resolve().parents[2]
PY = [sys.executable, "-m", "mlsubmit"]
KILL_FRACTIONS = (0.1, 0.25, 0.4, 0.55, 0.7, 0.85, 1.0, 1.5)  # of an uninterrupted build's time, after launch
MID_BUILD = "building"  # a kill sent when the build's hidden folder appears, not after a delay


def _example(root: Path) -> Path:
    from fixtures.demo import write_example

    return write_example(root).config


def _inputs_digest(root: Path) -> dict[str, str]:
    """Everything but the output, .git included (git's optional index refresh must stay off)."""
    return {k: v for k, v in tree_digest(root).items() if not k.startswith("build")}


def _package(config: Path, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*PY, "package", str(config), "--archive", *extra],
        cwd=config.parent, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A packaging example written once; tests work on copies."""
    return _example(tmp_path_factory.mktemp("example") / "ex").parent


def _copy(example: Path, dest: Path) -> Path:
    shutil.copytree(example, dest, symlinks=True)
    return dest / "package.toml"


@pytest.fixture(scope="module")
def reference_build(example: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], float]:
    """An uninterrupted build: the digest `out` must equal whenever it exists, and how long it took here."""
    config = _copy(example, tmp_path_factory.mktemp("reference") / "ex")
    started = time.monotonic()
    proc = _package(config)
    _, err = proc.communicate(timeout=300)
    took = time.monotonic() - started
    assert proc.returncode == 0, err.decode()
    return tree_digest(config.parent / "build" / "submission"), took


@pytest.fixture(scope="module")
def complete_build(reference_build: tuple[dict[str, str], float]) -> dict[str, str]:
    return reference_build[0]


@pytest.fixture(scope="module")
def kill_points(reference_build: tuple[dict[str, str], float]) -> list[float | str]:
    """When to kill: once mid-build by event, then spread over (and a little past) a build's time on this machine."""
    return [MID_BUILD, *(round(reference_build[1] * f, 3) for f in KILL_FRACTIONS)]


def _kill_at(proc: subprocess.Popen[bytes], build: Path, when: float | str) -> None:
    """SIGKILL after `when` seconds, or (MID_BUILD) as soon as a hidden build folder appears beside `out`."""
    if when == MID_BUILD:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if build.is_dir() and any(p.name.startswith(".submission.build-") for p in build.iterdir()):
                break
            time.sleep(0.002)
    else:
        time.sleep(float(when))
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)


@pytest.mark.slow
def test_kill_9_of_a_packaging_run_leaves_no_half_tree(
    tmp_path: Path, example: Path, complete_build: dict[str, str], kill_points: list[float | str]
) -> None:
    outcomes: list[str] = []
    for i, delay in enumerate(kill_points):
        config = _copy(example, tmp_path / f"try{i}")
        before = _inputs_digest(config.parent)
        _kill_at(_package(config), config.parent / "build", delay)
        out = config.parent / "build" / "submission"
        if out.exists():
            assert tree_digest(out) == complete_build, f"half-built tree after a kill at {delay}s"
            outcomes.append("complete")
        else:
            outcomes.append("absent")
        assert _inputs_digest(config.parent) == before  # inputs untouched, whenever the kill landed
        # leftovers may only be hidden build folders beside `out`, and the next run still succeeds
        leftovers = [p.name for p in (config.parent / "build").iterdir()] if (config.parent / "build").exists() else []
        assert all(name == "submission" or name.startswith(".submission.") for name in leftovers), leftovers
    print("kill -9 outcomes by delay:", dict(zip(kill_points, outcomes, strict=True)))  # shown with -s
    assert outcomes[0] == "absent"  # the kill at MID_BUILD landed mid-build: the property was exercised
    retry = _package(config)
    _, err = retry.communicate(timeout=300)
    assert retry.returncode == 0, err.decode()
    assert tree_digest(config.parent / "build" / "submission") == complete_build


@pytest.mark.slow
def test_kill_9_while_replacing_a_previous_build_keeps_a_whole_tree(
    tmp_path: Path, example: Path, complete_build: dict[str, str], kill_points: list[float | str]
) -> None:
    config = _copy(example, tmp_path / "again")
    first = _package(config)
    assert first.wait(timeout=300) == 0
    out = config.parent / "build" / "submission"
    outcomes: list[str] = []
    for delay in kill_points:
        _kill_at(_package(config), out.parent, delay)
        if out.exists():
            assert tree_digest(out) == complete_build
            outcomes.append("whole tree in out")
        else:  # killed between the two renames: the previous tree waits, whole, in a hidden folder beside it
            olds = list(out.parent.glob(".submission.old-*/tree"))
            assert olds and tree_digest(olds[0]) == complete_build
            outcomes.append("previous tree set aside")
    print("kill -9 over a previous build, by delay:", dict(zip(kill_points, outcomes, strict=True)))  # with -s


# --- two checks sharing one cache ------------------------------------------------------------------------------


def _tree_of_logs(root: Path, count: int) -> Path:
    for i in range(count):
        spec = RunSpec(seed=i, converge=i % 5 != 0, start_ms=1_620_000_000_000 + i * 3_600_000)
        write_run(root / "logs" / f"run{i:02d}" / "result_0.txt", spec)
    return root / "logs"


def _check(logs: Path, cache: Path | None, *extra: str) -> subprocess.Popen[str]:
    caching = ["--cache", str(cache)] if cache is not None else []
    cmd = [*PY, "check", "--ruleset", "1.0.0", "--format", "json", *caching, *extra, str(logs)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _comparable(out: str) -> dict[str, object]:
    report = json.loads(out)
    return {"files": report["files"], "findings": report["findings"], "summary": report["summary"]}


@pytest.mark.slow
def test_four_checks_sharing_a_cache_leave_it_consistent(tmp_path: Path) -> None:
    logs = _tree_of_logs(tmp_path, 16)
    cold = _check(logs, None)
    expected_out, err = cold.communicate(timeout=300)
    assert cold.returncode == 1, err
    expected = _comparable(expected_out)
    cache = tmp_path / "cache"
    for _round in range(2):  # cold racing writers, then racing readers and writers
        racers = [_check(logs, cache, "-j", jobs) for jobs in ("2", "1", "2", "1")]
        for proc in racers:
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == 1, err
            assert _comparable(out) == expected
    # the cache's entries: every file but the .gitignore a cache folder mlsubmit makes gets
    entries = [p for p in cache.rglob("*") if p.is_file() and p.name != ".gitignore"]
    assert entries, "the cache was not written"
    assert (cache / ".gitignore").read_text(encoding="utf-8").endswith("*\n")
    assert not [p for p in entries if p.name.startswith(".tmp-")], "a temporary file was left behind"
    from mlsubmit.checker.base.cache import MISS, load_entry

    for entry in entries:  # every entry whole and valid under its own key, never interleaved
        key = json.loads(entry.read_bytes().partition(b"\n")[0])["key"]
        assert load_entry(cache, entry, key) is not MISS, entry
    warm = _check(logs, cache)
    out, _ = warm.communicate(timeout=300)
    assert _comparable(out) == expected


def test_a_corrupt_cache_entry_is_a_miss_not_a_wrong_answer(tmp_path: Path) -> None:
    logs = _tree_of_logs(tmp_path, 2)
    cache = tmp_path / "cache"
    proc = _check(logs, cache)
    expected, _ = proc.communicate(timeout=300)
    for entry in (p for p in cache.rglob("*.json") if p.is_file()):
        entry.write_text('{"display": "x", "findings": [')  # cut mid-write, as a crash without atomic writes would
    proc = _check(logs, cache)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, err
    assert _comparable(out) == _comparable(expected)


# --- read-only and full output folders ---------------------------------------------------------------------------


@contextmanager
def _tmpfs(where: Path, options: str) -> Iterator[Path]:
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root and mount rights): {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        yield ro
        ro.chmod(0o755)
        return
    with _tmpfs(tmp_path / "ro", "ro,size=64k") as ro:  # root ignores mode bits: use a read-only mount
        yield ro


@pytest.fixture
def full_dir(tmp_path: Path) -> Iterator[Path]:
    with _tmpfs(tmp_path / "full", "size=64k") as full:
        fd = os.open(full / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass  # ENOSPC: the disk is full now
        finally:
            os.close(fd)
        yield full


def _many_findings(tmp_path: Path) -> Path:
    bad = tmp_path / "bad"
    for i in range(30):
        write_run(bad / f"r{i}" / "result_0.txt", RunSpec(converge=False, omit=("seed", "eval_samples")))
    return bad


@pytest.mark.parametrize("fmt", ["json", "sarif", "junit", "text"])
def test_report_into_a_read_only_folder_is_exit_2(
    run_cli: Callable[..., tuple[int, str, str]], make_run: Callable[..., Path], read_only_dir: Path, fmt: str
) -> None:
    log = make_run("result_0.txt")
    code, _, err = run_cli("check", "--ruleset", "1.0.0", "--format", fmt, "-o", read_only_dir / "r.out", log)
    assert code == 2
    assert f"cannot write {read_only_dir / 'r.out'}" in err
    assert "Read-only file system" in err or "Permission denied" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("fmt", ["json", "sarif", "junit", "github"])
def test_report_onto_a_full_disk_is_exit_2(
    run_cli: Callable[..., tuple[int, str, str]], tmp_path: Path, full_dir: Path, fmt: str
) -> None:
    code, _, err = run_cli("check", "--ruleset", "1.0.0", "--format", fmt, "-o", full_dir / "r.out",
                             _many_findings(tmp_path))
    assert code == 2, err
    assert "No space left on device" in err
    assert "internal error" not in err


def test_package_into_a_read_only_folder_is_exit_2(tmp_path: Path, example: Path, read_only_dir: Path) -> None:
    config = _copy(example, tmp_path / "ex")
    text = config.read_text().replace('out = "build/submission"', f'out = "{read_only_dir / "submission"}"')
    config.write_text(text)
    before = _inputs_digest(config.parent)
    done = subprocess.run([*PY, "package", str(config)], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2, done.stderr
    assert "Read-only file system" in done.stderr or "Permission denied" in done.stderr
    assert "internal error" not in done.stderr
    assert _inputs_digest(config.parent) == before


def _package_onto(full_dir: Path, example: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    config = _copy(example, tmp_path / "ex")
    text = config.read_text().replace('out = "build/submission"', f'out = "{full_dir / "submission"}"')
    config.write_text(text)
    return subprocess.run([*PY, "package", str(config), "--archive"], capture_output=True, text=True, timeout=300,
                          check=False)


def test_package_onto_a_full_disk_is_exit_2_and_leaves_no_tree(tmp_path: Path, example: Path, full_dir: Path) -> None:
    done = _package_onto(full_dir, example, tmp_path)
    assert done.returncode == 2, done.stderr  # was an internal error (exit 3) until this test found it
    assert "No space left on device" in done.stderr
    assert "internal error" not in done.stderr
    assert not (full_dir / "submission").exists()


def test_package_onto_a_full_disk_leaves_no_build_folder(tmp_path: Path, example: Path, full_dir: Path) -> None:
    _package_onto(full_dir, example, tmp_path)
    assert sorted(p.name for p in full_dir.iterdir()) == ["filler"]
