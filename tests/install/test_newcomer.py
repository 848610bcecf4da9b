"""A newcomer's first hour, scripted: a fresh clone, `make demo`, the README's commands, asserting on what they see.

The clone sits beside `shared/` (a link to the corpus' parent when there is one), as a checkout in /work does. It
installs its own .venv, so the test takes a few minutes; the README's blocks are found by their `newcomer:` markers.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, corpus_path

pytestmark = pytest.mark.slow


def readme_block(name: str) -> str:
    """The fenced block after `<!-- newcomer:NAME` in the README."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(rf"<!-- newcomer:{name}\b.*?-->\n```\w*\n(.*?)```", text, re.DOTALL)
    assert m, f"README.md has no newcomer:{name} block"
    return m.group(1)


def sh(script: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, text=True, timeout=1800,
                          env={**os.environ, **(env or {})})


def mlsubmit(clone: Path, *args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(clone / ".venv" / "bin" / "mlsubmit"), *map(str, args)], cwd=cwd or clone,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("git") is None or shutil.which("make") is None:
        pytest.skip("needs git and make")
    work = tmp_path_factory.mktemp("newcomer")
    corpus = corpus_path()
    if corpus is not None:
        (work / "shared").symlink_to(corpus.resolve().parent)
    subprocess.run(["git", "clone", "-q", str(ROOT), str(work / "mlsubmit")], check=True, timeout=300)
    return work / "mlsubmit"


@pytest.fixture(scope="module")
def quickstart(clone: Path) -> subprocess.CompletedProcess[str]:
    """The README's quick start, top to bottom, in one shell (it activates the venv)."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "MLSUBMIT_CORPUS")}
    return subprocess.run(["bash", "-ec", readme_block("shell")], cwd=clone, capture_output=True, text=True,
                          timeout=1800, env=env)


def test_the_quick_start_works_and_reads_cleanly(clone: Path, quickstart: subprocess.CompletedProcess[str]) -> None:
    seen = quickstart.stdout + quickstart.stderr
    assert quickstart.returncode == 0, seen[-4000:]
    assert not re.search(r"make(\[\d+\])?: .*Error", seen), seen[-4000:]  # no make error, ignored or not
    assert "(exit 1: as expected: the broken run is caught)" in seen
    assert "(exit 1: as expected: the run breaks the closed table)" in seen
    assert ("Done. Open build/demo/report.html, build/demo/loop/runs.html and build/demo/modern-report.html in a "
            "browser.") in seen
    # the current round's official path: an encrypted archive, its .sha1, a private passphrase, the chair's steps
    modern = clone / "build/demo/modern"
    assert (modern / "passphrase.txt").stat().st_mode & 0o077 == 0
    assert "openssl enc -d -aes256 -pass file:build/demo/modern/passphrase.txt" in seen
    assert "python -m mlperf_logging.package_checker Graphcore training 6.1.0 $flags" in seen
    # the README's example message, as the demo prints it wherever the clone is
    assert ("build/demo/runs/broken/job-00.out:426: error LOG004 record is not valid JSON: Unterminated string "
            "starting at: line 1 column 83 (char 82)") in seen
    assert (ROOT / "README.md").read_text().count("line 1 column 83 (char 82)") == 1
    # the last README command: a folder of raw job output, no --ruleset
    out_lines = quickstart.stdout.splitlines()
    assert "build/demo/runs/pod16-bert/job-03.out.gz: PASS" in out_lines
    assert out_lines[-1] == "10 file(s) checked, 0 failed; 0 error(s), 0 warning(s), 2 info"
    assert any(line.startswith("  build/demo/runs/pod16-bert/: info RUN006 run set ipu-pod16-POPART-closed/bert")
               and line.endswith("RCP pass, normalisation factor 1.000000; projected score 29.40 min")
               for line in out_lines)
    assert f"mlsubmit: ruleset 1.1.0 (from {clone.resolve() / 'mlsubmit.toml'})" in quickstart.stderr
    built = "build/demo/modern/submission"
    for folder in ("build/demo-advise", "build/demo/runs", "build/demo/submission", "build/demo/report.html",
                   f"{built}/Graphcore", f"{built}/mlperf_submission_Graphcore.sha1",
                   f"{built}/mlperf_submission_Graphcore.tar.gz", "build/demo/modern-report.html"):
        assert (clone / folder).exists(), folder


Done = subprocess.CompletedProcess[str]


def test_a_compressed_run_and_a_tree_outside_the_round_folders(clone: Path, quickstart: Done, tmp_path: Path) -> None:
    assert quickstart.returncode == 0
    done = mlsubmit(clone, "check", "build/demo/runs/pod16-bert/job-03.out.gz")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == ["build/demo/runs/pod16-bert/job-03.out.gz: PASS",
                                        "1 file(s) checked, 0 failed; 0 error(s), 0 warning(s), 0 info"]
    # the team's own tree, away from this checkout: no round until the tree states it
    team = tmp_path / "team"
    shutil.copytree(clone / "build" / "demo" / "submission" / "Graphcore", team / "Graphcore")
    done = mlsubmit(clone, "check", team / "Graphcore")
    assert done.returncode == 2 and "write the round (e.g. 1.1) into .mlsubmit-round" in done.stderr
    (team / "Graphcore" / ".mlsubmit-round").write_text("v1.1\n")
    for command in ("check", "report"):
        done = mlsubmit(clone, command, team / "Graphcore")
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stderr == f"mlsubmit: ruleset 1.1.0 (from {team / 'Graphcore' / '.mlsubmit-round'})\n"
    assert "17 file(s) checked, 0 failed; 0 error(s)" in mlsubmit(clone, "check", team / "Graphcore").stdout


def test_packaging_with_the_readme_config(clone: Path, quickstart: subprocess.CompletedProcess[str]) -> None:
    assert quickstart.returncode == 0
    demo = clone / "build" / "demo"
    (demo / "package.toml").write_text(readme_block("toml"), encoding="utf-8")
    done = sh(f". {clone / '.venv' / 'bin' / 'activate'}\n" + readme_block("package"), cwd=clone)
    seen = done.stdout + done.stderr
    assert done.returncode == 0, seen[-4000:]
    assert "mlsubmit: packaged 15 result file(s) and 11 implementation file(s) into submission" in seen
    for name in ("mlperf_submission_Graphcore.tar.gz", "mlperf_submission_Graphcore.sha1",
                 "mlperf_submission_Graphcore.tar.gz.sha256"):
        assert f"mlsubmit: wrote submission/{name}\n" in done.stderr
    assert "mlsubmit: submission/mlperf_submission_Graphcore.tar.gz: OK (29 file(s) unpacked" in done.stderr
    assert subprocess.run(["sha1sum", "-c", "mlperf_submission_Graphcore.sha1"], cwd=demo / "submission",
                          capture_output=True).returncode == 0
