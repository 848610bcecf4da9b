"""The lines kept for the RCP reader: the reader's own words, its newline handling, and its answers on the corpus."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import pytest
from mlsubmit.checker.logs.facts import extract
from mlsubmit.checker.logs.rcp_lines import TRIGGERS, as_text, collect
from mlsubmit.checker.logs.reader import read_log
from mlsubmit.checker.rcp.verdict import run_convergence


def _words_the_reader_tests() -> set[str]:
    """Every literal the installed read_submission_file looks for in a line (`"word" in str`)."""
    from mlperf_logging.rcp_checker import rcp_checker as rc

    tree = ast.parse(inspect.getsource(rc.read_submission_file))
    words = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) and isinstance(node.ops[0], ast.In)
                and isinstance(node.left.value, str) and isinstance(node.comparators[0], ast.Name)):
            words.add(node.left.value)
    return words


def test_every_word_the_reader_acts_on_is_kept() -> None:
    words = _words_the_reader_tests()
    assert "run_stop" in words and "global_batch_size" in words  # the parse found the reader's tests
    assert words - {w.decode() for w in TRIGGERS} == set(), "a new word in mlperf-logging's RCP reader"


def test_lines_are_kept_once_in_order_with_the_readers_line_ends() -> None:
    kept: list[bytes] = []
    collect(b"noise\n:::MLLOG run_stop eval_accuracy\nx\r\n:::MLLOG global_batch_size\r\nlast run_stop", kept)
    assert kept == [b":::MLLOG run_stop eval_accuracy", b":::MLLOG global_batch_size\r", b"last run_stop"]
    assert as_text(kept) == (":::MLLOG run_stop eval_accuracy", ":::MLLOG global_batch_size", "last run_stop")
    assert as_text([b"a\rb run_stop"]) == ("a", "b run_stop")  # a lone CR ends a line, as universal newlines do
    assert as_text([]) == ()
    assert as_text([b"\xe9 run_stop"]) == ("\xe9 run_stop",)  # latin-1, as the reader opens the file


@pytest.mark.corpus
def test_the_readers_answer_on_kept_lines_is_its_answer_on_the_file(corpus: Path,
                                                                    rcp_reference: dict[str, Any]) -> None:
    """Every corpus log: the reference's reader on the file itself (read once per session, beside its
    check_directory: tests/fixtures/rcp_reference.py) and on the lines we keep give the same run."""
    from fixtures.rcp_reference import logs, ruleset_of

    compared = 0
    for path in logs(corpus):
        ruleset = ruleset_of(path)
        kind, answer = rcp_reference["logs"][f"{path}\t{ruleset}"]
        if kind == "ok":
            failed, epochs, bs, bench = answer
            want: tuple[object, ...] = (not failed, epochs if not failed else 1e9, bs, bench)
        else:
            want = ("raises", answer)
        conv = run_convergence(extract(read_log(path)), ruleset)
        got = ("raises", conv.problem.split(":")[0]) if conv.problem else (conv.converged, conv.epochs,
                                                                          conv.batch_size, conv.benchmark)
        assert got == want, path
        compared += 1
    assert compared > 0
