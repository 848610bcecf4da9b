"""The command line's parsers: each command's options (`add_parser(subparsers)` in parsers/<command>.py) and the
options several commands share. Light on purpose: `mlsubmit <command> --help` loads these and no command's
implementation (mlsubmit/cli/commands/<command>.py, imported by the dispatch once the options are parsed, so that it
imports what it needs at its top).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mlsubmit.formats import REPORTERS

# The shipped profiles (mlsubmit.checker's Profile, checker/tables/profile-<name>.yaml), named here so that a
# command's options need not load the checker; tests/unit/cli/test_parsers.py holds the two equal.
PROFILES = ("full", "reference")
# `runs show --format`: mlsubmit/report/runs.py's WRITERS (which loads numpy), held equal to it by the same test
RUNS_FORMATS = ("csv", "html", "json", "text")


def add_ruleset_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ruleset",
        default="auto",
        metavar="X.Y.Z|auto",
        help="training ruleset of the round (1.0.0 to 6.1.0, as mlperf-logging ships them; 1.1 or v1.1.0 do too); "
        "auto (default): from each PATH's training_results_vX.Y folder, or the .mlsubmit-round file or "
        "mlsubmit.toml [check] ruleset in or above it",
    )


def add_policy_options(parser: argparse.ArgumentParser) -> None:
    """--profile, --select, --ignore, --severity: over the profile and the project's mlsubmit.toml [check]."""
    parser.add_argument("--profile", choices=PROFILES, default=None,
                        help="full (default, or mlsubmit.toml [check] profile): every check, severities as the "
                             "review applies them; reference: only what mlperf-logging's package checker checks")
    parser.add_argument("--select", action="append", metavar="CODES",
                        help="only these codes or families (comma-separated, repeatable), e.g. SYS,TREE007")
    parser.add_argument("--ignore", action="append", metavar="CODES",
                        help="leave out these codes or families (comma-separated, repeatable)")
    parser.add_argument("--severity", action="append", metavar="CODE=LEVEL", default=[],
                        help="this code's (or family's) findings at LEVEL: error, warning or info (repeatable)")


def add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        action="append",
        metavar="FORMAT[:FILE]",
        help=f"output format: {', '.join(sorted(REPORTERS))} (default: text; github when GITHUB_ACTIONS=true). "
        "Give it more than once for several reports from one run, each with its own -o (paired in order) or "
        "as FORMAT:FILE",
    )
    parser.add_argument(
        "--output", "-o", action="append", metavar="FILE",
        help="write the report to FILE instead of stdout (- is stdout); once per --format",
    )  # fmt: skip
    parser.add_argument(
        "--color",
        choices=["auto", "always", "never"],
        default="auto",
        help="colour the text report: auto (when writing to a terminal and NO_COLOR is unset), always, never",
    )
    parser.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")


def add_waiver_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--waivers", type=Path, metavar="FILE", action="append", default=[],
                        help="TOML file of [[waiver]] tables (paths relative to its own folder); findings they "
                             "cover are reported as waived and do not fail the run. Repeatable; the waivers of the "
                             "nearest mlsubmit.toml above each PATH apply too (see docs/waivers.md)")
    parser.add_argument("--no-project-waivers", action="store_true",
                        help="leave out the [[waiver]] tables of mlsubmit.toml")
    parser.add_argument("--write-waivers", type=Path, metavar="FILE",
                        help="write a starting waiver file covering this run's errors and warnings that no waiver "
                             "covers, each with reason 'to review', paths relative to FILE's folder (FILE must not "
                             "exist: it is never replaced)")
