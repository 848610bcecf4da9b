"""The options of `mlsubmit explain` (the command: mlsubmit/cli/commands/explain.py)."""

from __future__ import annotations

import argparse

from mlsubmit.cli.parsers import add_policy_options


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("explain", help="explain a finding code, or list them all")
    parser.add_argument("code", nargs="?", help="a code such as RULE001; a family (RULE) lists its codes")
    add_policy_options(parser)  # the severity in force: the profile, the mlsubmit.toml here or above, the flags
