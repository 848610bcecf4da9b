"""The `implementations` check's README content (TREE052): an implementation whose README.md files are all blank
is a warning at the first of them; one README with text, or a missing README (TREE011), is not TREE052."""

from __future__ import annotations

from pathlib import Path

from fixtures.treefix import build_org, resnet_runs
from mlsubmit.checker import CheckOptions, run_check

from mlsubmit.core.findings import Severity


def _tree(root: Path, readmes: dict[str, str]) -> Path:
    org = build_org(root / "org", {("pod16", "resnet"): resnet_runs([3, 3, 3, 3, 3])})
    impl = org / "benchmarks" / "resnet" / "implementations" / "ipu"
    (impl / "README.md").unlink()
    for relative, text in readmes.items():
        (impl / relative).parent.mkdir(parents=True, exist_ok=True)
        (impl / relative).write_text(text, encoding="utf-8")
    return org


def _tree052(org: Path) -> list[tuple[str, Severity, str]]:
    report = run_check([str(org)], CheckOptions(ruleset="1.0.0"))
    return [(f.path, f.severity, f.message) for f in report.report.all_findings() if f.code == "TREE052"]


def test_a_blank_readme_is_a_warning_at_its_path(tmp_path: Path) -> None:
    org = _tree(tmp_path, {"README.md": " \n\t\n"})
    message = "the resnet implementation's README.md is empty: none gives the run command and its flags"
    assert _tree052(org) == [(f"{org}/benchmarks/resnet/implementations/ipu/README.md", Severity.WARNING, message)]


def test_every_readme_blank_is_one_finding_at_the_first(tmp_path: Path) -> None:
    org = _tree(tmp_path, {"README.md": "", "docs/README.md": "\n"})  # ipu/README.md is walked first
    found = _tree052(org)
    assert [(path, level) for path, level, _ in found] == [
        (f"{org}/benchmarks/resnet/implementations/ipu/README.md", Severity.WARNING)]
    assert found[0][2].startswith("all 2 README.md files of the resnet implementation are empty")


def test_one_readme_with_text_passes(tmp_path: Path) -> None:
    assert _tree052(_tree(tmp_path, {"README.md": "", "ipu/README.md": "Run ./run_and_time.sh\n"})) == []


def test_a_missing_readme_is_tree011_not_tree052(tmp_path: Path) -> None:
    org = _tree(tmp_path, {})
    codes = {f.code for f in run_check([str(org)], CheckOptions(ruleset="1.0.0")).report.all_findings()}
    assert "TREE011" in codes and "TREE052" not in codes
