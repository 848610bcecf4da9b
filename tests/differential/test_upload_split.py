"""Issue 38: an organisation split into uploads `<org>_1`, `<org>_2` (mlcommons/training#877). Each upload is a
whole build with its own archive that passes the chair's flow alone (verify --official, whose last step compares
the chair's summary of that upload with ours); the uploads together are checked as the organisation."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ROOT, tree_digest
from fixtures.flowfix import BENCHMARK, MODERN_SYSTEM, ORG, SECOND_SYSTEM, write_split_job

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("git") is None, reason="git is needed to export the implementation"),
]
Cli = Callable[..., tuple[int, str, str]]


def test_two_uploads_each_pass_the_chairs_flow_and_the_whole_is_checked(tmp_path: Path, run_cli: Cli) -> None:
    job = write_split_job(tmp_path / "job", ROOT / "systems")
    code, out, err = run_cli("package", job.config, "--archive", "--encrypt", "--passphrase-file", job.passphrase,
                             "--generate-passphrase", "--color", "never")
    assert code == 0, out + err
    built = job.root / "build" / "submission"
    assert sorted(p.name for p in built.iterdir()) == [f"{ORG}_1", f"{ORG}_2"]
    for number, system in ((1, MODERN_SYSTEM), (2, SECOND_SYSTEM)):
        upload = built / f"{ORG}_{number}"
        manifest = json.loads((upload / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["org"] == f"{ORG}_{number}"
        assert sorted(p.name for p in (upload / f"{ORG}_{number}" / "results").iterdir()) == [system]
        assert sorted(p.name for p in (upload / f"{ORG}_{number}" / "systems").iterdir()) == [f"{system}.json"]
        assert (upload / f"{ORG}_{number}" / "benchmarks" / BENCHMARK / "implementations" / "popart").is_dir()
    assert f"the 2 uploads together were checked as {ORG}" in err
    assert f"{built}/{ORG}/results/{SECOND_SYSTEM}/{BENCHMARK}" in out  # the whole's own findings

    for number in (1, 2):
        archive = built / f"{ORG}_{number}" / f"mlperf_submission_{ORG}_{number}.tar.gz"
        code, out, err = run_cli("verify", archive, "--official", "--passphrase-file", job.passphrase,
                                 "--color", "never")
        assert code == 0, out + err
        assert f"8. report --against [{ORG}_{number}]: PASS" in err
        assert "every result agrees with the chair's summary" in err

    archives = [built / f"{ORG}_{n}" / f"mlperf_submission_{ORG}_{n}.tar.gz" for n in (1, 2)]
    code, out, err = run_cli("verify", *archives, "--official", "--passphrase-file", job.passphrase, "--color", "never")
    assert code == 0, out + err  # both alone, then the chair's steps on the uploads together
    assert "21 official step(s) compared, 0 failed" in out
    for number, step in ((17, "handover"), (18, "package checker"), (19, "result summarizer"), (20, "repo checker"),
                         (21, "report --against")):  # fmt: skip
        assert f"{number}. {step} [{ORG}, the uploads together]: PASS" in err
    code, _out, err = run_cli("verify", *archives, "--passphrase-file", job.passphrase)
    assert code == 2 and "several ARCHIVEs are for --official" in err

    before = tree_digest(built)  # a second build over the first replaces it as a whole
    code, out, err = run_cli("package", job.config, "--color", "never")
    assert code == 0, out + err
    assert tree_digest(built).keys() != before.keys()  # no archives this time


def test_a_split_out_holding_something_else_is_refused(tmp_path: Path, run_cli: Cli) -> None:
    job = write_split_job(tmp_path / "job", ROOT / "systems")
    notes = job.root / "build" / "submission" / "notes.txt"
    notes.parent.mkdir(parents=True)
    notes.write_text("mine\n", encoding="utf-8")
    code, _out, err = run_cli("package", job.config)
    assert code == 2 and "notes.txt" in err and notes.read_text(encoding="utf-8") == "mine\n"


def test_the_config_says_which_upload_each_result_goes_into(tmp_path: Path, run_cli: Cli) -> None:
    job = write_split_job(tmp_path / "job", ROOT / "systems")
    text = job.config.read_text(encoding="utf-8")
    job.config.write_text(text.replace("upload = 2\n", "upload = 3\n"), encoding="utf-8")
    code, _out, err = run_cli("package", job.config)
    assert code == 2 and "names its upload, 1 to 2" in err
    job.config.write_text(text.replace("upload = 2\n", "upload = 1\n"), encoding="utf-8")
    code, _out, err = run_cli("package", job.config)
    assert code == 2 and "no [[results]] entry goes into upload 2" in err
    job.config.write_text(text.replace("uploads = 2\n", ""), encoding="utf-8")
    code, _out, err = run_cli("package", job.config)
    assert code == 2 and "set `uploads`" in err


def test_files_the_uploads_share_must_be_the_same(tmp_path: Path) -> None:
    from mlsubmit.submission.package_config import load_config
    from mlsubmit.submission.split import _put_together

    job = write_split_job(tmp_path / "job", ROOT / "systems")
    cfg = load_config(job.config)
    build = tmp_path / "build"
    for number, text in ((1, "a\n"), (2, "b\n")):
        path = build / f"{ORG}_{number}" / f"{ORG}_{number}" / "systems" / "shared.json"
        path.parent.mkdir(parents=True)
        path.write_text(text, encoding="utf-8")
    found = _put_together(cfg, build, build / ".whole" / ORG)
    assert [(f.code, f.message) for f in found] == [("PKG064", "upload 1 and upload 2 hold different files here")]

