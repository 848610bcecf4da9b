"""mlsubmit check [--ruleset X.Y.Z|auto] PATH...: every check that applies to the paths given."""

from __future__ import annotations

import argparse
from pathlib import Path

from mlsubmit import __version__
from mlsubmit.checker.pipeline import CheckOptions, run_rounds
from mlsubmit.checker.rounds import AUTO, group_by_round
from mlsubmit.checker.ruleset import RulesetError, available_rulesets
from mlsubmit.errors import UsageError
from mlsubmit.findings import Report
from mlsubmit.output import add_output_options, emit


def add_ruleset_option(parser: argparse.ArgumentParser, *, auto: bool = False) -> None:
    if auto:
        parser.add_argument(
            "--ruleset",
            default="auto",
            metavar="X.Y.Z|auto",
            help="training ruleset of the round (1.0.0 to 6.1.0, as mlperf-logging ships them); auto (default): "
            "from each PATH's training_results_vX.Y folder, so one run can cover several rounds",
        )
        return
    parser.add_argument(
        "--ruleset",
        required=True,
        metavar="X.Y.Z",
        help="training ruleset of the round (the ones mlperf-logging ships, 1.0.0 to 6.1.0)",
    )


def validate_ruleset(version: str) -> str:
    try:
        known = available_rulesets()
    except RulesetError as exc:
        raise UsageError(str(exc)) from exc
    if version not in known:
        raise UsageError(f"unknown ruleset {version!r}; choose one of: {', '.join(known)}")
    return version


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("check", help="check run logs, system descriptions and submission trees")
    add_ruleset_option(parser, auto=True)
    parser.add_argument("paths", nargs="+", metavar="PATH", help="log file, results folder, org folder or round")
    parser.add_argument("--profile", choices=["full", "reference"], default="full",
                        help="reference: only what mlperf-logging's package checker checks")
    parser.add_argument("--jobs", "-j", type=int, default=0, help="worker processes (default: one per core)")
    parser.add_argument("--cache", type=Path, metavar="DIR", help="reuse results for unchanged logs")
    parser.add_argument("--changed-since", metavar="REV", help="only logs changed since this git revision")
    add_output_options(parser)


def ruleset_groups(ruleset: str, paths: list[str]) -> dict[str, list[str]]:
    """PATHs by ruleset: all under the one given, or (auto) each under its training_results_vX.Y folder's round."""
    if ruleset != AUTO:
        return {validate_ruleset(ruleset): list(paths)}
    try:
        known = available_rulesets()
    except RulesetError as exc:
        raise UsageError(str(exc)) from exc
    return group_by_round(paths, known)


def run(args: argparse.Namespace) -> int:
    groups = ruleset_groups(args.ruleset, args.paths)
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
