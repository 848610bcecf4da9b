"""What a team copies into its own set-up works as copied (issue 47): an archive given to `check` is named as one,
raw job output handed over file by file (as the pre-commit hook does) passes over notes, and a waiver file waives
the same findings whatever folder the check runs from."""

from __future__ import annotations

import gzip
import io
import json
import re
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ROOT
from fixtures.capture import write_capture
from fixtures.synth import RunSpec, write_run

Cli = Callable[..., tuple[int, str, str]]


def _tarball(folder: Path, dest: Path, *, compress: bool) -> Path:
    with tarfile.open(dest, "w:gz" if compress else "w") as tar:
        tar.add(folder, arcname=folder.name)
    return dest


def _zip(folder: Path, dest: Path) -> Path:
    with zipfile.ZipFile(dest, "w") as z:
        for f in sorted(folder.rglob("*")):
            z.write(f, f.relative_to(folder.parent))
    return dest


@pytest.mark.parametrize(("make", "kind"), [
    (lambda runs, tmp: _tarball(runs, tmp / "runs.tar.gz", compress=True), "a gzip-compressed tar archive"),
    (lambda runs, tmp: _tarball(runs, tmp / "runs.tar", compress=False), "a tar archive"),
    (lambda runs, tmp: _zip(runs, tmp / "runs.zip"), "a zip archive"),
])  # fmt: skip
def test_an_archive_given_to_check_is_named_with_what_to_do(tmp_path: Path, run_cli: Cli,
                                                            make: Callable[[Path, Path], Path], kind: str) -> None:
    runs = tmp_path / "runs"
    write_run(runs / "job-00.out", RunSpec(ruleset="1.1.0"))
    archive = make(runs, tmp_path)
    code, out, err = run_cli("check", "--ruleset", "1.1.0", archive)
    assert code == 2 and out == ""  # before: exit 1 with LOG009, LOG002 and POL001 about the archive's bytes
    assert f"{archive}: {kind}, not a run log; unpack it" in err
    # verify opens the chair's archive, a gzip-compressed tar (pack_submission.sh): offered for that one only (a zip
    # given to verify is "PKG044 not a complete gzip file")
    assert (f"mlsubmit verify {archive}" in err) is (kind == "a gzip-compressed tar archive")
    assert "LOG009" not in err + out


def test_the_chairs_encrypted_archive_points_at_verify(tmp_path: Path, run_cli: Cli) -> None:
    sealed = tmp_path / "mlperf_submission_Graphcore.tar.gz"
    sealed.write_bytes(b"Salted__" + bytes(range(256)) * 8)  # what `openssl enc` writes first
    code, _, err = run_cli("check", "--ruleset", "1.1.0", sealed)
    assert code == 2 and "an encrypted archive" in err and "--passphrase-file FILE" in err


def test_a_gzip_compressed_log_is_still_a_log_and_an_archive_in_a_raw_folder_is_left_alone(
        tmp_path: Path, run_cli: Cli) -> None:  # fmt: skip
    runs = tmp_path / "runs"
    text = write_run(tmp_path / "job.out", RunSpec(ruleset="1.1.0")).read_bytes()
    runs.mkdir()
    (runs / "job-00.out.gz").write_bytes(gzip.compress(text, mtime=0))
    code, out, _ = run_cli("check", "--ruleset", "1.1.0", "--format", "json", runs / "job-00.out.gz")
    assert code == 0, out
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:  # the runs, tarred beside them: MLLOG lines inside
        info = tarfile.TarInfo("job-00.out")
        info.size = len(text)
        tar.addfile(info, io.BytesIO(text))
    (runs / "all-runs.tar.gz").write_bytes(buffer.getvalue())
    code, out, _ = run_cli("check", "--ruleset", "1.1.0", "--format", "json", runs)
    assert [f["path"] for f in json.loads(out)["files"]] == [str(runs / "job-00.out.gz")]


def test_skip_non_logs_passes_over_notes_and_checks_raw_output(tmp_path: Path, run_cli: Cli) -> None:
    """What the mlsubmit-raw hook runs on the staged *.out, *.log and *.txt files."""
    notes = tmp_path / "notes.txt"
    notes.write_text("what we changed for run 10\n", encoding="utf-8")
    good = write_run(tmp_path / "pod16-bert" / "job-00.out", RunSpec(ruleset="1.1.0"))
    killed = write_run(tmp_path / "pod16-bert" / "job-10.out", RunSpec(ruleset="1.1.0", seed=10))
    text = killed.read_text(encoding="utf-8")
    killed.write_text(text[: text.rindex(":::MLLOG") + 60], encoding="utf-8")  # killed mid-record
    assert run_cli("check", "--ruleset", "1.1.0", notes)[0] == 1  # LOG009 without the option
    code, out, err = run_cli("check", "--ruleset", "1.1.0", "--skip-non-logs", notes, good)
    assert code == 0 and f"passed over 1 file(s) without :::MLLOG records: {notes}" in err and "PASS" in out
    code, out, _ = run_cli("check", "--ruleset", "1.1.0", "--skip-non-logs", notes, good, killed)
    assert code == 1 and "LOG004" in out
    code, out, err = run_cli("check", "--ruleset", "1.1.0", "--skip-non-logs", notes)
    assert code == 0 and out == "" and "nothing to check" in err


def test_waivers_hold_whatever_folder_the_check_runs_from(tmp_path: Path, run_cli: Cli,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    # two runs that did not converge: more than olympic scoring accepts in one set (one would be TREE008, exit 0)
    for k in range(2):
        write_run(project / "runs" / f"job-0{k}.out", RunSpec(ruleset="1.1.0", converge=False, seed=k + 1,
                                                              start_ms=1_630_000_000_000 + k * 3_600_000))
    (project / "ci").mkdir()
    monkeypatch.chdir(project)
    first, _, err = run_cli("check", "--ruleset", "1.1.0", "runs", "--write-waivers", "ci/waivers.toml")
    written = (project / "ci" / "waivers.toml").read_text(encoding="ascii")
    count = written.count("[[waiver]]")
    assert first == 1 and count >= 1
    assert f"wrote {count} waiver(s) to ci/waivers.toml" in err and "relative to its folder" in err
    assert 'path = "../runs/job-00.out"' in written  # relative to the file's folder, not to the working folder
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for cwd, tree, waivers in ((project, "runs", "ci/waivers.toml"), (project / "ci", "../runs", "waivers.toml"),
                               (elsewhere, project / "runs", project / "ci" / "waivers.toml")):
        monkeypatch.chdir(cwd)
        code, out, err = run_cli("check", "--ruleset", "1.1.0", tree, "--waivers", waivers, "--format", "json")
        report = json.loads(out)
        assert code == 0, (cwd, out[-2000:], err)  # before: from another folder every waiver was WVR001, exit 1
        assert report["summary"]["waived"] >= count and "WVR001" not in out


# --- systems capture: what it writes, our own check accepts ---------------------------------------------------------

SHIPPED_CAPTURE = ROOT / "examples" / "capture" / "ipu-pod16-host.json"


def test_the_shipped_capture_is_what_the_docs_name() -> None:
    assert f"--from {SHIPPED_CAPTURE.relative_to(ROOT).as_posix()}" in (ROOT / "docs" / "systems.md").read_text(
        encoding="utf-8")  # fmt: skip
    assert json.loads(SHIPPED_CAPTURE.read_text(encoding="utf-8"))["mlperf_sysinfo"]["benchmark"] == "training"


@pytest.mark.parametrize("source", ["shipped POD16 host", "this build machine"])
def test_a_capture_made_as_documented_is_written_and_accepted_by_check(tmp_path: Path, run_cli: Cli,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       source: str) -> None:  # fmt: skip
    """Before: SYS016 (other_software_stack, host_memory_configuration empty) refused the write, though `check`
    takes SYS016 as a warning in its default profile."""
    monkeypatch.chdir(tmp_path)
    capture = SHIPPED_CAPTURE if source.startswith("shipped") else write_capture(tmp_path / "host.json")
    code, out, err = run_cli("systems", "capture", "--from", capture, "--system-id", "ipu-pod16-POPART-closed",
                             "--ruleset", "6.1.0", "--pod-size", "16", "--m2000", "4", "--color", "never")
    assert code == 0, out + err
    assert "wrote systems/ipu-pod16-POPART-closed.json" in err and "warning SYS016" in out
    checked, out, err = run_cli("check", "--ruleset", "6.1.0", "systems/ipu-pod16-POPART-closed.json")
    assert checked == 0, out + err


def test_a_stricter_project_policy_names_the_fields_to_fill(tmp_path: Path, run_cli: Cli,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mlsubmit.toml").write_text('[check]\nseverity = { SYS016 = "error" }\n', encoding="utf-8")
    argv = ("systems", "capture", "--from", SHIPPED_CAPTURE, "--system-id", "ipu-pod16-POPART-closed", "--ruleset",
            "6.1.0", "--pod-size", "16")  # fmt: skip
    code, _, err = run_cli(*argv)
    assert code == 1 and not (tmp_path / "systems").exists()
    assert "not written: the description has errors; fill other_software_stack with --set FIELD=VALUE" in err
    code, _, err = run_cli(*argv, "--draft")
    assert code == 1 and (tmp_path / "systems" / "ipu-pod16-POPART-closed.json").is_file()
    assert "is a draft with errors; fill other_software_stack with --set FIELD=VALUE" in err
    code, _, err = run_cli(*argv, "--set", "other_software_stack=POD-SW 3.4.0", "--force")
    assert code == 0, err


def test_no_doc_or_message_installs_mlsubmit_from_the_package_index() -> None:
    """mlsubmit is not published: installing the extra by the bare name finds no such distribution."""
    code = [p for top in ("mlsubmit", "checker", "submission", "tools", "tests") for p in (ROOT / top).rglob("*.py")]
    texts = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *code]
    wrong = re.compile(r"pip install '?mlsubmit(\[|['\s`)]|$)", re.MULTILINE)
    found = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in texts if ".venv" not in p.parts
             for m in wrong.finditer(p.read_text(encoding="utf-8", errors="replace"))]  # fmt: skip
    assert found == []


def test_the_chairs_steps_by_hand_are_the_ones_verify_official_names() -> None:
    """`make demo` prints the chair's steps to repeat by hand: the summarizer line is the step `verify --official`
    runs and docs/packaging.md shows (with --csv), and the README's verify of the encrypted archive gives the
    passphrase file it needs."""
    from fixtures.modern import chair_commands

    lines = chair_commands(Path("submission"), Path("passphrase.txt"), Path("by-hand"))
    summarizer = next(line for line in lines if "mlperf_logging.result_summarizer" in line)
    assert f"({summarizer})" in (ROOT / "docs" / "packaging.md").read_text(encoding="utf-8")
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "`mlsubmit verify ARCHIVE --official --passphrase-file build/demo/modern/passphrase.txt`" in readme


def test_the_ledger_results_entry_of_docs_runs_names_its_code() -> None:
    """Copied without `implementation`, the entry packaged no code (PKG036) and the build exited 1."""
    import tomllib

    text = (ROOT / "docs" / "runs.md").read_text(encoding="utf-8")
    start = text.index("```toml\n[[results]]")
    entry = tomllib.loads(text[start + len("```toml\n") : text.index("```", start + 7)])["results"][0]
    assert entry["ledger"] and entry["implementation"]["name"] and entry["implementation"]["rev"]
