"""The options of `mlsubmit rounds` (the command: mlsubmit/cli/commands/rounds.py)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("rounds", help="a new round's data: draft its closed hyperparameter table")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    draft = actions.add_parser("draft", help="draft hyperparameters-X.Y.yaml from the round's training_rules.adoc")
    draft.add_argument("rules", type=Path, metavar="RULES.adoc", help="the round's training_rules.adoc")
    draft.add_argument("--from", dest="previous", required=True, metavar="X.Y",
                       help="the round before, whose table gives aliases, ids and the rows whose text is unchanged")
    draft.add_argument("--round", metavar="X.Y", help="the round drafted (default: vX.Y in the file's name)")
    draft.add_argument("--from-text", type=Path, metavar="FILE",
                       help="round X.Y's training_rules.adoc (default: its copy beside RULES.adoc, named as the "
                            "round's table cites it); without it no row is carried, every row is read from its text")
    draft.add_argument("--output", "-o", type=Path, metavar="FILE",
                       help="where the draft goes (default: hyperparameters-X.Y.draft.yaml here)")
    draft.add_argument("--compare", action="store_true",
                       help="also hold the draft against our curated table of the same round, row by row")
