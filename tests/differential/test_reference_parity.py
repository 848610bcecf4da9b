"""Differential tests against mlperf-logging on the real corpus: same records, same verdicts.

Our verdict for a log is "fail" when it has an error among LOG and RULE findings; the reference's is the exit status
of `python -m mlperf_logging.compliance_checker --usage training --ruleset R FILE` (a traceback is exit 1).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.differential import corpus_logs, make_mutants, reference_verdicts
from mlsubmit.checker.logs.reader import read_log
from mlsubmit.checker.rules.engine import check_records
from mlsubmit.checker.rules.files import get_ruleset

from mlsubmit.core.findings import Severity

pytestmark = pytest.mark.corpus


def our_verdict(path: Path, ruleset: str) -> bool:
    log = read_log(path)
    findings = log.findings + check_records(log.records, get_ruleset(ruleset), str(path))
    return not any(f.severity is Severity.ERROR and f.family in ("LOG", "RULE") for f in findings)


def test_records_equal_mlp_parser_on_every_corpus_log(corpus: Path) -> None:
    from mlperf_logging.compliance_checker import mlp_parser

    logs = corpus_logs(corpus)
    assert len(logs) > 300
    for ruleset, path in logs:
        ours = read_log(path)
        ref, errors = mlp_parser.parse_file(str(path), ruleset=ruleset)
        assert [(r.key, r.value, r.timestamp, r.lineno) for r in ours.records] == [
            (r.key, r.value, r.timestamp, r.lineno) for r in ref
        ], path
        assert ours.parse_errors == len(errors), path
        raw = path.read_bytes().split(b"\n")
        for r in ours.records:  # the line number points at the physical line holding the record
            assert f'"key": "{r.key}"'.encode() in raw[r.line - 1] or r.key.encode() in raw[r.line - 1], (path, r.line)


@pytest.mark.slow
def test_verdicts_equal_the_reference_on_corpus_and_mutants(corpus: Path, tmp_path: Path) -> None:
    logs = corpus_logs(corpus)
    mutants = make_mutants(logs, tmp_path, every=4)
    jobs = [*logs, *((r, p) for r, p, _ in mutants)]
    ref = reference_verdicts(jobs)
    kinds = {str(p): kind for _, p, kind in mutants}
    tally: dict[str, list[int]] = {}
    failing: dict[str, int] = {}
    disagreements = []
    for ruleset, path in jobs:
        kind = kinds.get(str(path), "original")
        expected = bool(ref[str(path)]["ok"])
        got = our_verdict(path, ruleset)
        agree, total = tally.setdefault(kind, [0, 0])
        tally[kind] = [agree + (got == expected), total + 1]
        failing[kind] = failing.get(kind, 0) + (not expected)
        if got != expected:
            disagreements.append((kind, str(path), got, ref[str(path)]))
    summary = {k: f"{a}/{t}" for k, (a, t) in sorted(tally.items())}
    print("parity:", json.dumps(summary), "reference failures:", json.dumps(failing, sort_keys=True))
    assert tally["original"][1] == len(logs)
    assert len(mutants) >= 6 * 80
    assert disagreements == []
    # the mutations must bite: most mutated logs fail, so agreement is not just "both pass"
    assert failing["break_json"] == tally["break_json"][1]
    assert failing["wrong_value"] > tally["wrong_value"][1] // 2
