"""`mlsubmit verify ARCHIVE|TREE --official`: the chair's steps (mlsubmit.submission.official), then our
`report --against` the summary the chair's summarizer produced, for each organisation folder.

It lives at the command line because it joins two rooms that do not import each other: `submission` (opening the
archive, running the reference tools) and `report` (our summary and the comparison). The exit status is 0 only
when every step passed; each failing step is a finding that quotes the step.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from mlsubmit import __version__
from mlsubmit.checker import CheckOptions, mlperf_logging_version, run_check
from mlsubmit.cli.output import emit
from mlsubmit.cli.rulesets import rulesets_for, validate_ruleset
from mlsubmit.errors import UsageError
from mlsubmit.findings import Report, Tally
from mlsubmit.submission import official as chair


def run(args: argparse.Namespace) -> int:
    path: Path = args.archive
    if not path.exists():
        raise UsageError(f"{path}: no such archive or folder")
    display = os.path.normpath(path)
    work = Path(tempfile.mkdtemp(prefix="mlsubmit-official-"))
    try:
        return _run(args, path, display, work)
    finally:  # the plaintext, the copy and the reference tools' logs never outlive the run
        shutil.rmtree(work, ignore_errors=True)


def _run(args: argparse.Namespace, path: Path, display: str, work: Path) -> int:
    if path.is_dir():
        opened = chair.copy_tree(path, work)
        ruleset = args.ruleset or next(iter(rulesets_for("auto", [str(path)])))
    else:
        opened = chair.open_archive(path, display, args.passphrase_file, work)
        ruleset = args.ruleset or opened.ruleset
    report = Report()
    report.extend(opened.findings)
    steps = opened.steps
    if all(s.passed for s in steps) and opened.orgs:
        if ruleset is None:
            raise UsageError(f"{path}: no manifest names the ruleset; give --ruleset X.Y.Z")
        ruleset = validate_ruleset(ruleset)
        for org in opened.orgs:
            steps += _one_org(opened.tree, org, ruleset, args, display, report)
    elif not opened.orgs and all(s.passed for s in steps):
        from mlsubmit.codes import finding

        report.add(finding("PKG049", display, "no organisation folder (with results/, systems/ or benchmarks/) "
                           "to run the verify script on"))  # fmt: skip
    report.extend(chair.step_finding(s, display) for s in steps if not s.passed and s.name not in _OPENING)
    report.tally = Tally(((len(steps), "official step(s)"),), failed=sum(not s.passed for s in steps))
    release = mlperf_logging_version()
    report.meta.update({"command": "verify --official", "ruleset": ruleset or "", "version": __version__,
                        "mlperf_logging": release, "script": chair.script_name(ruleset) if ruleset else "",
                        "steps": "; ".join(f"{s.name}{f' [{s.org}]' if s.org else ''}: {'pass' if s.passed else 'FAIL'}"
                                           for s in steps)})
    _print_steps(steps, release, ruleset)
    code = emit(report, args)
    verdict = "every step passed" if code == 0 and all(s.passed for s in steps) else "FAILED"
    print(f"mlsubmit: {display}: the chair's flow with mlperf-logging {release}: {verdict}", file=sys.stderr)
    return code if all(s.passed for s in steps) or code else 1


# steps whose findings are made where they fail, with their own codes
_OPENING = ("sha1 check", "decryption", "unpack", "report --against")


def _one_org(tree: Path, org: str, ruleset: str, args: argparse.Namespace, display: str,
             report: Report) -> list[chair.Step]:  # fmt: skip
    """Our summary of the pristine folder first (the package checker writes scaling.json into it), then the
    verify script's steps, then the comparison of the two summaries."""
    from mlsubmit.report.against import compare_with_chair, read_chair
    from mlsubmit.report.data import collect
    from mlsubmit.report.summary import build

    run = run_check([str(tree / org)], CheckOptions(ruleset=ruleset, jobs=max(0, args.jobs)))
    ours = build(collect(run, ruleset), run)
    csv_path = tree.parent / f"summary-{org}.csv"
    steps = chair.org_steps(tree, org, ruleset, csv_path)
    if not all(s.passed for s in steps):
        return steps
    if not csv_path.is_file():
        missing = chair.Step("report --against", "mlsubmit report --against", False,
                             ["the result summarizer wrote no summary"], org=org)
        report.add(chair.step_finding(missing, display))
        return [*steps, missing]
    found = compare_with_chair(ours, read_chair(csv_path))
    shown = f"{display}:{org} (the chair's summary)"
    report.extend(f.with_path(shown) for f in found)
    words = ["every result agrees with the chair's summary"] if not found else [f.message for f in found[:3]]
    return [*steps, chair.Step("report --against", "mlsubmit report --against the summarizer's CSV", not found,
                               words, org=org)]


def _print_steps(steps: list[chair.Step], release: str, ruleset: str | None) -> None:
    script = chair.script_name(ruleset) if ruleset else "the verify script"
    print(f"the results chair's flow: pack_submission.sh --unpack, {script} with mlperf-logging {release}",
          file=sys.stderr)
    for number, step in enumerate(steps, 1):
        where = f" [{step.org}]" if step.org else ""
        verdict = "PASS" if step.passed else "FAIL"
        print(f"  {number}. {step.name}{where}: {verdict}  ({step.command})", file=sys.stderr)
        for line in step.last:
            print(f"       | {line}", file=sys.stderr)
