"""The chair's summary files (`report --summary-csv`) equal the reference summarizer's, byte for byte, on one small
synthetic tree (a copy; the package checker runs first, as the chair's script does).
tests/unit/report/test_chair_summary.py holds the formats, rows and findings; tests/differential/test_chair_summary.py
the corpus."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fixtures.synth_org import two_pod_org

SUFFIXES = (".csv", ".json", "_detailed.csv", "_detailed.json")


_REFERENCE = """
import contextlib, io, runpy, sys  # run with cwd=tmp_path: the package checker writes package_checker.log there
tree, usage, out = sys.argv[1:4]
for name, argv, must_run in (("mlperf_logging.package_checker", [tree, usage, "1.1.0"], False),
                             ("mlperf_logging.result_summarizer", [tree, usage, "1.1.0", "--csv", out], True)):
    sys.argv = [name, *argv]
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            runpy.run_module(name, run_name="__main__", alter_sys=False)
        except SystemExit:
            pass
        except Exception:  # the package checker raises on some of the edge cases below; the summarizer must run
            if must_run:
                raise
"""


@pytest.mark.slow
def test_summary_files_equal_the_reference_on_a_synthetictwo_pod_org(run_cli: Any, tmp_path: Path) -> None:
    tree = two_pod_org(tmp_path / "src")
    (tree / "results" / "pod16" / "bert").mkdir()  # closed, no logs: the reference's RCP step raises, no columns
    (tree / "results" / "pod4").mkdir()  # a system folder without a system file: no row
    (tree / "results" / "pod64" / "resnet" / "scaling.json").write_text('{"scaling_factor": 1.5}')  # open: kept
    copy = tmp_path / "copy" / "Org"
    shutil.copytree(tree, copy)
    subprocess.run([sys.executable, "-c", _REFERENCE, str(copy), "training", str(tmp_path / "ref.csv")],
                   check=True, capture_output=True, cwd=tmp_path)  # fmt: skip
    code, _, err = run_cli("report", "--ruleset", "1.1.0", tree, "--summary-csv", tmp_path / "ours.csv")
    assert code in (0, 1), err
    for suffix in SUFFIXES:
        assert (tmp_path / f"ours{suffix}").read_bytes() == (tmp_path / f"ref{suffix}").read_bytes(), suffix
    assert not (tree / "results" / "pod16" / "resnet" / "scaling.json").exists()  # nothing written into the tree
