"""`mlsubmit[capture]` as users install it: the wheel built from a clone of HEAD, installed with its extra (so
mlperf-sysinfo comes from PyPI) into a fresh venv, run from outside the repository. The clone, the wheel and the venv
are built once per session (tests/fixtures/installed.py) and shared with test_installed_wheel.py.

The capture of this host is a file in mlperf-sysinfo's documented training format (fixtures.capture, the
values it captured on the build machine); `MLSUBMIT_HOST_CAPTURE=1` also runs mlperf-sysinfo itself on the machine
(its mlc-scripts automation may install OS packages such as dmidecode, so it is not run unasked).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from fixtures.capture import write_capture
from fixtures.installed import installed, sh
from fixtures.installed import run as _run

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")]  # fmt: skip

STATED = ["--set", "host_memory_configuration=1 x 25GB (virtual machine)",
          "--set", "other_software_stack=POD-SW 3.4.0", "--set", "system_type=datacenter"]  # fmt: skip


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    top, made = installed(tmp_path_factory)
    if not made["capture"]:
        pytest.skip(made["why"])
    return top / "venv"


def test_the_extra_brings_mlperf_sysinfo(venv: Path, tmp_path: Path) -> None:
    out = sh(venv / "bin" / "python", "-c", "import mlperf_sysinfo, mlsubmit; print(mlperf_sysinfo.__version__); "
             "print(mlsubmit.__file__)", cwd=tmp_path)  # fmt: skip
    version, where = out.split()
    assert version.startswith("1.0.") and where.startswith(str(venv))


@pytest.mark.parametrize(("size", "ruleset"), [(16, "6.1.0"), (64, "6.1.0"), (16, "5.1.0"), (64, "5.1.0")])
def test_installed_capture_makes_descriptions_check_passes(venv: Path, tmp_path: Path, size: int,
                                                           ruleset: str) -> None:  # fmt: skip
    source = write_capture(tmp_path / "IPU-POD16.json")
    system_id = f"ipu-pod{size}-POPART-closed"
    done = _run(venv / "bin" / "mlsubmit", "systems", "capture", "--from", source, "--system-id", system_id,
                "--ruleset", ruleset, "--pod-size", str(size), *STATED, "--set", f"system_name=IPU-POD{size}",
                cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    written = tmp_path / "systems" / f"{system_id}.json"
    assert json.loads(written.read_text())["accelerators_per_node"] == str(size)
    check = _run(venv / "bin" / "mlsubmit", "check", "--ruleset", ruleset, written, cwd=tmp_path)
    assert check.returncode == 0 and "0 error(s)" in check.stdout, check.stdout


def test_installed_capture_refuses_a_partial_capture(venv: Path, tmp_path: Path) -> None:
    from fixtures.capture import capture_document

    source = write_capture(tmp_path / "c.json", capture_document(complete=False, nodes=2, answered=1))
    done = _run(venv / "bin" / "mlsubmit", "systems", "capture", "--from", source, "--system-id", "ipu-pod16-x",
                "--ruleset", "6.1.0", "--pod-size", "16", *STATED, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2 and "partial capture" in done.stderr
    assert not (tmp_path / "systems").exists()


@pytest.mark.skipif(os.environ.get("MLSUBMIT_HOST_CAPTURE") != "1",
                    reason="runs mlperf-sysinfo on this machine (it may install OS packages); MLSUBMIT_HOST_CAPTURE=1")
def test_a_capture_of_this_host_made_now(venv: Path, tmp_path: Path) -> None:
    config = tmp_path / "sysinfo.yaml"
    config.write_text(
        "profile: training\nsystem:\n  name: IPU-POD16\n  availability: Available on-premise\n  accelerator: none\n"
        "  cooling: air\n  networking_topology: Single host server; 100GbE to the IPU-M2000s\n"
        "nodes:\n  include_local: true\ntraining:\n  framework: PopART Poplar SDK 3.4.0\n"
        "submission:\n  submitter: Graphcore\n  division: closed\n", encoding="utf-8")  # fmt: skip
    args = ["systems", "capture", "--sysinfo-config", config, "--system-id", "ipu-pod16-POPART-closed",
            "--ruleset", "6.1.0", "--pod-size", "16", "--m2000", "4", *STATED]
    done = _run(venv / "bin" / "mlsubmit", *args, cwd=tmp_path)
    assert done.returncode == 0 and "captured this host with mlperf-sysinfo 1.0." in done.stderr, done.stderr[-3000:]
    check = _run(venv / "bin" / "mlsubmit", "check", "--ruleset", "6.1.0", tmp_path / "systems", cwd=tmp_path)
    assert check.returncode == 0, check.stdout
