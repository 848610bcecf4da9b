"""The options of `mlsubmit check` (the command: mlsubmit/cli/commands/check.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from mlsubmit.cli.parsers import add_output_options, add_policy_options, add_ruleset_option, add_waiver_options
from mlsubmit.core.support.ledger_url import location


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("check", help="check run logs, system descriptions and submission trees")
    add_ruleset_option(parser)
    parser.add_argument("paths", nargs="+", metavar="PATH", help="log file, results folder, org folder or round")
    add_policy_options(parser)
    parser.add_argument("--jobs", "-j", type=int, default=0, help="worker processes (default: one per core)")
    parser.add_argument("--cache", type=Path, metavar="DIR",
                        help="reuse results for unchanged logs; DIR is created if missing, and ignores itself in git")
    parser.add_argument("--changed-since", metavar="REV", help="only logs changed since this git revision")
    parser.add_argument("--custom-rcps", type=Path, metavar="FILE",
                        help="RCP file (as mlperf-logging's rcp_checker --custom_rcps takes it): its records replace "
                             "the shipped RCPs of their benchmark")
    sets = parser.add_argument_group("run sets (a folder of raw job output)")
    sets.add_argument("--system", metavar="NAME", help="the results folder (system) of every run given as raw output")
    sets.add_argument("--package-config", type=Path, metavar="CONFIG",
                      help="a package.toml whose [[results]] logs name each raw run's system")
    sets.add_argument("--ledger", type=location, metavar="FILE|URL",
                      help="record every log read in this run ledger: an SQLite FILE (made when missing) or a "
                           "postgresql:// URL (the postgres extra; docs/runs.md); "
                           "`mlsubmit runs show --ledger FILE|URL` shows it")
    sets.add_argument("--fail-on", action="append", default=[], metavar="rcp-risk=P",
                      help="for CI: a closed run set whose chance of failing its RCP once complete is above P "
                           "(RUN009) is an error; default: mlsubmit.toml [check] fail-on, else information only")
    sets.add_argument("--run-select", choices=["median-window", "all"], default="median-window",
                      help="with more runs than N: score the median window of N (TR1.1 Scoring; default) or all")
    parser.add_argument("--skip-non-logs", action="store_true",
                        help="pass over a file PATH without :::MLLOG records (named on stderr), as a folder of raw "
                             "job output does, instead of LOG009; nothing left to check is exit 0 (for hooks that "
                             "pass every staged *.out, *.log and *.txt)")
    parser.add_argument("--hook-files", action="store_true",
                        help="as the pre-commit hooks run it (their entry ends with it): a later argument starting "
                             "with - that names an existing file is that file (./NAME), never an option, so a "
                             "staged file named --output=notes.txt is checked, not obeyed")
    add_output_options(parser)
    add_waiver_options(parser)
