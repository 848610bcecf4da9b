"""Issue 54, hostile input, fourth round: each attack is a finding or exit 2, within 300 MB, in bounded time, with
nothing written outside and inert output. Memory is the peak of the command run in a child process."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import subprocess
import sys
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from conftest import ROOT
from fixtures.synth import write_run

PEAK_LIMIT_MB = 300
# Runs the command and writes its peak resident size (kB on Linux) to the file named first.
_PEAK = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[2:]).returncode; "
         "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)); sys.exit(code)")


@dataclass(frozen=True)
class Ran:
    code: int
    out: str
    err: str
    peak_mb: float


def measured(*args: str | Path, cwd: Path, timeout: float = 300, tmp: Path | None = None) -> Ran:
    """`mlsubmit ARGS` in a child process (with `tmp` as its temporary folder): exit code, output, peak memory."""
    peak = cwd / ".peak"
    done = subprocess.run([sys.executable, "-c", _PEAK, str(peak), sys.executable, "-m", "mlsubmit",
                           *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "NO_COLOR": "1", **({"TMPDIR": str(tmp)} if tmp else {})})
    kb = int(peak.read_text())
    peak.unlink()
    return Ran(done.returncode, done.stdout, done.stderr, kb / 1024)


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return write_run(tmp_path / "result_0.txt")


def _dotted_keys(size: int) -> str:
    """`kN.a.a...a = 1` with 30 parts a key: within the parts bound, but each line builds 29 tables."""
    lines, total, i = [], 0, 0
    while total < size:
        line = f"k{i}." + ".".join(["a"] * 29) + " = 1\n"
        lines.append(line)
        total, i = total + len(line), i + 1
    return "".join(lines)


def test_case6_a_prices_file_that_builds_too_much_is_refused(tmp_path: Path, log: Path) -> None:
    # 4 MiB, the prices file's own limit: 851-873 MB before the bound counted what tomllib builds
    prices = tmp_path / "prices.toml"
    prices.write_text(_dotted_keys((4 << 20) - 100))
    ran = measured("report", "--ruleset", "4.1.0", "--prices", prices, log, cwd=tmp_path)
    assert ran.code == 2, ran.err
    assert "cannot read prices: more tables, keys and values than allowed" in ran.err
    assert "weigh more than 1,200,000" in ran.err
    assert ran.peak_mb < PEAK_LIMIT_MB


def test_case7_a_waiver_file_that_builds_too_much_is_refused(tmp_path: Path, log: Path) -> None:
    # 6 MiB: 1.26 GB and 35 s before (32 MiB, the waiver file's limit: 5.9 GB)
    waivers = tmp_path / "waivers.toml"
    waivers.write_text(_dotted_keys(6 << 20))
    ran = measured("check", "--ruleset", "4.1.0", "--waivers", waivers, log, cwd=tmp_path)
    assert ran.code == 2, ran.err
    assert "waivers.toml: not TOML: more tables, keys and values than allowed" in ran.err
    assert ran.peak_mb < PEAK_LIMIT_MB


_RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")  # what no output may carry


def test_case5_names_in_notices_and_usage_errors_are_inert(
        tmp_path: Path, log: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Callable[..., tuple[int, str, str]]
) -> None:
    monkeypatch.chdir(tmp_path)
    hostile = "note\x1b[2J\nx: PASS.txt"
    (tmp_path / hostile).write_text("notes, no records\n")
    code, out, err = run_cli("check", "--ruleset", "4.1.0", "--skip-non-logs", hostile, log.name)
    assert code == 1, err  # one run of five: the olympic score's finding
    assert "passed over 1 file(s) without :::MLLOG records: note\\x1b[2J\\nx: PASS.txt\n" in err
    assert not _RAW.search(out + err) and err.count("\n") == 1
    code, _, err = run_cli("check", "--ruleset", "4.1.0", "gone\x1b[31m\nred.txt")
    assert code == 2
    assert err == "mlsubmit: error: gone\\x1b[31m\\nred.txt: no such file or folder\n"


def _adoc(cells: str) -> str:
    return f"== Hyperparameters\n|===\n|Model |Name |Constraint\n{cells}\n|===\n"


def test_case13_a_long_heading_is_read_in_linear_time(tmp_path: Path) -> None:
    # `= x`, 60,000 spaces, `y`: 37-54 s before (the heading pattern backtracked); 1 MiB of them would take hours
    rules = tmp_path / "training_rules_v9.9.adoc"
    # and a row continued on 100,000 lines (each joined to the row so far: quadratic too)
    rules.write_text("= x" + " " * (1 << 20) + "y\n" + _adoc("|bert |lr |odd" + "\nx" * 100_000))
    ran = measured("rounds", "draft", "--from", "5.0", "-o", tmp_path / "d.yaml", rules, cwd=tmp_path, timeout=60)
    assert ran.code == 1, ran.err
    assert "1 rows, 0 carried" in ran.out
    assert "unread L5 bert lr: odd x x x" in ran.out
    assert ran.peak_mb < PEAK_LIMIT_MB


def test_case14_draft_cells_are_inert_on_stdout_and_in_the_draft(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Callable[..., tuple[int, str, str]]
) -> None:
    monkeypatch.chdir(tmp_path)
    rules = tmp_path / "training_rules_v9.9.adoc"
    rules.write_text(_adoc("|bert\x1b[31m |lr\x1b]8;;http://x\x1b\\ |odd \x1b[2J\u202e text"))
    code, out, err = run_cli("rounds", "draft", "--from", "5.0", "-o", "d.yaml", rules)
    assert code == 1, err
    assert "  unread L4 bert\\x1b[31m lr\\x1b]8;;http://x\\x1b\\: odd \\x1b[2J\\u202e text\n" in out
    draft = (tmp_path / "d.yaml").read_text(encoding="utf-8")
    assert "#   UNREAD L4 bert\\x1b[31m lr\\x1b]8;;http://x\\x1b\\: odd \\x1b[2J\\u202e text\n" in draft
    assert not _RAW.search(out + err + draft)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.yaml", rules.name]


def test_case16_an_archive_of_long_member_names_is_refused_from_its_headers(tmp_path: Path) -> None:
    # 3,000 members of 100 KB PAX names (556 KB): 651 MB and 105 s before, and a 301 MB JSON report
    archive = tmp_path / "long.tar.gz"
    with tarfile.open(archive, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for i in range(3000):
            tar.addfile(tarfile.TarInfo(f"org/{i}/" + "a" * 100_000), io.BytesIO(b""))
    report = tmp_path / "report.json"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    ran = measured("verify", "--format", "json", "-o", report, archive, cwd=tmp_path, timeout=120, tmp=scratch)
    assert ran.code == 1, ran.err
    found = json.loads(report.read_text())["findings"]
    assert [(f["code"], f["message"]) for f in found if f["severity"] == "error"] == [
        ("PKG044", "not unpacked: a member's name has 100,006 bytes (more than 4,096)")]
    assert report.stat().st_size < 10_000
    assert ran.peak_mb < PEAK_LIMIT_MB
    assert not any(scratch.iterdir())  # its private folder is gone
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.tar.gz", "report.json", "tmp"]


def _pre_commit_argv(hook_id: str, args: list[str], staged: list[str]) -> list[str]:
    """What pre-commit runs for a hook of ours: its entry, then the user's args, then the staged files its `files`
    and `exclude` patterns select."""
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}
    hook = hooks[hook_id]
    picked = [f for f in staged if re.search(hook["files"], f) and not re.search(hook.get("exclude", "^$"), f)]
    entry = shlex.split(hook["entry"])
    assert entry[0] == "mlsubmit"
    return [*entry[1:], *args, *picked]


def test_case4_a_staged_file_named_like_an_option_is_a_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Callable[..., tuple[int, str, str]]
) -> None:
    # the raw hook takes root *.txt/*.out/*.log: `--output=notes.txt` replaced notes.txt with the report before
    monkeypatch.chdir(tmp_path)
    write_run(tmp_path / "job-01.out")
    (tmp_path / "notes.txt").write_text("the team's notes\n")
    staged = ["--output=notes.txt", "job-01.out", "notes.txt"]
    (tmp_path / staged[0]).write_text("not a log\n")
    argv = _pre_commit_argv("mlsubmit-raw", ["--ruleset", "4.1.0", "--format", "json"], staged)
    code, out, err = run_cli(*argv)
    assert code == 1, err  # job-01.out's findings (one run of five), reported on stdout
    assert (tmp_path / "notes.txt").read_text() == "the team's notes\n"  # the report did not replace it
    assert json.loads(out)["tool"]["ruleset"] == "4.1.0"  # the user's --format json and --ruleset held
    assert "passed over 2 file(s) without :::MLLOG records: ./--output=notes.txt, notes.txt" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(staged)
