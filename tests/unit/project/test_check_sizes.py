"""tools/check_sizes.py, the 50-line function and 600-line module limits `make lint` keeps, and the 400-line guide it
names."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from fixtures.project_tools import load_tool

ROOT = Path(__file__).resolve().parents[3]


def _tool() -> ModuleType:
    return load_tool("check_sizes")


def _function(name: str, lines: int) -> str:
    return f"def {name}() -> None:\n" + "    x = 1\n" * (lines - 1)


def test_a_long_function_and_a_long_module_are_named(tmp_path: Path) -> None:
    tool = _tool()
    (tmp_path / "checker").mkdir()
    (tmp_path / "checker" / "ok.py").write_text(_function("short", 50))
    (tmp_path / "checker" / "long.py").write_text(
        "class C:\n" + "".join("    " + line + "\n" for line in _function("method", 51).splitlines())
        + "\n" * (601 - 52)
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_big.py").write_text("\n" * 500 + _function("test_x", 51))  # tests: functions only
    found = tool.problems(tmp_path)
    assert found == [
        "checker/long.py: 601 lines (limit 600)",
        "checker/long.py:2: C.method is 51 lines (limit 50)",
        "tests/test_big.py:501: test_x is 51 lines (limit 50)",
    ]


def test_a_module_past_the_guide_is_named_but_does_not_fail(tmp_path: Path) -> None:
    tool = _tool()
    (tmp_path / "checker").mkdir()
    (tmp_path / "checker" / "big.py").write_text("x = 1\n" * 450)
    (tmp_path / "checker" / "fine.py").write_text("x = 1\n" * 400)
    assert tool.problems(tmp_path) == []
    assert tool.over_the_guide(tmp_path) == ["checker/big.py: 450 lines (guide 400: split by topic?)"]


def test_the_project_keeps_its_limits() -> None:
    assert _tool().problems(ROOT) == []
