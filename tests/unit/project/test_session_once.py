"""The tests' once-per-session store (tests/fixtures/session_once.py): one build, every asker reads it."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.session_once import once


def test_the_second_asker_reads_the_first_build(tmp_path_factory: pytest.TempPathFactory) -> None:
    calls: list[Path] = []

    def build(folder: Path) -> dict[str, int]:
        calls.append(folder)
        (folder / "out.txt").write_text("x")
        return {"trees": 3}

    first = once(tmp_path_factory, "store-test", build)
    second = once(tmp_path_factory, "store-test", build)
    assert first == second == (calls[0], {"trees": 3}) and len(calls) == 1
    assert (second[0] / "out.txt").read_text() == "x"


def test_a_failed_build_leaves_no_answer(tmp_path_factory: pytest.TempPathFactory) -> None:
    def broken(folder: Path) -> None:
        raise RuntimeError("reference crashed")

    with pytest.raises(RuntimeError):
        once(tmp_path_factory, "store-broken", broken)
    assert once(tmp_path_factory, "store-broken", lambda folder: [1])[1] == [1]
