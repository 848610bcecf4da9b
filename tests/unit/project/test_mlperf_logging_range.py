"""The supported range of mlperf-logging: a round the installed release has no rules for is a usage error that
names the release to install, and every JSON report says which release its verdicts came from."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from mlsubmit.checker.rules import files as ruleset
from mlsubmit.checker.upstream import installed

from mlsubmit.cli import rulesets as cli_rulesets

ROOT = Path(__file__).resolve().parents[3]
Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def without_6x(monkeypatch: pytest.MonkeyPatch) -> None:
    """The installed release as 4.1.30 is: rules up to 5.1.0."""
    older = tuple(v for v in ruleset.available_rulesets() if not v.startswith("6."))
    monkeypatch.setattr(ruleset, "available_rulesets", lambda: older)
    monkeypatch.setattr(cli_rulesets, "available_rulesets", lambda: older)


def test_a_round_newer_than_the_release_names_the_release_to_install(run_cli: Cli, without_6x: None) -> None:
    code, _, err = run_cli("check", "--ruleset", "6.1", str(ROOT / "systems"))
    assert code == 2
    assert f"mlperf-logging {installed.version()} has no rules for ruleset 6.1.0" in err, err
    assert "install mlperf-logging>=4.1.60" in err
    assert "Traceback" not in err


def test_a_stated_round_newer_than_the_release_too(run_cli: Cli, without_6x: None, tmp_path: Path) -> None:
    (tmp_path / ".mlsubmit-round").write_text("6.0\n")
    system = tmp_path / "systems" / "pod.json"
    system.parent.mkdir()
    system.write_bytes((ROOT / "systems" / "ipu-pod16-POPART-closed.json").read_bytes())
    code, _, err = run_cli("advise", str(system))
    assert code == 2 and "mlperf-logging>=4.1.50" in err, err


def test_the_json_report_names_the_mlperf_logging_release(run_cli: Cli) -> None:
    code, out, _ = run_cli("check", "--ruleset", "1.1.0", "--format", "json", str(ROOT / "systems"))
    assert code == 0
    assert json.loads(out)["tool"]["mlperf_logging"] == installed.version()
    assert installed.version()[0].isdigit()


def test_the_tested_ends_are_named_alike_everywhere() -> None:
    """The Makefile installs the two ends, rcp_fit.py trusts the adapter between them, pyproject allows the oldest."""
    import re

    from mlsubmit.checker.upstream import rcp_fit as fit

    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    newest = re.search(r"^NEWEST_MLPERF_LOGGING := (\S+)$", make, re.M)
    oldest = re.search(r"^OLDEST_MLPERF_LOGGING := (\S+)$", make, re.M)
    assert newest and oldest
    assert fit.version_tuple(newest.group(1)) == fit.NEWEST and fit.version_tuple(oldest.group(1)) == fit.OLDEST
    assert f'"mlperf-logging>={oldest.group(1)},<4.2"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
