"""mlsubmit check --ruleset X.Y.Z PATH...: every check that applies to the paths given."""

from __future__ import annotations

import argparse
from pathlib import Path

from mlsubmit import __version__
from mlsubmit.checker.pipeline import CheckOptions, run_check
from mlsubmit.checker.ruleset import RulesetError, available_rulesets
from mlsubmit.errors import UsageError
from mlsubmit.output import add_output_options, emit


def add_ruleset_option(parser: argparse.ArgumentParser) -> None:
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
    add_ruleset_option(parser)
    parser.add_argument("paths", nargs="+", metavar="PATH", help="log file, results folder, org folder or round")
    parser.add_argument("--profile", choices=["full", "reference"], default="full",
                        help="reference: only what mlperf-logging's package checker checks")
    parser.add_argument("--jobs", "-j", type=int, default=0, help="worker processes (default: one per core)")
    parser.add_argument("--cache", type=Path, metavar="DIR", help="reuse results for unchanged logs")
    parser.add_argument("--changed-since", metavar="REV", help="only logs changed since this git revision")
    add_output_options(parser)


def run(args: argparse.Namespace) -> int:
    options = CheckOptions(
        ruleset=validate_ruleset(args.ruleset),
        profile=args.profile,
        jobs=max(0, args.jobs),
        cache_dir=args.cache,
        changed_since=args.changed_since,
        strict=args.strict,
    )
    result = run_check(args.paths, options)
    result.report.meta.update({"command": "check", "ruleset": options.ruleset, "version": __version__})
    return emit(result.report, args)
