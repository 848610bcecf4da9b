"""mlsubmit review: the review period's checks, as REV findings in every --format; --html FILE adds the tables.

- borrow --original DIR --resubmitted DIR (--donor DIR | --round-trees TREE...): is a resubmission a valid
  hyperparameter borrowing (training_rules.adoc §"Hyperparameter Borrowing")? Hyperparameter by hyperparameter,
  then software, system and scale against the original, and the benchmarks that refuse borrowing.
- preview --previous TREE... --current TREE...: last round's Preview results against this round's Available ones
  (submission_rules.adoc §"Preview Systems").
- since --previous TREE --current TREE: our tree against our tree of the previous round (systems, benchmarks,
  hyperparameters, the closed table's rules).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from mlsubmit import __version__
from mlsubmit.checker.review.borrow import check_borrowing
from mlsubmit.checker.review.borrowing_rules import rules_for as borrow_rules_for
from mlsubmit.checker.review.donors import rank_donors
from mlsubmit.checker.review.entries import entry_folders_all as review_entry_folders
from mlsubmit.checker.review.entries import read_entry
from mlsubmit.checker.review.preview import check_preview
from mlsubmit.checker.review.since import check_since, since_counts
from mlsubmit.cli.output import emit, write_text
from mlsubmit.cli.rulesets import round_data_note, rulesets_for, say_round_data
from mlsubmit.core.codes import finding
from mlsubmit.core.errors import UsageError
from mlsubmit.core.findings import Location, Report, Tally
from mlsubmit.report.review_html import render_borrowing, render_preview, render_since


def _ruleset(given: str, path: str, option: str = "--ruleset") -> str:
    groups = rulesets_for(given, [path])
    if len(groups) != 1:
        raise UsageError(f"review: cannot tell the round of {path}; give {option}")
    return next(iter(groups))


def _folders(args: argparse.Namespace) -> None:
    """Every folder given must be a folder this process can list: otherwise exit 2, before any work."""
    for option in ("original", "resubmitted", "donor", "round_trees", "previous", "current"):
        given = getattr(args, option, None)
        for path in [given] if isinstance(given, str) else (given or []):
            if not os.path.isdir(path):
                raise UsageError(f"review {args.step}: --{option.replace('_', '-')} {path}: "
                                 f"{'not a folder' if os.path.exists(path) else 'no such folder'}")
            try:
                os.listdir(path)
            except OSError as exc:
                raise UsageError(f"review {args.step}: --{option.replace('_', '-')} {path}: cannot read the "
                                 f"folder ({exc.strerror or exc})") from exc


def _has_entries(option: str, trees: list[str]) -> None:
    """A tree list with no entry at all is a wrong path, not a finding: exit 2."""
    if not review_entry_folders([Path(t) for t in trees]):
        raise UsageError(f"--{option} {' '.join(trees)}: no results/<system>/<benchmark> folder with result logs "
                         "(give organisation folders or a training_results_vX.Y folder)")


def run(args: argparse.Namespace) -> int:
    _folders(args)
    if args.step != "borrow":
        for option in ("previous", "current"):
            given = getattr(args, option)
            _has_entries(option, [given] if isinstance(given, str) else list(given))
    steps = {"borrow": _borrow, "preview": _preview, "since": _since}
    return steps[args.step](args)


def _since(args: argparse.Namespace) -> int:
    for option in ("previous", "current"):  # one organisation each: a round folder would mix every organisation's
        if not os.path.isdir(os.path.join(getattr(args, option), "results")):
            raise UsageError(f"--{option} {getattr(args, option)}: not an organisation tree (no results/ folder in "
                             "it); give our organisation's folder of each round")
    rulesets = (_ruleset(args.previous_ruleset, args.previous, "--previous-ruleset"),
                _ruleset(args.ruleset, args.current))
    report = Report(strict=args.strict)
    report.meta.update({"command": "review since", "ruleset": " -> ".join(rulesets), "version": __version__})
    say_round_data(report, rulesets)  # a round our tables lack: its hyperparameter moves are not compared
    found = check_since(args.previous, args.current, rulesets)
    report.extend(found)
    systems, entries, benches = since_counts(args.previous, args.current, rulesets)
    report.tally = Tally(((systems, "system description(s)"), (entries, "entry(ies)"), (benches, "benchmark(s)")))
    if args.html:
        write_text(args.html, render_since(args.previous, args.current, rulesets, found))
    return emit(report, args)


def _preview(args: argparse.Namespace) -> int:
    report = Report(strict=args.strict)
    report.meta.update({"command": "review preview", "version": __version__})
    comparisons, found = check_preview(list(args.previous), list(args.current))
    report.extend(found)
    # one per Preview point: held, no Available result, not held; not due yet (140 days); benchmark retired
    judged = [f for f in found if f.code in ("REV020", "REV021", "REV022", "REV058", "REV059")]
    failed = sum(f.code in ("REV021", "REV022") for f in judged)
    report.tally = Tally(((len(judged), "Preview point(s)"),), failed=failed)
    if args.html:
        write_text(args.html, render_preview(comparisons, found))
    return emit(report, args)


def _borrow(args: argparse.Namespace) -> int:
    ruleset = _ruleset(args.ruleset, args.resubmitted)
    rules = borrow_rules_for(ruleset)
    if rules is None:
        lacking = round_data_note(ruleset)
        raise UsageError(f"review borrow: no borrowing rules for ruleset {ruleset}"
                         + (f" ({lacking})" if lacking else ""))
    report = Report(strict=args.strict)
    report.meta.update({"command": "review borrow", "ruleset": ruleset, "version": __version__})
    original, resubmitted = read_entry(args.original), read_entry(args.resubmitted)
    if args.donor:
        donor = read_entry(args.donor)
    else:
        ranked = rank_donors(original, resubmitted, list(args.round_trees), rules, ruleset)
        if not ranked or ranked[0].matched == 0:
            report.tally = Tally(((len(ranked), "candidate donor entry(ies)"),))
            report.add(finding("REV014", resubmitted.first.path, f"no entry of {resubmitted.benchmark} by another "
                               f"submitter in {', '.join(args.round_trees)} shares a hyperparameter value with the "
                               "resubmission"))
            return emit(report, args)
        listed = "; ".join(f"{c.entry.shown}: {c.matched}/{c.compared}" for c in ranked[:3])
        report.add(finding("REV015", resubmitted.first.path, f"donor: {ranked[0].entry.shown} (hyperparameters "
                           f"matched, best first: {listed})", related=[Location(ranked[0].entry.first.path)]))
        donor = read_entry(ranked[0].entry.folder)
        donor.shown = ranked[0].entry.shown
    result = check_borrowing(original, resubmitted, donor, rules, ruleset)
    report.extend(result.findings)
    kept = sum(row.verdict == "kept own value" for row in result.rows)  # the group rule's errors (REV002)
    report.tally = Tally(((len(result.rows), "hyperparameter(s)"),), failed=kept)
    if args.html:
        write_text(args.html, render_borrowing(result))
    return emit(report, args)


