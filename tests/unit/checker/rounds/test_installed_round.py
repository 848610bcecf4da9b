"""A round the installed mlperf-logging knows and our benchmark table does not: its benchmark list and run counts
from the release's benchmark_meta.py, read as literals (never imported or run)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.upstream import installed

META = """\
_ALL_RESULT_FILE_COUNTS = {'training': {'llama2_70b_lora': 10, 'newbench': 7, 'odd': True}, 'hpc': {'x': 1}}
_ALL_ALLOWED_BENCHMARKS = {'training': {'6.1': ['llama2_70b_lora'], '7.0': ['llama2_70b_lora', 'newbench']}}
"""


@pytest.fixture
def release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setattr(installed, "package_folder", lambda: tmp_path)
    installed.benchmark_meta.cache_clear()
    yield tmp_path
    installed.benchmark_meta.cache_clear()


def test_a_round_the_table_lacks_takes_the_release_list_and_counts(release: Path) -> None:
    (release / "benchmark_meta.py").write_text(META, encoding="utf-8")
    assert benchmarks.allowed("7.0.0") == ["llama2_70b_lora", "newbench"] and benchmarks.from_installed("7.0.0")
    assert benchmarks.runs("newbench") == 7 and benchmarks.runs("odd") is None  # a bool is no count
    assert not benchmarks.from_installed("6.1.0")  # our own table's list wins where it has one
    assert benchmarks.allowed("6.1.0") == benchmarks.table()["rulesets"]["6.1.0"]
    assert benchmarks.allowed("8.0.0") == [] and not benchmarks.from_installed("8.0.0")


@pytest.mark.parametrize("text", [
    "_ALL_ALLOWED_BENCHMARKS = dict(training={'7.0': ['x']})\n",  # a call: not a literal, never run
    "_ALL_ALLOWED_BENCHMARKS = {'training': {'7.0': 'x'}}\n",  # not a list
    "def (:\n",  # not Python
])
def test_a_meta_that_is_not_plain_literals_gives_nothing(release: Path, text: str) -> None:
    (release / "benchmark_meta.py").write_text(text, encoding="utf-8")
    assert installed.benchmark_meta().allowed == {} and benchmarks.allowed("7.0.0") == []


def test_no_meta_file_gives_nothing(release: Path) -> None:
    assert installed.benchmark_meta() == installed.Meta(allowed={}, runs={})
