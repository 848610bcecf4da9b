"""Issue 54: `verify --official` fails closed whatever our own check concluded.

Each reference tool runs behind submission/tool_launcher.py, whose audit hook keeps it to the rule files, code and
data mlperf-logging ships. These tests switch our gate off (everything is handed over) and run the attacks that made
the tools run planted code: a `submission_division` value that climbs to a rule file of the tree, in a result file
only the tools' recursive glob finds (a system folder named `**`) or in a record our reader drops (`time_ms` 1e999,
NaN ...). The planted rule file would create a marker file; the runs go unconfined too (bubblewrap would hide the
marker's folder), so the hook alone is what stops them. Then: without bubblewrap the flow refuses (exit 2) unless
given --unconfined, and with it a tool writes nowhere but its working folder and reads nothing of the home.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ROOT
from fixtures.flowfix import BENCHMARK, MODERN_SYSTEM, ORG, fast_tree
from mlsubmit.submission import confine, handover, tool_launcher

Cli = Callable[..., tuple[int, str, str]]
RESULTS = Path("results") / MODERN_SYSTEM / BENCHMARK
DIVISION = '"submission_division", "value": "closed"'
IMPL = Path("benchmarks") / BENCHMARK / "implementations" / "ipu"


@pytest.fixture
def gate_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """Our own gate is switched off: its verdict on the check's findings, the folder names and the logs the tools
    open against ours; every organisation is handed to the reference tools."""
    for gate in ("blocking_findings", "unsafe_names", "unlike_ours"):
        monkeypatch.setattr(handover, gate, lambda *_args, **_kwargs: [])


@pytest.fixture(params=["bwrap", "unconfined"])
def confinement(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Both ways the tools can run; unconfined, only the launcher's hook stands between them and the tree."""
    if request.param == "bwrap":
        if not confine.available_confinement().confined:
            pytest.skip("bubblewrap does not run here")
        return []
    monkeypatch.setattr(confine, "available_confinement", lambda: confine._none("switched off by the test"))
    return ["--unconfined"]


def official(run_cli: Cli, target: Path, *extra: str | Path) -> tuple[int, str, str]:
    return run_cli("verify", target, "--official", "--ruleset", "6.1.0", "--color", "never", *extra)


def plant_rule_file(org: Path, marker: Path) -> str:
    """A rule file in the tree whose BEGIN block would create `marker`; returns the division value reaching it."""
    (org / IMPL / "evil_common.yaml").write_text(f"- BEGIN:\n    CODE: \"open('{marker}', 'w').write('ran')\"\n",
                                                 "utf-8")  # fmt: skip
    return "../" * 20 + f"proc/self/cwd/{ORG}/{IMPL.as_posix()}/evil"


def stopped(code: int, out: str, err: str, marker: Path) -> None:
    assert not marker.exists(), "the planted rule file ran"
    assert code == 1, out + err
    assert "package checker [" in err and "handover [" in err, err  # the tools were handed the tree, and stopped
    assert f"error PKG073 package checker (python -m mlperf_logging.package_checker {ORG} training 6.1.0 " in out, out
    assert f"was stopped: the reference tried open of {ORG}/" in out and "/evil_common.yaml: a " in out, out
    assert "mlperf-logging's own folder" in out
    assert "every step passed" not in err and ": FAILED" in err


def test_a_climbing_division_runs_nothing_with_our_gate_off(tmp_path: Path, run_cli: Cli, gate_off: None,
                                                            confinement: list[str]) -> None:  # fmt: skip
    org = fast_tree(tmp_path, "rcp-bypass\n", ROOT / "systems")
    marker = tmp_path / "PWNED"
    log = org / RESULTS / "result_0.txt"
    log.write_text(log.read_text("utf-8").replace(DIVISION, f'"submission_division", "value": '
                                                  f'"{plant_rule_file(org, marker)}"'), "utf-8")  # fmt: skip
    stopped(*official(run_cli, org, *confinement), marker)


def test_a_result_file_only_the_recursive_glob_finds_runs_nothing(tmp_path: Path, run_cli: Cli, gate_off: None,
                                                                  confinement: list[str]) -> None:  # fmt: skip
    """Case 1: a system named `**`; the tools' glob `results/**/<benchmark>/result_*.txt` also finds
    results/**/x/<benchmark>/result_0.txt, which no reading of ours visits."""
    org = fast_tree(tmp_path, "rcp-bypass\n", ROOT / "systems")
    marker = tmp_path / "PWNED"
    climb = plant_rule_file(org, marker)
    os.rename(org / "results" / MODERN_SYSTEM, org / "results" / "**")
    os.rename(org / "systems" / f"{MODERN_SYSTEM}.json", org / "systems" / "**.json")
    hidden = org / "results" / "**" / "x" / BENCHMARK
    hidden.mkdir(parents=True)
    text = (org / "results" / "**" / BENCHMARK / "result_0.txt").read_text("utf-8")
    (hidden / "result_0.txt").write_text(text.replace(DIVISION, f'"submission_division", "value": "{climb}"'),
                                         "utf-8")  # fmt: skip
    stopped(*official(run_cli, org, *confinement), marker)


@pytest.mark.parametrize("time_ms", ["1e999", "NaN", "-Infinity", '"inf"'])
def test_a_division_record_our_reader_drops_runs_nothing(tmp_path: Path, run_cli: Cli, gate_off: None,
                                                         monkeypatch: pytest.MonkeyPatch, time_ms: str) -> None:
    """Case 2: the one submission_division record has a time our reader refuses (LOG006), so we never judge its
    value; the compliance checker reads it and would load the planted rule file. Unconfined: the hook alone."""
    monkeypatch.setattr(confine, "available_confinement", lambda: confine._none("switched off by the test"))
    org = fast_tree(tmp_path, "rcp-bypass\n", ROOT / "systems")
    marker = tmp_path / "PWNED"
    climb = plant_rule_file(org, marker)
    log = org / RESULTS / "result_0.txt"
    lines = log.read_text("utf-8").splitlines(keepends=True)
    for number, line in enumerate(lines):
        if DIVISION in line:
            record = json.loads(line.split(":::MLLOG", 1)[1])
            record["value"] = climb
            text = json.dumps(record).replace(f'"time_ms": {record["time_ms"]}', f'"time_ms": {time_ms}')
            assert time_ms in text
            lines[number] = f":::MLLOG {text}\n"
    log.write_text("".join(lines), "utf-8")
    stopped(*official(run_cli, org, "--unconfined"), marker)


def test_a_climbing_benchmark_name_runs_nothing(tmp_path: Path, run_cli: Cli, gate_off: None,
                                               monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """The other value the rules turn into a file name: `closed_{submission_benchmark}.yaml`."""
    monkeypatch.setattr(confine, "available_confinement", lambda: confine._none("switched off by the test"))
    org = fast_tree(tmp_path, "rcp-bypass\n", ROOT / "systems")
    marker = tmp_path / "PWNED"
    climb = plant_rule_file(org, marker)
    (org / IMPL / "closed_evil.yaml").write_text((org / IMPL / "evil_common.yaml").read_text("utf-8"), "utf-8")
    log = org / RESULTS / "result_0.txt"
    said = f'"submission_benchmark", "value": "{BENCHMARK}"'
    log.write_text(log.read_text("utf-8").replace(said, f'"submission_benchmark", "value": "{climb}"'), "utf-8")
    code, out, _err = official(run_cli, org, "--unconfined")
    assert code == 1 and not marker.exists() and "error PKG073" in out and "/evil.yaml: a path built" in out, out


def test_a_log_output_outside_is_stopped_even_when_handed_over(tmp_path: Path, run_cli: Cli,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Our params check (PKG070) switched off too: the package checker would append its log to the victim."""
    monkeypatch.setattr(confine, "available_confinement", lambda: confine._none("switched off by the test"))
    vetted = handover.vetted_arguments
    monkeypatch.setattr(handover, "vetted_arguments", lambda *a: (vetted(*a)[0], []))
    victim = tmp_path / "bashrc"
    victim.write_text("# mine\n", encoding="utf-8")
    org = fast_tree(tmp_path, f"rcp-bypass\nlog_output={victim}\n", ROOT / "systems")
    code, out, err = official(run_cli, org, "--unconfined")
    assert code == 1 and victim.read_text(encoding="utf-8") == "# mine\n", out + err
    assert f"error PKG073 package checker (python -m mlperf_logging.package_checker {ORG} training 6.1.0 " in out
    assert f"the reference tried writing {victim}, outside the working folder" in out


def test_without_bubblewrap_the_flow_refuses_unless_told(tmp_path: Path, run_cli: Cli,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    org = fast_tree(tmp_path, "rcp-bypass\n", ROOT / "systems")
    monkeypatch.setattr(confine, "BWRAP", "no-such-bwrap-here")
    # probed again, not the cached answer
    monkeypatch.setattr(confine, "available_confinement", confine.available_confinement.__wrapped__)
    code, out, err = official(run_cli, org)
    assert code == 2 and "bubblewrap" in err and "--unconfined" in err and "handover" not in err, out + err
    code, out, err = official(run_cli, org, "--unconfined", "--format", "json")
    assert code == 0 and "repo checker [" in err, err  # the tools ran, and said so
    assert "NOT confined: no-such-bwrap-here is not installed (package bubblewrap)" in err
    assert "(NOT confined: --unconfined): every step passed" in err
    assert json.loads(out)["tool"]["confinement"] == "none"


def test_the_report_says_the_tools_were_confined(tmp_path: Path, run_cli: Cli) -> None:
    if not confine.available_confinement().confined:
        pytest.skip("bubblewrap does not run here")
    org = fast_tree(tmp_path, "rcp-bypass\n", ROOT / "systems")
    code, out, err = official(run_cli, org, "--format", "json")
    assert code == 0 and json.loads(out)["tool"]["confinement"] == "bwrap", err
    assert "confined with bubblewrap" in err and "NOT confined" not in err


# ---- the wrap itself: what a tool's process can reach ---------------------------------------------------------

_PROBE = """
import os, sys
found = []
for path in sys.argv[1:]:
    try:
        with open(path, "a" if path.endswith("w") else "r") as fh:
            fh.write("x") if path.endswith("w") else fh.read()
        found.append("yes")
    except OSError:
        found.append("no")
print(" ".join(found))
"""


def test_a_wrapped_tool_writes_only_its_working_folder_and_reads_nothing_of_the_home(tmp_path: Path) -> None:
    if not confine.available_confinement().confined:
        pytest.skip("bubblewrap does not run here")
    home = Path(os.path.expanduser("~"))
    secret = home / f".mlsubmit-test-secret-{os.getpid()}"
    secret.write_text("token\n", encoding="utf-8")
    work = tmp_path / "unit"
    work.mkdir()
    (work / "link").symlink_to(secret)  # a link out of the working folder reaches nothing either
    beside = tmp_path / "beside-w"
    try:
        paths = [secret, work / "link", beside, work / "inside-w", home / f"planted-{os.getpid()}-w"]
        argv = confine.available_confinement().wrap([sys.executable, "-I", "-c", _PROBE, *map(str, paths)], work)
        done = subprocess.run(argv, cwd=work, env=confine.environment(work), capture_output=True, text=True,
                              timeout=60, check=False)  # fmt: skip
    finally:
        secret.unlink()
    assert done.stdout.split() == ["no", "no", "no", "yes", "no"], done.stderr
    assert not beside.exists() and (work / "inside-w").read_text() == "x"
    assert not (home / f"planted-{os.getpid()}-w").exists()


def test_the_launcher_stops_a_tool_given_a_rule_file_of_its_own(tmp_path: Path) -> None:
    """The compliance checker run directly with `--config` naming a planted file: plain, it runs the file's BEGIN
    block; behind the launcher it is stopped (exit 97) before reading it."""
    marker = tmp_path / "PWNED"
    evil = tmp_path / "evil.yaml"
    evil.write_text(f"- BEGIN:\n    CODE: \"open('{marker}', 'w').write('ran')\"\n", "utf-8")
    log = tmp_path / "result_0.txt"
    log.write_text(':::MLLOG {"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "submission_'
                   'benchmark", "value": "bert", "metadata": {"file": "x.py", "lineno": 1}}\n', "utf-8")  # fmt: skip
    args = [str(log), "--config", str(evil)]
    plain = subprocess.run([sys.executable, "-I", "-m", "mlperf_logging.compliance_checker", *args], cwd=tmp_path,
                           env=confine.environment(tmp_path), capture_output=True, text=True, timeout=120)  # fmt: skip
    assert marker.exists(), plain.stdout + plain.stderr  # the attack is real
    marker.unlink()
    argv = confine.tool_command("mlperf_logging.compliance_checker", args)
    done = subprocess.run(argv, cwd=tmp_path, env=confine.environment(tmp_path), capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert done.returncode == tool_launcher.REFUSED_EXIT and not marker.exists(), done.stderr
    assert f"{tool_launcher.MARKER} open of {evil}: a rule file outside mlperf-logging's own folder" in done.stderr


@pytest.mark.parametrize("module", ["http.server", "ctypes.util"])
def test_the_launcher_stops_a_tool_reaching_the_network_or_starting_a_process(tmp_path: Path, module: str) -> None:
    """http.server binds a socket (on the loopback); ctypes.util's self-test runs ldconfig or gcc."""
    args = ["--bind", "127.0.0.1", "0"] if module == "http.server" else []
    argv = confine.tool_command(module, args)
    done = subprocess.run(argv, cwd=tmp_path, env=confine.environment(tmp_path), capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == tool_launcher.REFUSED_EXIT, done.stdout + done.stderr
    assert tool_launcher.MARKER in done.stderr and "start no process and reach no network" in done.stderr


def test_planted_startup_files_and_an_impostor_package_are_never_imported(tmp_path: Path, run_cli: Cli,
                                                                         gate_off: None,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """sitecustomize, usercustomize, a .pth and an `mlperf_logging/` package in the tree and the working folder,
    and PYTHONPATH/PYTHONSTARTUP pointing at them: the tools import none (python -I, a minimal environment)."""
    monkeypatch.setattr(confine, "available_confinement", lambda: confine._none("switched off by the test"))
    org = fast_tree(tmp_path, "rcp-bypass\n", ROOT / "systems")
    marker = tmp_path / "PWNED"
    code = f"open({str(marker)!r}, 'w').write('ran')\n"
    for folder in (org, org / IMPL):
        for name in ("sitecustomize.py", "usercustomize.py", "startup.py"):
            (folder / name).write_text(code, "utf-8")
        (folder / "evil.pth").write_text(f"import os; {code}", "utf-8")
        impostor = folder / "mlperf_logging" / "package_checker"
        impostor.mkdir(parents=True)
        for name in ("__init__.py", "__main__.py"):
            (impostor / name).write_text(code, "utf-8")
            (impostor.parent / name).write_text(code, "utf-8")
    monkeypatch.setenv("PYTHONPATH", f"{org}{os.pathsep}{ORG}")
    monkeypatch.setenv("PYTHONSTARTUP", str(org / "startup.py"))
    monkeypatch.setenv("PYTHONUSERBASE", str(org))
    result = official(run_cli, org, "--unconfined")
    assert not marker.exists() and result[0] == 0, result[1] + result[2]
    assert "package checker [" in result[2] and "PKG073" not in result[1]
    shutil.rmtree(org)
