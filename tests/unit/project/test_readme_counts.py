"""The counts the README states come from the code: a count that drifts fails here (issue 57 item 5). The README
states no count of finding codes: a new code would have to edit it (issue 56 item 2: a new code is four files)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _stated(pattern: str) -> int:
    found = re.findall(pattern, README)
    assert len(found) == 1, f"the README states {pattern!r} {len(found)} times"
    return int(found[0].replace(",", ""))


def test_the_number_of_browser_tests() -> None:
    """Test functions of the file the README names (the whole file is marked `browser`; none is parametrized)."""
    named = re.search(r"\| [\d,]+ marked `browser` \(`([^`]+)`\)", README)
    assert named, "the README names no file of browser tests"
    source = ROOT / named.group(1)
    tree = ast.parse(source.read_text(encoding="utf-8"))
    tests = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
    assert "pytestmark = pytest.mark.browser" in source.read_text(encoding="utf-8")
    assert not [n.name for n in tests if any("parametrize" in ast.unparse(d) for d in n.decorator_list)]
    assert _stated(r"\| ([\d,]+) marked `browser` \(`") == len(tests)
