"""mlsubmit check [--ruleset X.Y.Z|auto] PATH...: every check that applies to the paths given."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mlsubmit import __version__
from mlsubmit.checker.pipeline import CheckOptions, run_rounds
from mlsubmit.checker.rounds import AUTO, group_by_round, spelled_ruleset
from mlsubmit.checker.ruleset import RulesetError, available_rulesets
from mlsubmit.errors import UsageError
from mlsubmit.findings import Report
from mlsubmit.output import add_output_options, emit


def add_ruleset_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ruleset",
        default="auto",
        metavar="X.Y.Z|auto",
        help="training ruleset of the round (1.0.0 to 6.1.0, as mlperf-logging ships them; 1.1 or v1.1.0 do too); "
        "auto (default): from each PATH's training_results_vX.Y folder, or the .mlsubmit-round file or "
        "mlsubmit.toml [check] ruleset in or above it",
    )


def _known() -> list[str]:
    try:
        return list(available_rulesets())
    except RulesetError as exc:
        raise UsageError(str(exc)) from exc


def validate_ruleset(version: str) -> str:
    """The ruleset "X.Y.Z" named by `version`, spelt as people do (1.1, v1.1, 1.1.0, v1.1.0); else a usage error."""
    known = _known()
    ruleset = spelled_ruleset(version)
    if ruleset is None or ruleset not in known:
        raise UsageError(f"unknown ruleset {version!r}; choose one of: {', '.join(known)}")
    return ruleset


def rulesets_for(given: str, paths: list[str]) -> dict[str, list[str]]:
    """PATHs by ruleset: the one given, or with `auto` each PATH's own (rounds.group_by_round). The choice is said
    on stderr unless the ruleset was given exactly as X.Y.Z."""
    if given != AUTO:
        ruleset = validate_ruleset(given)
        if ruleset != given:
            print(f"mlsubmit: ruleset {ruleset} (--ruleset {given})", file=sys.stderr)
        return {ruleset: list(paths)}
    why: dict[str, set[str]] = {}
    groups = group_by_round(paths, _known(), why)
    for ruleset in groups:
        print(f"mlsubmit: ruleset {ruleset} (from {', '.join(sorted(why.get(ruleset, ())))})", file=sys.stderr)
    return groups


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("check", help="check run logs, system descriptions and submission trees")
    add_ruleset_option(parser)
    parser.add_argument("paths", nargs="+", metavar="PATH", help="log file, results folder, org folder or round")
    parser.add_argument("--profile", choices=["full", "reference"], default="full",
                        help="reference: only what mlperf-logging's package checker checks")
    parser.add_argument("--jobs", "-j", type=int, default=0, help="worker processes (default: one per core)")
    parser.add_argument("--cache", type=Path, metavar="DIR", help="reuse results for unchanged logs")
    parser.add_argument("--changed-since", metavar="REV", help="only logs changed since this git revision")
    add_output_options(parser)


def run(args: argparse.Namespace) -> int:
    groups = rulesets_for(args.ruleset, list(args.paths))
    options = CheckOptions(
        ruleset=next(iter(groups)),
        profile=args.profile,
        jobs=max(0, args.jobs),
        cache_dir=args.cache,
        changed_since=args.changed_since,
        strict=args.strict,
    )
    report = merge([run.report for run in run_rounds(groups, options, loose_facts=False)])
    report.meta.update({"command": "check", "ruleset": ", ".join(groups), "version": __version__})
    return emit(report, args)


def merge(reports: list[Report]) -> Report:
    """The reports of several rounds as one (their files and trees never overlap: a PATH has one round)."""
    out = Report(strict=reports[0].strict)
    for report in reports:
        for path, found in report.files.items():
            out.add_file(path, found)
        out.tree.extend(report.tree)
    return out
