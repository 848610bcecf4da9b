"""`mlsubmit verify ARCHIVE|TREE --official`: the chair's steps (mlsubmit.submission.official), then our
`report --against` the summary the chair's summarizer produced, for each organisation folder.

It lives at the command line because it joins two packages that do not import each other: `submission` (opening the
archive, running the reference tools) and `report` (our summary and the comparison). The exit status is 0 only
when every step passed; each failing step is a finding that quotes the step.
"""

from __future__ import annotations

import argparse
import os
import shutil
from dataclasses import replace
from pathlib import Path

from mlsubmit import __version__
from mlsubmit.checker import CheckOptions, mlperf_logging_version, run_check
from mlsubmit.cli.output import emit
from mlsubmit.cli.rulesets import rulesets_for, validate_ruleset
from mlsubmit.core.codes import finding
from mlsubmit.core.errors import UsageError
from mlsubmit.core.findings import Finding, Report, Tally
from mlsubmit.core.support.display_escape import notice
from mlsubmit.core.support.scratch import scratch_folder
from mlsubmit.report.against import compare_with_chair, read_chair
from mlsubmit.report.data import collect
from mlsubmit.report.summary import build
from mlsubmit.submission import confine, handover
from mlsubmit.submission import official as chair


def run(args: argparse.Namespace) -> int:
    paths: list[Path] = [args.archive, *getattr(args, "more", [])]
    for path in paths:
        if not path.exists():
            raise UsageError(f"{path}: no such archive or folder")
    confined = confine.available_confinement()
    if not confined.confined and not getattr(args, "unconfined", False):
        raise UsageError(f"--official runs the reference tools confined with bubblewrap, which cannot be used here "
                         f"({confined.why}): install the "
                         f"'{confine.PACKAGE}' package, or pass --unconfined to run them with this user's rights")
    # the plaintext, the copy and the reference tools' logs never outlive the run, a second SIGTERM or SIGINT included
    with scratch_folder("mlsubmit-official-") as work:
        return _run(args, paths, work)


def _run(args: argparse.Namespace, paths: list[Path], work: Path) -> int:
    report = Report()
    steps: list[chair.Step] = []
    ruleset: str | None = args.ruleset
    trees: list[tuple[Path, str]] = []  # (unpacked folder, org) of every organisation that passed its steps
    for number, path in enumerate(paths):
        display = os.path.normpath(path)
        sub = work / str(number)
        sub.mkdir()
        opened = chair.copy_tree(path, sub) if path.is_dir() else chair.open_archive(
            path, display, args.passphrase_file, sub)  # fmt: skip
        if len(paths) > 1:  # which upload an opening step is about
            for step in opened.steps:
                step.org = path.name
        ruleset = ruleset or opened.ruleset or (next(iter(rulesets_for("auto", [str(path)]))) if path.is_dir()
                                                else None)  # fmt: skip
        report.extend(opened.findings)
        steps += opened.steps
        if not all(s.passed for s in opened.steps):
            continue
        if not opened.orgs:
            report.add(finding("PKG049", display, "no organisation folder (with results/, systems/ or benchmarks/) "
                               "to run the verify script on"))  # fmt: skip
            continue
        ruleset = _known(ruleset, path)
        for org in opened.orgs:
            pristine = work / "pristine" / str(number)
            if len(paths) > 1:  # the reference tools write into the tree; the whole is made of what was uploaded
                shutil.copytree(opened.tree / org, pristine / org, symlinks=True)
            done = _one_org(opened.tree, org, ruleset, args, display, report, opened.refused.get(org, []))
            steps += done
            if all(s.passed for s in done):
                trees.append((pristine, org))
    if len(paths) > 1 and ruleset and all(s.passed for s in steps):
        steps += _whole(trees, work, ruleset, args, report)
    report.extend(chair.step_finding(s, os.path.normpath(paths[0])) for s in steps
                  if not s.passed and s.name not in _OPENING)  # fmt: skip
    return _finish(args, report, steps, ruleset, os.path.normpath(paths[0]) + (" ..." if len(paths) > 1 else ""))


def _known(ruleset: str | None, path: Path) -> str:
    if ruleset is None:
        raise UsageError(f"{path}: no manifest names the ruleset; give --ruleset X.Y.Z")
    return validate_ruleset(ruleset)


def _whole(trees: list[tuple[Path, str]], work: Path, ruleset: str, args: argparse.Namespace,
           report: Report) -> list[chair.Step]:  # fmt: skip
    """The uploads `<org>_<n>` of a split organisation put together as `<org>`, and the verify script on that:
    what the chair publishes (mlcommons/training#877)."""
    bases = {org.rsplit("_", 1)[0] for _tree, org in trees if "_" in org}
    if len(bases) != 1 or any("_" not in org for _tree, org in trees):
        raise UsageError("several ARCHIVEs with --official are the uploads <org>_1, <org>_2 ... of one organisation")
    base = bases.pop()
    whole = work / "whole" / "unpacked"
    for tree, org in trees:
        shutil.copytree(tree / org, whole / base, dirs_exist_ok=True)
    return [replace(s, org=f"{base}, the uploads together") for s in
            _one_org(whole, base, ruleset, args, f"{base} (the uploads together)", report)]


def _finish(args: argparse.Namespace, report: Report, steps: list[chair.Step], ruleset: str | None,
            display: str) -> int:  # fmt: skip
    report.tally = Tally(((len(steps), "official step(s)"),), failed=sum(not s.passed for s in steps),
                         steps=tuple(s.to_dict() for s in steps))
    release = mlperf_logging_version()
    report.meta.update({"command": "verify --official", "ruleset": ruleset or "", "version": __version__,
                        "confinement": confine.available_confinement().kind,
                        "mlperf_logging": release, "script": chair.script_name(ruleset) if ruleset else "",
                        "steps": "; ".join(f"{s.name}{f' [{s.org}]' if s.org else ''}: {'pass' if s.passed else 'FAIL'}"
                                           for s in steps)})
    _print_steps(steps, release, ruleset)
    code = emit(report, args)
    verdict = "every step passed" if code == 0 and all(s.passed for s in steps) else "FAILED"
    where = "" if confine.available_confinement().confined else " (NOT confined: --unconfined)"
    notice(f"mlsubmit: {display}: the chair's flow with mlperf-logging {release}{where}: {verdict}")
    return code if all(s.passed for s in steps) or code else 1


# steps whose findings are made where they fail, with their own codes
_OPENING = ("sha1 check", "decryption", "unpack", "handover", "report --against")


def _handover_step(ready: handover.Handover, org: str) -> chair.Step:
    """The step that says what the tools were handed and how they run, or why they were not."""
    command = ("our checks before the reference tools (links, names, the logs they open, values used as paths, "
               "records they read and we drop, params, input size)")
    if ready.refused:
        return chair.Step("handover", command, False, handover.refusal_words(ready.refused), org=org)
    return chair.Step("handover", command, True, [confine.available_confinement().words], org=org)


def _one_org(tree: Path, org: str, ruleset: str, args: argparse.Namespace, display: str, report: Report,
             copied: list[Finding] | None = None) -> list[chair.Step]:  # fmt: skip
    """What the reference tools may be handed (submission/handover.py), our check and summary of the pristine
    folder (the package checker writes scaling.json into it), then the verify script's steps, confined, and the
    comparison of the two summaries."""
    shown = display if os.path.basename(display) == org else f"{display}:{org}"
    ready = handover.prepare(tree, org, shown, chair.reads_params(ruleset), copied or [])
    run = None
    if not ready.refused:
        run = run_check([str(ready.unit / org)], CheckOptions(ruleset=ruleset, jobs=max(0, args.jobs)))
        inside = str(ready.unit / org)  # our check's paths name the private copy: the user's name for it instead
        ready.refused = [f.with_path(shown + f.path[len(inside):]) if f.path.startswith(inside) else f
                         for f in handover.blocking_findings(run.report.all_findings(), ready.unit, org)]
    gate = _handover_step(ready, org)
    if ready.refused or run is None:
        report.extend(ready.refused)
        return [gate]
    ours = build(collect(run, ruleset), run)
    csv_path = ready.unit / f"summary-{org}.csv"
    steps = [gate, *chair.org_steps(ready.unit, org, ruleset, csv_path, ready.params)]
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
    notice(f"the results chair's flow: pack_submission.sh --unpack, {script} with mlperf-logging {release}")
    for number, step in enumerate(steps, 1):
        where = f" [{step.org}]" if step.org else ""
        verdict = "PASS" if step.passed else "FAIL"
        notice(f"  {number}. {step.name}{where}: {verdict}  ({step.command})")
        for line in step.last:
            notice(f"       | {line}")
