"""mlsubmit rounds draft RULES.adoc --from X.Y [--round X.Y] [--from-text FILE] [-o FILE] [--compare]: a draft of a
round's closed hyperparameter table from its training_rules.adoc, for a person to review and finish; the checker
never loads it (it reads checker/tables/ only). Prints what changed since round X.Y and what is left to do.

Exit 0: every row read and the draft valid against our table schema; 1: the draft is written but rows are left
for a person (unread) or the schema refuses it; 2: unreadable input or an unknown round.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from mlsubmit.checker.hyperparameters import adoc
from mlsubmit.checker.hyperparameters.draft import Document, Previous, draft, round_table
from mlsubmit.cli import draft_text
from mlsubmit.core.errors import UsageError
from mlsubmit.core.support.safe_io import read_bounded

_LIMIT = 8 << 20  # a training_rules.adoc is ~100 kB
_ROUND = re.compile(r"v(\d+)\.(\d+)")


def _text(path: Path) -> str:
    try:
        raw = read_bounded(path, _LIMIT)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if len(raw) > _LIMIT:
        raise UsageError(f"{path}: larger than {_LIMIT} bytes; not a training_rules.adoc")
    return raw.decode("utf-8", errors="replace")


def _round(args: argparse.Namespace) -> str:
    given = args.round or ""
    m = re.fullmatch(r"(\d+)\.(\d+)", given) if given else _ROUND.search(args.rules.name)
    if m is None:
        raise UsageError(f"{args.round or args.rules.name}: cannot tell the round; give --round X.Y")
    return f"{int(m.group(1))}.{int(m.group(2))}"


def _previous_text(args: argparse.Namespace, table: Any) -> tuple[Path | None, list[Path]]:
    """The previous round's rules, and the files looked for beside RULES (to name them when none is there)."""
    if args.from_text is not None:
        return Path(args.from_text), []
    copy = table.source.get("copy")
    names = [Path(copy).name] if copy else []
    names.append(f"training_rules-v{table.round}.adoc")
    looked = [args.rules.parent / n for n in dict.fromkeys(names)]
    return next((p for p in looked if p.is_file()), None), looked


def run(args: argparse.Namespace) -> int:
    round_ = _round(args)
    table = round_table(args.previous)
    if table is None:
        raise UsageError(f"--from {args.previous}: no table of ours covers that round")
    text = _text(args.rules)
    rows = adoc.read_rows(text)
    if not rows:
        raise UsageError(f"{args.rules}: no hyperparameter table (a |=== table with Model, Name and Constraint "
                         "columns under == Hyperparameters) in it")
    before, looked = _previous_text(args, table)
    old = _text(before) if before is not None else ""
    previous = Previous(table, adoc.read_rows(old), old.splitlines())
    made = draft(Document(f"docs/policies/{args.rules.name}", text.splitlines(), rows), previous, round_)
    problems = draft_text.schema_problems(made.table)
    output = args.output or Path(f"hyperparameters-{round_}.draft.yaml")
    draft_text.write(output, draft_text.render(made, args.rules.name, args.previous))
    sys.stdout.write(draft_text.summary(made, round_, args.previous, before, output, problems, looked))
    if args.compare:
        sys.stdout.write(draft_text.comparison(made, round_table(round_)))
    return 1 if made.unread or problems else 0
