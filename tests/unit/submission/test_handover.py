"""Issue 49: what `verify --official` hands to mlperf-logging's tools, and how it runs them, without running the
whole flow: the private copy's links, the names, the package_checker_params arguments, the input bounds, the
confinement's command and the launcher's limits."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mlsubmit.submission import confine, handover, handover_params


def org(root: Path, name: str = "Graphcore") -> Path:
    folder = root / name
    (folder / "results" / "sys-a" / "bert").mkdir(parents=True)
    (folder / "systems").mkdir()
    (folder / "systems" / "sys-a.json").write_text("{}\n", encoding="utf-8")
    (folder / "results" / "sys-a" / "bert" / "result_0.txt").write_text(":::MLLOG {}\n", encoding="utf-8")
    return folder


def test_links_inside_are_made_again_inside_the_copy_and_links_out_are_refused(tmp_path: Path) -> None:
    src = org(tmp_path / "src")
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, src / "results" / "sys-out")  # the package checker would write scaling.json there
    os.symlink(tmp_path / "nowhere", src / "results" / "sys-a" / "dangling")  # a write would create the file
    os.symlink(src / "results" / "sys-a", src / "results" / "sys-b")  # absolute, inside: the copy's own
    os.symlink("result_0.txt", src / "results" / "sys-a" / "bert" / "result_1.txt")
    found = handover.private_copy(src, tmp_path / "copy" / "Graphcore", "src/Graphcore")
    assert sorted((f.code, f.path) for f in found) == [
        ("TREE043", "src/Graphcore/results/sys-a/dangling"), ("TREE044", "src/Graphcore/results/sys-out")]
    copy = tmp_path / "copy" / "Graphcore"
    assert not (copy / "results" / "sys-out").exists() and not os.path.lexists(copy / "results" / "sys-a" / "dangling")
    assert os.readlink(copy / "results" / "sys-b") == "sys-a"  # relative: it cannot lead back to the original
    assert (copy / "results" / "sys-b" / "bert" / "result_1.txt").read_text(encoding="utf-8") == ":::MLLOG {}\n"


@pytest.mark.parametrize(("name", "bad"), [("Graphcore", False), ("IBM+CoreWeave+NVIDIA", False),
                                           ("--log_output=x", True), ("a\nb", True), ("a\x1b[2Jb", True)])
def test_names_the_tools_would_misread_are_refused(tmp_path: Path, name: str, bad: bool) -> None:
    root = org(tmp_path)
    (root / "results" / name).mkdir()
    found = handover.unsafe_names(tmp_path, "Graphcore", "x")
    assert [f.code for f in found] == (["PKG072"] if bad else [])


@pytest.mark.parametrize(("text", "refused"), [
    ("rcp-bypass\nseed-checker-bypass\n", []),
    ("rcp_bypass\n", []),  # unknown: the package checker refuses it in its own words
    ("seed\n", []),  # an abbreviation argparse takes for --seed-checker-bypass
    ("log_output=pc.log\n", []),  # inside the private copy
    ("log_output=/tmp/x\n", ["--log_output=/tmp/x"]),
    ("log_output ../x\n", ["--log_output"]),
    ("log=/etc/passwd\n", ["--log=/etc/passwd"]),  # argparse takes --log for --log_output
    ("l /tmp/x\n", ["--l"]),
    ("log_output=\n", ["--log_output="]),
    ("rcp-bypass=yes\n", ["--rcp-bypass=yes"]),
    ("rcp-bypass extra\n", ["'extra'"]),
    ("rcp=1\n", ["'--rcp=1'"]),  # ambiguous, with a value: not an option of the package checker
])  # fmt: skip
def test_params_pass_only_as_the_package_checkers_options(tmp_path: Path, text: str, refused: list[str]) -> None:
    root = org(tmp_path)
    (root / "package_checker_params").write_text(text, encoding="utf-8")
    args, found = handover_params.vetted_arguments(root, "p", tmp_path)
    assert args and all(f.code == "PKG070" for f in found)
    assert [f.message.split(" ")[0] for f in found] == refused


def test_a_log_output_through_a_link_that_leaves_is_refused(tmp_path: Path) -> None:
    root = org(tmp_path)
    os.symlink("/tmp", tmp_path / "out")
    (root / "package_checker_params").write_text("log_output=out/x\n", encoding="utf-8")
    _, found = handover_params.vetted_arguments(root, "p", tmp_path)
    assert [f.code for f in found] == ["PKG070"] and "leads outside" in found[0].message


def test_the_options_are_the_installed_package_checkers() -> None:
    from mlperf_logging.package_checker.package_checker import get_parser

    parser = get_parser()
    known = {s for a in parser._actions for s in a.option_strings if s.startswith("--") and s != "--help"}
    valued = {s for a in parser._actions for s in a.option_strings if a.nargs is None and a.const is None
              and s.startswith("--") and s != "--help"}  # fmt: skip
    assert known == set(handover_params.FLAGS + handover_params.VALUED) and valued == set(handover_params.VALUED)


def test_result_files_past_the_bounds_are_not_handed_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = org(tmp_path)
    result = root / "results" / "sys-a" / "bert" / "result_0.txt"
    result.write_bytes(b"noise\n" + b":::MLLOG {}\n" * 30)
    assert handover.over_bounds(tmp_path, "Graphcore", "x") == []
    monkeypatch.setattr(handover, "MAX_RECORDS_PER_FILE", 29)
    found = handover.over_bounds(tmp_path, "Graphcore", "x")
    assert [(f.code, f.path) for f in found] == [("PKG071", "x/results/sys-a/bert/result_0.txt")]
    assert "30 :::MLLOG lines, past the 29" in found[0].message
    monkeypatch.setattr(handover, "MAX_RECORDS_PER_FILE", 100)
    monkeypatch.setattr(handover, "MAX_RECORD_LINE", 10)
    monkeypatch.setattr(handover, "_CHUNK", 9)  # lines and tokens across the chunks' seams
    assert handover._measure(result, True)[0] == 30
    found = handover.over_bounds(tmp_path, "Graphcore", "x")
    assert "a line of 11 bytes" in found[0].message
    monkeypatch.setattr(handover, "MAX_OTHER_LINES", 0)
    paths = {f.path for f in handover.over_bounds(tmp_path, "Graphcore", "x")}
    assert paths == {"x/results/sys-a/bert/result_0.txt", "x/systems/sys-a.json"}  # lines of every other file


def test_records_are_bounded_in_every_file_a_result_link_may_point_at(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    root = org(tmp_path)
    (root / "benchmarks").mkdir()
    (root / "benchmarks" / "notes.txt").write_bytes(b":::MLLOG {}\n" * 30)
    result = root / "results" / "sys-a" / "bert" / "result_0.txt"
    result.unlink()
    os.symlink("../../../benchmarks/notes.txt", result)
    monkeypatch.setattr(handover, "MAX_RECORDS_PER_FILE", 29)
    found = handover.over_bounds(tmp_path, "Graphcore", "x")
    assert [(f.code, f.path) for f in found] == [("PKG071", "x/benchmarks/notes.txt")]


def test_the_tools_environment_holds_nothing_of_ours(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "secret")
    env = confine.environment(tmp_path)
    assert "GITHUB_TOKEN" not in env and env["HOME"] == env["TMPDIR"] == str(tmp_path)
    assert set(env) <= {"PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                        "MKL_NUM_THREADS"}  # fmt: skip


def test_each_confinement_wraps_the_command_and_says_what_it_is(tmp_path: Path) -> None:
    argv = confine.tool_command("mlperf_logging.package_checker", ["Graphcore"])
    assert argv[:4] == [sys.executable, "-I", "-B", str(confine.LAUNCHER)]
    assert argv[-2:] == ["mlperf_logging.package_checker", "Graphcore"] and argv[-3].endswith("mlperf_logging")
    bwrap = confine.Confinement("bwrap", "").wrap(argv, tmp_path)
    assert ["--bind", str(tmp_path), str(tmp_path)] == bwrap[bwrap.index("--bind"):bwrap.index("--bind") + 3]
    assert "--unshare-all" in bwrap and bwrap[bwrap.index("--") + 1:] == argv
    home = os.path.realpath(os.path.expanduser("~"))
    hidden = [bwrap[i + 1] for i, a in enumerate(bwrap) if a == "--tmpfs"]
    assert any(home == h or home.startswith(h + os.sep) for h in hidden) and "/tmp" in hidden
    assert confine.Confinement("none", "").wrap(argv, tmp_path) == argv
    assert confine.available_confinement().words.startswith(("confined with", "NOT confined"))


def test_the_launcher_sets_the_limits_and_runs_isolated(tmp_path: Path) -> None:
    """The tree is the tools' working folder: a `mlperf_logging` package in it must never be imported."""
    shadow = tmp_path / "mlperf_logging" / "package_checker"
    shadow.mkdir(parents=True)
    for path in (shadow.parent / "__init__.py", shadow / "__init__.py", shadow / "__main__.py"):
        path.write_text("open('PLANTED', 'w').write('ran')\n", encoding="utf-8")
    argv = confine.tool_command("mlperf_logging.package_checker", ["--help"])
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, env=confine.environment(tmp_path),
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0 and "usage" in done.stdout and not (tmp_path / "PLANTED").exists(), done.stderr
    probe = ("import importlib.util as u, resource, sys; "
             f"s = u.spec_from_file_location('l', {str(confine.LAUNCHER)!r}); m = u.module_from_spec(s);"
             " s.loader.exec_module(m); m.set_limits(3 << 30, 77, 1 << 20); "
             "print(*(resource.getrlimit(r)[0] for r in (resource.RLIMIT_AS, resource.RLIMIT_CPU, "
             "resource.RLIMIT_FSIZE, resource.RLIMIT_CORE)))")  # fmt: skip
    done = subprocess.run([sys.executable, "-I", "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                          env=confine.environment(tmp_path), timeout=60, check=False)  # fmt: skip
    assert done.stdout.split() == [str(3 << 30), "77", str(1 << 20), "0"], done.stderr


def test_inside_the_confinement_only_the_working_folder_is_writable_and_no_network(tmp_path: Path) -> None:
    found = confine.available_confinement()
    if found.kind == "none":
        pytest.skip("bubblewrap does not run here: the flow refuses to run without --unconfined")
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    script = f"touch {work}/in; touch {outside}/out; cat /proc/net/dev"
    done = subprocess.run(found.wrap(["sh", "-c", script], work), cwd=work, env=confine.environment(work),
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    interfaces = {line.split(":")[0].strip() for line in done.stdout.splitlines() if ":" in line}
    assert (work / "in").exists() and interfaces <= {"lo"}, done.stdout + done.stderr
    assert not (outside / "out").exists()


def test_without_bwrap_the_flow_says_the_tools_are_not_confined(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(confine.shutil, "which", lambda *_a, **_k: None)
    found = confine.available_confinement.__wrapped__()
    assert found.kind == "none" and not found.confined
    assert found.words.startswith("NOT confined: bwrap is not installed (package bubblewrap)")
