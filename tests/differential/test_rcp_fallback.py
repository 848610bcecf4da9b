"""When mlperf-logging's RCP module does not fit the adapter, the RCP check runs the module as it is.

The doctored module is a copy of the installed package in tmp_path with one more call the adapter's stand-ins do
not hold (`logging.debug`); the installed package is never touched.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import mlperf_logging
import pytest
from conftest import tree_digest
from fixtures.rcpfix import run_lines
from mlsubmit.checker.logs.facts import LogFacts, extract
from mlsubmit.checker.logs.reader import read_log
from mlsubmit.checker.rcp.verdict import evaluate
from mlsubmit.checker.upstream import rcp_adapted as reference
from mlsubmit.checker.upstream import rcp_fit as fit

# benchmark, ruleset, runs, bypass: a pass, a pass by interpolation with a factor, a fail let through by bypass
CASES = {
    "slower": ("resnet", "1.0.0", [run_lines(e) for e in (40, 40, 41, 42, 43)], False),
    "interpolated": ("resnet", "1.0.0", [run_lines(60, bs=8192)] * 5, False),
    "bypass": ("resnet", "1.0.0", [run_lines(30)] * 5, True),
}

EXTRA_CALL = '    logging.debug("doctored: one more call")\n'


def write(folder: Path, runs: list[list[str]]) -> list[LogFacts]:
    folder.mkdir(parents=True, exist_ok=True)
    for i, lines in enumerate(runs):
        (folder / f"result_{i}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [extract(read_log(p)) for p in sorted(folder.glob("result_*.txt"))]


def reference_verdict(folder: Path, ruleset: str, bypass: bool) -> tuple[bool, str, float]:
    """The unmodified module on a copy of the folder (it may write scaling.json)."""
    from mlperf_logging.rcp_checker import rcp_checker as rc

    copy = folder.parent / f"{folder.name}-copy"
    shutil.copytree(folder, copy)
    try:
        passed, msg, norm = rc.check_directory(str(copy), "training", ruleset, False, False, rcp_pass="pruned_rcps",
                                               rcp_bypass=bypass, set_scaling=True)  # fmt: skip
    finally:
        shutil.rmtree(copy)
    return bool(passed), msg, float(norm)


def installed_source() -> str:
    return reference.installed()[1]


def doctored(source: str) -> str:
    head = "def check_directory("
    at = source.index(head)
    body = source.index("\n", source.index("):", at)) + 1
    return source[:body] + EXTRA_CALL + source[body:]


@pytest.fixture
def fresh_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The adapter's decision made again in this test and forgotten after it."""
    monkeypatch.setattr(reference._Fit, "reasons", None)
    monkeypatch.setattr(reference._Fit, "said", False)


def test_the_installed_module_fits_and_a_doctored_one_does_not() -> None:
    version = reference.installed()[0]
    assert fit.misfits(installed_source(), version) == []
    reasons = fit.misfits(doctored(installed_source()), version)
    assert len(reasons) == 1 and "logging.debug is not provided by the adapter" in reasons[0], reasons
    assert "outside the tested range" in fit.misfits(installed_source(), "4.2.0")[0]
    renamed = installed_source().replace("def _eval_submission_record(", "def _evaluate_record(")
    assert any("_eval_submission_record" in r for r in fit.misfits(renamed, version))


@pytest.mark.parametrize("case", ["slower", "interpolated", "bypass"])
def test_upstreams_module_as_it_is_gives_the_references_verdict(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], fresh_fit: None
) -> None:
    monkeypatch.setattr(reference, "misfits", lambda: ["a doctored module"])
    bench, ruleset, runs, bypass = CASES[case]
    folder = tmp_path / "results" / "sys" / bench
    facts = write(folder, runs)
    want = reference_verdict(folder, ruleset, bypass)
    before = tree_digest(tmp_path)
    ours = evaluate(bench, ruleset, facts, bypass=bypass, closed=True)
    assert (ours.passed, ours.reference, ours.scaling_factor) == want
    assert tree_digest(tmp_path) == before  # its scaling.json went to a temporary folder
    evaluate(bench, ruleset, facts, bypass=bypass, closed=True)
    err = capsys.readouterr().err
    assert err.count("runs mlperf-logging") == 1 and "a doctored module" in err, err


def test_an_adapted_run_that_raises_is_run_again_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], fresh_fit: None
) -> None:
    monkeypatch.setattr(reference._Fit, "reasons", [])  # the module fits, as far as its source tells

    def broken(*args: object) -> None:
        raise AttributeError("module 'numpy' has no attribute 'average'")  # as a stand-in would

    monkeypatch.setattr(reference.adapted_module(), "get_submission_epochs", broken)
    bench, ruleset, runs, bypass = CASES["slower"]
    folder = tmp_path / "results" / "sys" / bench
    ours = evaluate(bench, ruleset, write(folder, runs), bypass=bypass, closed=True)
    assert ours.crash is None
    assert (ours.passed, ours.reference, ours.scaling_factor) == reference_verdict(folder, ruleset, bypass)
    assert any("AttributeError" in r for r in reference._Fit.reasons or [])
    assert capsys.readouterr().err.count("runs mlperf-logging") == 1


SNIPPET = """
import json, sys
from pathlib import Path
from mlsubmit.checker.logs.facts import extract
from mlsubmit.checker.logs.reader import read_log
from mlsubmit.checker.rcp.verdict import evaluate
folder = Path(sys.argv[1])
facts = [extract(read_log(p)) for p in sorted(folder.glob("result_*.txt"))]
r = evaluate(sys.argv[2], sys.argv[3], facts, closed=True)
print(json.dumps([r.status, r.passed, r.reference, r.scaling_factor, [c.epochs for c in r.runs]]))
"""


@pytest.mark.parametrize("case", ["slower", "interpolated"])
def test_a_doctored_copy_of_upstreams_module_is_run_as_it_is(case: str, tmp_path: Path) -> None:
    copy = tmp_path / "doctored" / "mlperf_logging"
    shutil.copytree(Path(mlperf_logging.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    module = copy / "rcp_checker" / "rcp_checker.py"
    module.write_text(doctored(module.read_text(encoding="utf-8")), encoding="utf-8")
    bench, ruleset, runs, _ = CASES[case]
    folder = tmp_path / "results" / "sys" / bench
    write(folder, runs)
    before = tree_digest(folder)

    def run(path: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", SNIPPET, str(folder), bench, ruleset], capture_output=True,
                              text=True, env={**_env(), "PYTHONPATH": path}, cwd=tmp_path, timeout=300)  # fmt: skip

    plain, adapted = run(str(tmp_path / "doctored")), run("")
    assert plain.returncode == 0 and adapted.returncode == 0, plain.stderr + adapted.stderr
    assert json.loads(plain.stdout) == json.loads(adapted.stdout)
    assert plain.stderr.count("mlsubmit: the RCP check runs mlperf-logging") == 1, plain.stderr
    assert "logging.debug is not provided by the adapter" in plain.stderr
    assert adapted.stderr == ""
    assert tree_digest(folder) == before


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
