"""The launcher's policy (submission/tool_launcher.py): what a reference tool may open, compile, import and start."""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

import pytest
from mlsubmit.checker.upstream.installed import package_folder
from mlsubmit.submission import tool_launcher as launcher

PACKAGE = package_folder()
assert PACKAGE is not None
RULES = PACKAGE / "compliance_checker" / "training_6.1.0"


def policy() -> launcher.Policy:
    return launcher.Policy(str(PACKAGE), list(sys.path))


def test_shipped_rule_files_open_and_a_path_out_of_the_package_does_not(tmp_path: Path) -> None:
    planted = tmp_path / "evil_common.yaml"
    planted.write_text("- BEGIN:\n    CODE: pass\n", encoding="utf-8")
    assert policy().why("open", (str(RULES / "common.yaml"), "r", 0)) is None
    assert policy().why("open", (str(RULES / "closed_common.yaml").encode(), "r", 0)) is None
    assert "a rule file outside" in str(policy().why("open", (str(planted), "r", 0)))
    assert "a rule file outside" in str(policy().why("open", (planted.with_suffix(".YML"), "r", 0)))
    climb = f"{RULES}/{'../' * 30}{str(tmp_path).lstrip('/')}/evil_common.yaml"
    assert "built from mlperf-logging's own folder that leaves it" in str(policy().why("open", (climb, "r", 0)))
    rcp = PACKAGE / "rcp_checker" / "training_6.1.0"
    assert policy().why("open", (str(rcp / "rcps_bert.json"), "r", 0)) is None
    climb_rcp = f"{rcp}/../../../{'../' * 30}{str(tmp_path).lstrip('/')}/rcps_bert.json"
    assert policy().why("open", (climb_rcp, "r", 0)) is not None


def test_a_tree_file_is_read_but_code_and_pickles_outside_are_not(tmp_path: Path) -> None:
    for name in ("result_0.txt", "system.json", "train.py", "scaling.json"):  # the seed checker reads .py as text
        assert policy().why("open", (str(tmp_path / name), "r", 0)) is None
    for name in ("evil.pyc", "evil.pth", "evil.so", "evil.pkl", "evil.pickle"):
        assert "code outside" in str(policy().why("open", (str(tmp_path / name), "rb", 0)))
    assert policy().why("open", (3, "r", 0)) is None  # a file descriptor: opened before, by path


def test_code_compiles_only_from_the_interpreter_folders_or_a_string(tmp_path: Path) -> None:
    stdlib = sysconfig.get_paths()["stdlib"]
    assert policy().why("compile", (b"", os.path.join(stdlib, "json", "__init__.py"))) is None
    assert policy().why("compile", ("x = 1", "<string>")) is None
    assert policy().why("compile", ("x = 1", str(PACKAGE / "benchmark_meta.py"))) is None
    assert "compile of" in str(policy().why("compile", ("x = 1", str(tmp_path / "evil.py"))))
    assert "exec of" in str(policy().why("exec", (compile("x = 1", str(tmp_path / "evil.py"), "exec"),)))
    assert policy().why("exec", (compile("x = 1", "<string>", "exec"),)) is None


def test_imports_see_only_the_interpreter_import_path(tmp_path: Path) -> None:
    start = [p for p in sys.path if p]
    assert policy().why("import", ("json", None, start, [], [])) is None
    found = policy().why("import", ("mlperf_logging", None, [str(tmp_path), *start], [], []))
    assert found is not None and str(tmp_path) in found
    assert "the working folder" in str(policy().why("import", ("x", None, ["", *start], [], [])))


@pytest.mark.parametrize("event", ["subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
                                   "os.fork", "os.kill", "socket.connect", "socket.getaddrinfo"])  # fmt: skip
def test_no_process_and_no_network(event: str) -> None:
    assert "start no process and reach no network" in str(policy().why(event, ("x",)))


def test_libraries_load_from_the_system_and_the_interpreter_only(tmp_path: Path) -> None:
    assert policy().why("ctypes.dlopen", ("libc.so.6",)) is None
    assert policy().why("ctypes.dlopen", (None,)) is None
    assert "loading the library" in str(policy().why("ctypes.dlopen", (str(tmp_path / "evil.so"),)))


def test_a_refusal_stops_through_the_hook() -> None:
    said: list[str] = []
    hook = launcher.hook_for(policy(), said.append)
    hook("open", ("/nowhere/evil_common.yaml", "r", 0))
    hook("open", ("/nowhere/result_0.txt", "r", 0))
    assert said == ["open of /nowhere/evil_common.yaml: a rule file outside mlperf-logging's own folder"]


def test_writes_go_only_to_the_working_folder(tmp_path: Path) -> None:
    work = tmp_path / "unit"
    watch = launcher.Policy(str(PACKAGE), list(sys.path), str(work))
    assert watch.why("open", (str(work / "Graphcore" / "results" / "scaling.json"), "w", 0)) is None
    assert watch.why("open", (str(work / "package_checker.log"), "a", 0)) is None
    assert watch.why("open", (os.devnull, "w", 0)) is None
    assert watch.why("open", (str(tmp_path / "victim"), "r", 0)) is None  # reading: the confinement's business
    for mode, flags in (("a", 0), ("r+", 0), ("x", 0), (None, os.O_WRONLY | os.O_CREAT), (None, os.O_RDWR)):
        assert "outside the working folder" in str(watch.why("open", (str(tmp_path / "victim"), mode, flags)))
    assert watch.why("open", (str(tmp_path / "victim"), None, os.O_RDONLY)) is None
