"""`package` checks the tree it builds under the project's policy (the nearest mlsubmit.toml's [check] above the
config, then --profile/--select/--ignore/--severity), as `check` gates the project; `[[check.overrides]]` name the
project's paths, not the build's, and POL002 says they were left out. Packaging's own findings keep their levels."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is needed to export the implementation")
Cli = Callable[..., tuple[int, str, str]]


def example(tmp_path: Path, **kwargs: object) -> Path:
    from fixtures.demo import write_example

    return write_example(tmp_path / "w", ROOT / "systems", **kwargs).config  # type: ignore[arg-type]


def codes(out: str) -> dict[str, str]:
    data = json.loads(out)
    found = [f for entry in data["files"] for f in entry["findings"]] + data["findings"]
    return {f["code"]: f["severity"] for f in found}


def test_the_projects_severity_gates_the_build(tmp_path: Path, run_cli: Cli) -> None:
    config = example(tmp_path)
    (config.parent / "mlsubmit.toml").write_text('[check]\nseverity = { TREE019 = "error" }\n', encoding="utf-8")
    code, out, _ = run_cli("package", config, "--format", "json")
    assert code == 1 and codes(out)["TREE019"] == "error"
    assert not (config.parent / "build" / "submission").exists()  # blocked, as an error in `check` would block it
    code, out, err = run_cli("package", config, "--format", "json", "--severity", "TREE019=warning")
    assert code == 0 and codes(out)["TREE019"] == "warning", err  # the command line over the project's table
    (config.parent / "mlsubmit.toml").unlink()
    code, out, err = run_cli("package", config, "--format", "json")
    assert code == 0 and codes(out)["TREE019"] == "info", err  # no project policy: the default profile


def test_a_milder_level_lets_the_check_pass_but_not_packagings_own_errors(tmp_path: Path, run_cli: Cli) -> None:
    config = example(tmp_path, non_converged=(6, 7))  # two: more than olympic scoring drops, so the folder fails
    code, out, _ = run_cli("package", config, "--format", "json")
    assert code == 1 and {"TREE007", "PKG007"} <= {c for c, s in codes(out).items() if s == "error"}
    (config.parent / "mlsubmit.toml").write_text('[check]\nseverity = { TREE007 = "warning", TREE020 = "warning" }\n',
                                                 encoding="utf-8")  # fmt: skip
    code, out, _ = run_cli("package", config, "--format", "json")
    found = codes(out)
    assert found["TREE007"] == "warning" and found["PKG007"] == "error" and code == 1


def test_overrides_by_path_are_named_not_applied(tmp_path: Path, run_cli: Cli) -> None:
    config = example(tmp_path)
    (config.parent / "mlsubmit.toml").write_text(
        '[check]\n[[check.overrides]]\npaths = ["results/*"]\nseverity = { TREE019 = "error" }\n', encoding="utf-8")
    code, out, _ = run_cli("package", config, "--format", "json")
    found = codes(out)
    assert code == 0 and found["POL002"] == "info" and found["TREE019"] == "info"


def test_a_typo_in_the_projects_policy_is_a_usage_error(tmp_path: Path, run_cli: Cli) -> None:
    config = example(tmp_path)
    (config.parent / "mlsubmit.toml").write_text('[check]\nseverity = { TRE019 = "error" }\n', encoding="utf-8")
    code, _, err = run_cli("package", config)
    assert code == 2 and "TREE019" in err  # did you mean
