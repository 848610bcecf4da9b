"""verify --official's readings of the chair's scripts, without running the reference: the sha1 comparison of
pack_submission.sh --unpack, the flags the verify script builds from package_checker_params, and the steps of
each round's script."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from mlsubmit.checker.tree.params import script_arguments
from mlsubmit.submission.official import round_steps, script_name, sha1_step


def archive(tmp_path: Path, name: str = "mlperf_submission_Graphcore.tar.gz") -> Path:
    path = tmp_path / name
    path.write_bytes(b"Salted__12345678" + b"\0" * 32)
    return path


@pytest.mark.parametrize(("line_end", "passes"), [("\n", True), ("", True), ("\n\n", True), (" \n", False)])
def test_the_sha1_line_is_compared_as_the_script_compares_it(tmp_path: Path, line_end: str, passes: bool) -> None:
    path = archive(tmp_path)
    digest = hashlib.sha1(path.read_bytes(), usedforsecurity=False).hexdigest()
    (tmp_path / "mlperf_submission_Graphcore.sha1").write_text(f"{digest}  {path.name}{line_end}", encoding="utf-8")
    step, found = sha1_step(path, "a")
    assert step.passed is passes and [f.code for f in found] == ([] if passes else ["PKG060"])


def test_a_missing_sha1_or_another_name_fails_in_the_scripts_words(tmp_path: Path) -> None:
    step, found = sha1_step(archive(tmp_path), "a")
    assert not step.passed and found[0].message.startswith("cat: mlperf_submission_Graphcore.sha1:")
    step, found = sha1_step(archive(tmp_path, "Graphcore.tar.gz"), "a")
    assert not step.passed and "pack_submission.sh --unpack opens no other name" in found[0].message


@pytest.mark.parametrize(("text", "flags"), [
    ("rcp-bypass\n", ["--rcp-bypass"]),
    ("rcp-bypass", []),  # `read` drops a last line without its newline
    ("rcp-bypass\nseed-checker-bypass", ["--rcp-bypass"]),
    ("rcp-bypass\nseed-checker-bypass\n", ["--rcp-bypass", "--seed-checker-bypass"]),
    ("rcp bypass\n", ["--rcp", "bypass"]),  # unquoted: split on blanks
    ("\n", ["--"]),
    ("rcp_bypass\n", ["--rcp_bypass"]),  # the spelling of 2.0-4.0 trees, passed on as it is
])  # fmt: skip
def test_the_flags_the_verify_script_builds(tmp_path: Path, text: str, flags: list[str]) -> None:
    (tmp_path / "package_checker_params").write_text(text, encoding="utf-8")
    assert script_arguments(tmp_path) == flags


def test_no_params_file_no_flags(tmp_path: Path) -> None:
    assert script_arguments(tmp_path) == []


@pytest.mark.parametrize(("ruleset", "script", "steps"), [
    ("1.0.0", "verify_for_v1.1_training.sh", 2),
    ("1.1.0", "verify_for_v1.1_training.sh", 2),
    ("2.0.0", "verify_for_v2.0_training.sh", 3),
    ("5.1.0", "verify_for_v5.1_training.sh", 3),
    ("6.1.0", "verify_for_v6.1_training.sh", 3),
])  # fmt: skip
def test_each_rounds_script(ruleset: str, script: str, steps: int) -> None:
    assert script_name(ruleset) == script and len(round_steps(ruleset)) == steps



def test_a_params_fifo_is_refused_not_waited_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """is_file() and the open are two moments: a FIFO put in between is refused by the open, never read."""
    import os

    from mlsubmit.checker.tree.params import read_org_params

    os.mkfifo(tmp_path / "package_checker_params")
    monkeypatch.setattr(Path, "is_file", lambda self: True)
    with pytest.raises(OSError):
        script_arguments(tmp_path)
    found = read_org_params(tmp_path, "Org/package_checker_params", "5.0.0").findings
    assert [(f.code, "cannot be read" in f.message) for f in found] == [("TREE046", True)]
