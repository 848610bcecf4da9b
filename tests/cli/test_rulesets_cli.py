"""What a newcomer types: rulesets in their usual spellings, and no --ruleset at all for check, advise and report."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures.demo import raw_run
from fixtures.synth import RunSpec
from fixtures.synth_org import runs, system, write_org

Cli = Callable[..., tuple[int, str, str]]


def _org(root: Path, ruleset: str = "1.1.0") -> Path:
    return write_org(root / "Graphcore", {"ipu-pod16-closed": system()},
                     {("ipu-pod16-closed", "bert"): runs([30.0, 31.0, 29.5, 30.5, 30.2, 29.9, 30.8, 31.2, 29.7, 30.1],
                                                         ruleset=ruleset)})


@pytest.fixture(scope="module")
def org(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _org(tmp_path_factory.mktemp("rulesets"))


@pytest.mark.parametrize("spelling", ["1.1", "v1.1", "v1.1.0", "1.1.0"])
def test_check_takes_the_usual_spellings_and_says_which_ruleset(org: Path, run_cli: Cli, spelling: str) -> None:
    log = org / "results" / "ipu-pod16-closed" / "bert" / "result_0.txt"
    code, out, err = run_cli("check", "--ruleset", spelling, "--color", "never", log)
    assert code == 0 and out.endswith("1 file(s) checked, 0 failed; 0 error(s), 0 warning(s), 0 info\n")
    assert err == ("" if spelling == "1.1.0" else f"mlsubmit: ruleset 1.1.0 (--ruleset {spelling})\n")


def test_an_unknown_ruleset_lists_the_known_ones(org: Path, run_cli: Cli) -> None:
    code, _out, err = run_cli("check", "--ruleset", "1.7", org)
    assert code == 2 and "unknown ruleset '1.7'; choose one of: 1.0.0, 1.1.0" in err


def test_report_infers_the_ruleset_like_check(org: Path, run_cli: Cli, tmp_path: Path) -> None:
    code, _out, err = run_cli("report", org)
    assert code == 2 and "cannot tell its round" in err and ".mlsubmit-round" in err
    (org / ".mlsubmit-round").write_text("1.1\n")
    try:
        code, out, err = run_cli("report", org)
        assert code == 1  # the synthetic tree has no implementation code (TREE013): scored all the same
        assert err == f"mlsubmit: ruleset 1.1.0 (from {org / '.mlsubmit-round'})\n"
        assert "ipu-pod16-closed" in out and "10/10" in out
        code, _out, err = run_cli("check", "--color", "never", org)
        assert code in (0, 1) and err == f"mlsubmit: ruleset 1.1.0 (from {org / '.mlsubmit-round'})\n"
    finally:
        (org / ".mlsubmit-round").unlink()


def test_report_takes_one_round_at_a_time(tmp_path: Path, run_cli: Cli) -> None:
    a = _org(tmp_path / "training_results_v1.0", ruleset="1.0.0")
    b = _org(tmp_path / "training_results_v1.1")
    code, _out, err = run_cli("report", a, b)
    assert code == 2 and "2 rounds (1.0.0, 1.1.0); report one round at a time" in err


def test_advise_reads_a_folder_of_raw_job_output_without_a_ruleset(tmp_path: Path, run_cli: Cli) -> None:
    folder = tmp_path / "team" / "runs" / "pod16-resnet-open"
    folder.mkdir(parents=True)
    spec = RunSpec(benchmark="resnet", ruleset="1.1.0", division="open", platform="ipu-pod16-TF-open", seed=7,
                   hyperparameters={"lars_opt_momentum": 0.95})
    (folder / "job-00.out.gz").write_bytes(gzip.compress(raw_run(spec), mtime=0))
    (tmp_path / "team" / "mlsubmit.toml").write_text('[check]\nruleset = "v1.1"\n')
    code, out, err = run_cli("advise", "--color", "never", folder)
    assert code == 1 and err == f"mlsubmit: ruleset 1.1.0 (from {tmp_path / 'team' / 'mlsubmit.toml'})\n"
    assert "job-00.out.gz: FAIL" in out and "HP001 'lars_opt_momentum' is 0.95" in out
    assert "LOG00" not in out  # read unpacked: no NUL or UTF-8 complaints, no "no records"


def test_check_reads_a_folder_of_raw_job_output(tmp_path: Path, run_cli: Cli) -> None:
    folder = tmp_path / "runs" / "pod16-bert"
    folder.mkdir(parents=True)
    for i in range(3):
        data = raw_run(RunSpec(ruleset="1.1.0", platform="ipu-pod16-POPART-closed", seed=1000 + i))
        name = f"job-{i:02d}.out" + (".gz" if i == 1 else "")
        (folder / name).write_bytes(gzip.compress(data, mtime=0) if i == 1 else data)
    (folder / "run.sh").write_text("poprun python run_pretraining.py\n")
    code, out, err = run_cli("check", "--ruleset", "1.1", "--color", "never", folder)
    assert code == 0, out
    assert [ln for ln in out.splitlines() if ln.endswith(("PASS", "FAIL"))] == [
        f"{folder / n}: PASS" for n in ("job-00.out", "job-01.out.gz", "job-02.out")]
    empty = tmp_path / "notes"
    empty.mkdir()
    (empty / "todo.txt").write_text("nothing here\n")
    code, _out, err = run_cli("check", "--ruleset", "1.1", empty)
    assert code == 2 and "files with :::MLLOG records" in err
