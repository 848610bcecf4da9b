"""An unreadable folder anywhere in a tree is a TREE048 finding, never exit 3 (issue 26).

Run as a user without the right to read it: as root, through `setpriv` with the capabilities that bypass file
permissions dropped (root reads everything otherwise); as any other user, as it is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.treefix import build_org, resnet_runs

_SETPRIV = shutil.which("setpriv")
_DROP = "-dac_override,-dac_read_search"


def _as_reader(*args: str) -> subprocess.CompletedProcess[str]:
    prefix: list[str] = []
    if os.geteuid() == 0:
        prefix = [str(_SETPRIV), f"--bounding-set={_DROP}", f"--inh-caps={_DROP}", "--"]
    return subprocess.run([*prefix, sys.executable, "-m", "mlsubmit", *args], capture_output=True, text=True,
                          timeout=300, check=False)


@pytest.fixture(scope="module")
def org(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.geteuid() == 0 and _SETPRIV is None:
        pytest.skip("running as root and setpriv is not installed: permissions cannot be taken away")
    return build_org(tmp_path_factory.mktemp("perm") / "Org", {("s", "resnet"): resnet_runs([40, 41])})


@pytest.mark.parametrize("folder", ["systems", "results/s", "benchmarks", "benchmarks/resnet/implementations/ipu"])
def test_an_unreadable_folder_is_a_finding_in_check_and_report(org: Path, folder: str) -> None:
    locked = org / folder
    locked.chmod(0)
    try:
        check = _as_reader("check", "--ruleset", "1.0.0", str(org))
        report = _as_reader("report", "--ruleset", "1.0.0", str(org)) if folder == "systems" else check
    finally:
        locked.chmod(0o755)
    assert check.returncode == 1, check.stderr
    assert "TREE048" in check.stdout
    assert "TREE011" not in check.stdout  # issue 35: an unreadable implementation folder was "no README.md"
    assert report.returncode in (0, 1), report.stderr
    assert "internal error" not in check.stderr + report.stderr
