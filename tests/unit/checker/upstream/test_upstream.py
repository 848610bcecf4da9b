"""Only checker/upstream/ reaches mlperf-logging's internals (issue 28).

import-linter holds the `import mlperf_logging...` statements; it cannot see a module named in a string, as
`importlib.util.find_spec("mlperf_logging")` names it. This test reads every product module with `ast` and fails on
either form outside checker/upstream/. (The test fixtures, tests/fixtures/, write logs with the public mllog API;
they are no product module.)
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
PRODUCT = ("mlsubmit", "checker", "submission")
ALLOWED = (ROOT / "checker" / "upstream",)


def _names_upstream(name: str) -> bool:
    return name == "mlperf_logging" or name.startswith("mlperf_logging.")


def touches(source: str) -> list[int]:
    """Lines that import mlperf_logging or pass one of its module names to a call (find_spec, import_module);
    the same word as a report's key ("mlperf_logging": its version) is no touch."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            hit = any(_names_upstream(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            hit = node.level == 0 and _names_upstream(node.module or "")
        else:
            hit = isinstance(node, ast.Call) and any(
                isinstance(a, ast.Constant) and isinstance(a.value, str) and _names_upstream(a.value)
                for a in node.args)
        if hit:
            found.append(node.lineno)
    return found


def test_the_scan_sees_both_forms() -> None:
    assert touches("import mlperf_logging.mllog\n") == [1]
    assert touches("from mlperf_logging import mllog\n") == [1]
    assert touches("import importlib.util\nimportlib.util.find_spec('mlperf_logging.rcp_checker')\n") == [2]
    assert touches('"""Written with mlperf_logging.mllog (a docstring)."""\nimport json\n') == []
    assert touches('tool = {"mlperf_logging": "4.1.68"}\n') == []


def test_only_upstream_touches_mlperf_logging() -> None:
    outside = []
    for folder in PRODUCT:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if any(path.is_relative_to(allowed) for allowed in ALLOWED):
                continue
            outside += [f"{path.relative_to(ROOT)}:{line}" for line in touches(path.read_text(encoding="utf-8"))]
    assert outside == []


def test_upstream_finds_the_installed_release() -> None:
    from mlsubmit.checker.upstream import installed

    assert installed.version()[0].isdigit()
    rules = installed.rules_folder()
    assert rules is not None and (rules / "training_1.0.0").is_dir()
    assert installed.rcp_data_folder("no-such-round") is None
    assert installed.rcp_module_file().name == "rcp_checker.py"


def test_every_subpackage_is_named_in_the_contracts() -> None:
    """The contract on mlperf_logging lists the checker's subpackages by name: one added later must be kept away
    from it like the others, so a missing name fails here rather than passing lint silently. (The public-API
    contract is held to the tree by tests/unit/checker/test_public_api.py.)"""
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    upstream = next(c for c in contracts if c.get("forbidden_modules") == ["mlperf_logging"])["source_modules"]
    subpackages = {p.name for p in (ROOT / "checker").iterdir() if (p / "__init__.py").is_file()}
    assert subpackages, "no subpackage found under checker/"
    for name in subpackages:
        if name != "upstream":
            assert f"mlsubmit.checker.{name}" in upstream, f"{name}: not kept away from mlperf_logging"
