"""One run, several reports: --format repeated, paired with -o in order or written FORMAT:FILE; atomic writes."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from fixtures.synth import RunSpec


def test_three_reports_from_one_run_paired_in_order(run_cli, make_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    log = make_run(spec=RunSpec(converge=False))
    sarif, junit = tmp_path / "r.sarif", tmp_path / "r.xml"
    code, out, err = run_cli("check", "--ruleset", "1.0.0", "--format", "sarif", "-o", sarif,
                             "--format", "junit", "-o", junit, "--format", "text", "-o", "-", log)  # fmt: skip
    assert code == 1, err
    assert "RULE004" in {r["ruleId"] for r in json.loads(sarif.read_text())["runs"][0]["results"]}
    assert ET.parse(junit).getroot().find(".//failure") is not None
    assert out.splitlines()[-1].startswith("1 file(s) checked, 1 failed")  # the text log on stdout


def test_files_and_one_report_on_stdout_without_o(run_cli, make_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """docs/ci.md's second line, as written: the two files, and the text report on stdout (was exit 2)."""
    log = make_run()
    code, out, err = run_cli("check", "--ruleset", "1.0.0", "--format", f"sarif:{tmp_path / 'r2.sarif'}", "--format",
                             f"junit:{tmp_path / 'r2.xml'}", "--format", "text", log)  # fmt: skip
    assert code == 0, err
    assert json.loads((tmp_path / "r2.sarif").read_text())["runs"] and (tmp_path / "r2.xml").is_file()
    assert "PASS" in out


def test_format_colon_file_form_and_mixed(run_cli, make_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    log = make_run()
    code, out, err = run_cli("check", "--ruleset", "1.0.0", "--format", f"json:{tmp_path / 'r.json'}", "--format",
                             "junit", "-o", tmp_path / "r.xml", "--format", "text", "-o", "-", log)  # fmt: skip
    assert code == 0, err
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["exit_code"] == 0
    assert (tmp_path / "r.xml").is_file()
    assert "PASS" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--format", "sarif", "--format", "junit", "-o", "a"], "1 --output"),  # one report has no destination
        (["--format", "sarif", "-o", "a", "-o", "b"], "1 --format without a FILE but 2 --output"),
        (["-o", "a", "-o", "b"], "no --format"),
        (["--format", "sarif", "-o", "same", "--format", "junit", "-o", "same"], "both write to same"),
        (["--format", "text", "--format", "json"], "give each --format its own -o"),  # two on stdout
        (["--format", "sarif:"], "no FILE after the colon"),
        (["--format", "sarfi"], 'did you mean "sarif"'),
    ],
)
def test_a_format_and_output_mismatch_is_exit_2_and_writes_nothing(  # type: ignore[no-untyped-def]
    run_cli, make_run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str], message: str
) -> None:
    log = make_run()
    monkeypatch.chdir(tmp_path)
    before = set(os.listdir(tmp_path))
    code, out, err = run_cli("check", "--ruleset", "1.0.0", *argv, log)
    assert code == 2, out + err
    assert message in err
    assert set(os.listdir(tmp_path)) == before


def test_a_report_is_replaced_whole_or_not_at_all(run_cli, make_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    log = make_run()
    target = tmp_path / "r.json"
    target.write_text("old report\n")
    code, _, err = run_cli("check", "--ruleset", "1.0.0", "--format", f"json:{target}",
                           "--format", f"sarif:{tmp_path / 'missing' / 'r.sarif'}", log)  # fmt: skip
    assert code == 2
    assert "cannot write" in err
    # the first report was written whole; no temporary file is left beside either
    assert json.loads(target.read_text())["summary"]["files"] == 1
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_write_to_a_device_is_not_replaced(run_cli, make_run) -> None:  # type: ignore[no-untyped-def]
    log = make_run()
    code, _, err = run_cli("check", "--ruleset", "1.0.0", "--format", "json", "-o", os.devnull, log)
    assert code == 0, err
    assert Path(os.devnull).exists() and not Path(os.devnull).is_file()


@pytest.mark.parametrize("command", [["advise"], ["verify"], ["review", "since"]])
def test_every_emitting_command_takes_several_formats(run_cli, command: list[str]) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run_cli(*command, "--format", "sarif", "--format", "junit", "-o", "x", "--help")
    assert code == 0  # parsed (help wins); the options are the shared ones
    assert "FORMAT[:FILE]" in out


# --- --cache DIR ---------------------------------------------------------------------------------------------------


def test_a_cache_path_that_is_a_file_is_exit_2(run_cli, make_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    log = make_run()
    cfile = tmp_path / "cfile"
    cfile.write_text("not a cache\n")
    code, out, err = run_cli("check", "--ruleset", "1.0.0", "--cache", cfile, log)
    assert code == 2, out
    assert "--cache" in err and "not a folder" in err
    assert cfile.read_text() == "not a cache\n"


def test_a_new_cache_folder_ignores_itself_in_git(run_cli, make_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import git

    repo = git.Repo.init(tmp_path)
    log = make_run()
    repo.git.add(log.name)
    code, _, err = run_cli("check", "--ruleset", "1.0.0", "--cache", tmp_path / ".mlsubmit-cache", log)
    assert code == 0, err
    assert any((tmp_path / ".mlsubmit-cache").rglob("*.json"))  # entries were written
    assert repo.git.status("--porcelain", "--untracked-files=all") == f"A  {log.name}"
    code, _, err = run_cli("check", "--ruleset", "1.0.0", "--cache", tmp_path / ".mlsubmit-cache", log)
    assert code == 0, err  # an existing cache folder (with its .gitignore) is used again


def test_an_existing_folder_given_as_cache_gets_no_gitignore(run_cli, make_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # `--cache .` in a repository must not write a .gitignore of `*` that would hide the whole repository
    log = make_run()
    code, _, err = run_cli("check", "--ruleset", "1.0.0", "--cache", tmp_path, log)
    assert code == 0, err
    assert not (tmp_path / ".gitignore").exists()
