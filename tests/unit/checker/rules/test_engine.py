"""The engine keeps mlperf-logging's semantics (so verdicts agree) and refuses what it must not run."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from fixtures.synth import RunSpec, write_run
from mlsubmit.checker.logs.reader import Record, read_log
from mlsubmit.checker.rules.engine import check_records
from mlsubmit.checker.rules.files import Ruleset, available_rulesets, get_ruleset


def rec(key: str, value: object, line: int, metadata: dict[str, object] | None = None) -> Record:
    return Record(key, {"value": value, "metadata": metadata or {}}, float(line), line, line - 1)


def ruleset(tmp_path: Path, files: dict[str, str], version: str = "1.0.0") -> Ruleset:
    folder = tmp_path / f"training_{version}"
    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text))
    return Ruleset(version, folder, frozenset(files))


def codes(findings: list) -> list[tuple[str, int | None]]:  # type: ignore[type-arg]
    return sorted((f.code, f.line) for f in findings)


COMMON = """
- KEY:
    NAME: submission_division
    REQ: EXACTLY_ONE
    CHECK: " v['value'] in ['closed', 'open'] "
    POST: " enqueue_config('training_1.0.0/{}_common.yaml'.format(v['value'])) "
- KEY:
    NAME: eval_accuracy
    REQ: AT_LEAST_ONE
    CHECK: " v['value'] > 0.5 "
"""


def test_a_later_file_replaces_earlier_failures_for_the_same_key(tmp_path: Path) -> None:
    closed = """
    - KEY:
        NAME: eval_accuracy
        REQ: AT_LEAST_ONE
        ATLEAST_ONE_CHECK: " v['value'] > 0.1 "
    """
    rs = ruleset(tmp_path, {"common.yaml": COMMON, "closed_common.yaml": closed})
    records = [rec("submission_division", "closed", 1), rec("eval_accuracy", 0.2, 2)]
    assert check_records(records, rs, "x") == []  # common's CHECK failed on line 2, closed_common overrides it
    records[1] = rec("eval_accuracy", 0.05, 2)
    assert codes(check_records(records, rs, "x")) == [("RULE004", 2)]


def test_requirements_and_their_lines(tmp_path: Path) -> None:
    rs = ruleset(tmp_path, {"common.yaml": COMMON, "closed_common.yaml": ""})
    division = "submission_division"
    same = [rec(division, "closed", 1), rec(division, "closed", 5), rec("eval_accuracy", 1, 6)]
    found = check_records(same, rs, "x")
    assert codes(found) == [("RULE003", 1)]
    assert found[0].severity.value == "warning"
    assert [r.line for r in found[0].related] == [5]
    differ = [rec(division, "closed", 1), rec(division, "open", 7), rec("eval_accuracy", 1, 8)]
    found = check_records(differ, rs, "x")
    assert codes(found) == [("RULE002", 1)]
    missing = check_records([rec("submission_division", "closed", 1)], rs, "x")
    assert codes(missing) == [("RULE002", None)]
    assert "'eval_accuracy' is required AT_LEAST_ONE; found 0" in missing[0].message


def test_submission_keys_are_checked_once_other_keys_every_time(tmp_path: Path) -> None:
    rs = ruleset(tmp_path, {"common.yaml": COMMON, "closed_common.yaml": "", "banana_common.yaml": ""})
    records = [
        rec("submission_division", "closed", 1),
        rec("submission_division", "banana", 2),  # not checked again (upstream behaviour); REQ reports the count
        rec("eval_accuracy", 0.9, 3),
        rec("eval_accuracy", 0.1, 4),
    ]
    assert codes(check_records(records, rs, "x")) == [("RULE001", 4), ("RULE002", 1)]


def test_end_checks_exceptions_and_alternatives(tmp_path: Path) -> None:
    text = """
    - BEGIN:
        CODE: " s['seen'] = [] "
    - KEY:
        NAME: block_start
        REQ: AT_LEAST_ONE_OR(epoch_start)
        POST: " s['seen'] += [v['metadata']['epoch_num']] "
    - KEY:
        NAME: epoch_start
        REQ: AT_LEAST_ONE_OR(block_start)
    - END:
        CHECK: " s['seen'] == [1, 2] "
    """
    rs = ruleset(tmp_path, {"common.yaml": text})
    good = [rec("block_start", None, 3, {"epoch_num": 1}), rec("block_start", None, 4, {"epoch_num": 2})]
    assert check_records(good, rs, "x") == []
    bad = [rec("block_start", None, 3, {"epoch_num": 1}), rec("block_start", None, 9, {})]
    assert codes(check_records(bad, rs, "x")) == [("RULE005", None), ("RULE006", 9)]
    assert codes(check_records([rec("other", 1, 1)], rs, "x")) == [("RULE002", None), ("RULE005", None)]


def test_refused_rule_text_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    text = f"""
    - BEGIN:
        CODE: " open({str(marker)!r}, 'w').write('x') "
    - KEY:
        NAME: k
        CHECK: " __import__('os').system('touch {marker}') == 0 "
    """
    rs = ruleset(tmp_path, {"common.yaml": text})
    found = check_records([rec("k", 1, 1)], rs, "x")
    assert codes(found) == [("RULE007", None), ("RULE007", None)]
    assert not marker.exists()


def test_unknown_benchmark_is_a_finding_not_a_crash() -> None:
    records = read_log_records(RunSpec(benchmark="gpt9"))
    found = check_records(records, get_ruleset("1.0.0"), "x")
    assert ("RULE009", 7) in codes(found)


def read_log_records(spec: RunSpec) -> list[Record]:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        return read_log(write_run(Path(d) / "r.txt", spec)).records


EVIL = """
- BEGIN:
    CODE: " open(MARKER, 'w').write('pwned') "
"""


def _exploit(tmp_path: Path) -> tuple[Path, Path]:
    """A log whose submission_division climbs out of the rules folder to a YAML that writes a marker file."""
    evil_dir = tmp_path / "some" / "dir"
    evil_dir.mkdir(parents=True)
    marker = tmp_path / "marker"
    (evil_dir / "evil_common.yaml").write_text(EVIL.replace("MARKER", repr(str(marker))))
    division = "../" * 40 + str(evil_dir / "evil").lstrip("/")
    log = write_run(tmp_path / "result_0.txt", RunSpec(division=division))
    return log, marker


def test_the_reference_traversal_exploit_is_a_finding_and_nothing_loads(tmp_path: Path) -> None:
    log, marker = _exploit(tmp_path)
    parsed = read_log(log)
    found = check_records(parsed.records, get_ruleset("1.0.0"), str(log))
    climbs = [f for f in found if f.code in ("RULE008", "RULE010")]  # issue 49: a path is RULE010, always an error
    assert [f.code for f in climbs] == ["RULE010"]
    assert climbs[0].line == parsed.first("submission_division").line  # type: ignore[union-attr]
    assert "evil_common.yaml" in climbs[0].message and "would load and run that file" in climbs[0].message
    assert not marker.exists()


@pytest.mark.slow
def test_the_exploit_is_real_against_the_reference(tmp_path: Path) -> None:
    """The same log makes mlperf-logging run the planted file: the test above is not vacuous."""
    log, marker = _exploit(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "mlperf_logging.compliance_checker", "--usage", "training", "--ruleset", "1.0.0",
         "--log_output", str(tmp_path / "ref.log"), str(log)],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert marker.read_text() == "pwned", proc.stderr[-500:]


CHECKS = """
- KEY:
    NAME: block_start
    REQ: AT_LEAST_ONE
    CHECK:
        - "v['metadata']['epoch_count'] > 0"
        - "v['metadata']['first_epoch_num'] >= 0"
        - "is_integer(v['metadata']['epoch_count'])"
"""


@pytest.mark.parametrize("metadata", [
    {"epoch_count": 2, "first_epoch_num": 0},  # every check passes: the conjunction alone decides
    {"epoch_count": 0, "first_epoch_num": 0},  # the first fails
    {"epoch_count": 2},  # the second raises KeyError, the third still runs and passes
    {"epoch_count": 1.5, "first_epoch_num": -1},  # the second and third fail
    {"epoch_count": "x", "first_epoch_num": 0},  # the first raises TypeError, the third too
])
def test_checks_joined_into_one_give_the_findings_of_each_check(tmp_path: Path,
                                                                 metadata: dict[str, object]) -> None:
    import dataclasses

    rs = ruleset(tmp_path, {"common.yaml": CHECKS})
    records = [rec("block_start", None, 3, metadata)]
    joined = check_records(records, rs, "x")
    rule = rs.file("common.yaml", "1.0.0").keys["block_start"]
    assert rule.all_checks is not None and rule.plain is not None and len(rule.check) == 3
    rs.file("common.yaml", "1.0.0").keys["block_start"] = dataclasses.replace(rule, all_checks=None, plain=None)
    one_by_one = check_records(records, rs, "x")
    assert [(f.code, f.line, f.message) for f in joined] == [(f.code, f.line, f.message) for f in one_by_one]
    assert bool(joined) == (metadata != {"epoch_count": 2, "first_epoch_num": 0})


def test_checks_that_may_write_are_never_joined() -> None:
    from mlsubmit.checker.rules.safe_eval import compile_snippet, conjunction

    pure = compile_snippet("v['value'] > 0", "eval", origin="t")
    writes = compile_snippet("s.update({'x': 1}) is None", "eval", origin="t")
    assert writes.code is not None
    assert conjunction((pure, writes)) is None
    assert conjunction((pure,)) is pure
    joined = conjunction((pure, compile_snippet("len(s) < 3  # a comment", "eval", origin="t")))
    assert joined is not None and joined.code is not None


AT_LEAST = """
- KEY:
    NAME: eval_accuracy
    REQ: AT_LEAST_ONE
    CHECK: " 'epoch_num' in v['metadata'] "
    ATLEAST_ONE_CHECK: " v['value'] / v['metadata']['epoch_num'] > 0.1 "
"""


@pytest.mark.parametrize("rows", [
    [(0.5, 1), (0.8, 2)],  # passes
    [(0.01, 1), (0.02, 2)],  # no record satisfies it: RULE004
    [(0.5, 0), (0.8, 2)],  # the first raises ZeroDivisionError (RULE006), the second satisfies it
    [(0.5, 0)],  # raises and nothing satisfies it
])
def test_the_fast_path_with_an_at_least_one_check_files_what_the_slow_one_does(tmp_path: Path,
                                                                               rows: list[tuple[float, int]]) -> None:
    import dataclasses

    rs = ruleset(tmp_path, {"common.yaml": AT_LEAST})
    records = [rec("eval_accuracy", value, 3 + i, {"epoch_num": epoch}) for i, (value, epoch) in enumerate(rows)]
    fast = check_records(records, rs, "x")
    rule = rs.file("common.yaml", "1.0.0").keys["eval_accuracy"]
    assert rule.plain is not None and rule.plain[1] is not None
    rs.file("common.yaml", "1.0.0").keys["eval_accuracy"] = dataclasses.replace(rule, plain=None)
    slow = check_records(records, rs, "x")
    assert [(f.code, f.line, f.message) for f in fast] == [(f.code, f.line, f.message) for f in slow]


def test_requirements_are_read_once_per_rule_file_with_their_wording(tmp_path: Path) -> None:
    text = """
    - KEY:
        NAME: epoch_start
        REQ: AT_LEAST( 2 )
    - KEY:
        NAME: seed
        REQ: OPTIONAL
    - KEY:
        NAME: block_start
        REQ: AT_LEAST_ONE_OR(epoch_start, eval_start)
    """
    rs = ruleset(tmp_path, {"common.yaml": text})
    rules = rs.file("common.yaml", "1.0.0")
    assert rules.requirements == ((("epoch_start", "AT_LEAST(2)", 2),),
                                  (("block_start", "epoch_start", "eval_start"),))
    found = check_records([rec("epoch_start", None, 4)], rs, "x")
    assert [f.message for f in found] == ["'epoch_start' is required AT_LEAST(2); found 1 (training_1.0.0/common.yaml)"]
    assert check_records([rec("seed", 1, 2)], rs, "x")[0].code == "RULE002"  # none of block/epoch/eval start


@pytest.mark.parametrize("ruleset_version", ["1.0.0", "6.1.0"])
def test_a_benchmark_named_common_is_a_finding_not_a_loop(ruleset_version: str) -> None:
    if ruleset_version not in available_rulesets():  # make test-compat: the oldest release has no 6.1 rules
        pytest.skip(f"the installed mlperf-logging has no rules for {ruleset_version}")
    """`common` names a rule file that already ran; enqueueing it again looped forever (issue 26)."""
    records = read_log_records(RunSpec(benchmark="common"))
    found = check_records(records, get_ruleset(ruleset_version), "x")
    assert ("RULE009", 7) in codes(found)
    assert any("already ran" in f.message for f in found if f.code == "RULE009")


def test_a_rule_file_is_run_once_per_log_even_when_asked_again(tmp_path: Path) -> None:
    again = """
    - KEY:
        NAME: submission_division
        REQ: EXACTLY_ONE
        POST: " enqueue_config('training_1.0.0/closed_common.yaml') "
    """
    rs = ruleset(tmp_path, {"common.yaml": COMMON, "closed_common.yaml": again})
    records = [rec("submission_division", "closed", 1), rec("eval_accuracy", 0.9, 2)]
    assert codes(check_records(records, rs, "x")) == [("RULE008", 1)]


def test_a_value_naming_no_rule_file_is_quoted_short() -> None:
    """Issue 35: a 15 MB submission_division went whole into RULE008's message (and every report format)."""
    from mlsubmit.checker.rules.files import get_ruleset

    records = [rec("submission_division", "x" * 1_000_000, 1)]
    found = [f for f in check_records(records, get_ruleset("1.0.0"), "x") if f.code in ("RULE008", "RULE009")]
    assert found and all(len(f.message) < 1200 and "xxx...xxx" in f.message for f in found)
