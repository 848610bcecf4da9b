"""mlsubmit explain [CODE]: what a finding code means and how to fix it."""

from __future__ import annotations

import argparse
import sys
import textwrap

from mlsubmit.codes import catalogue
from mlsubmit.errors import UsageError

# Statements about scope that belong with the codes (shown by `mlsubmit explain` with no code).
NOTES: list[str] = [
    "Rule files: RULE findings come from the compliance rules mlperf-logging ships for the chosen ruleset, run by "
    "mlsubmit's own engine (whitelisted Python subset; nothing else is executed).",
    "Hyperparameter table: HP findings apply the closed-division hyperparameter table of training rounds 1.0 and "
    "1.1 (rulesets 1.0.0 and 1.1.0; TR1.0/TR1.1 §Hyperparameters) to closed logs, and to any log with `mlsubmit "
    "advise`. Later rounds (2.0 to 6.1) are not covered: for those rulesets the report says so once (HP003) and "
    "hyperparameter values are checked only by mlperf-logging's rule files. Values the rules fix to the reference "
    "implementation without listing them in the table (for example BERT max_predictions_per_seq 76) are out of "
    "scope, as are ** rows, which are not logged (label smoothing, truncated-normal initialisation).",
]


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("explain", help="explain a finding code, or list them all")
    parser.add_argument("code", nargs="?", help="a code such as RULE001; a family (RULE) lists its codes")


def _wrap(text: str, indent: str = "  ") -> str:
    return textwrap.fill(text, width=100, initial_indent=indent, subsequent_indent=indent)


def run(args: argparse.Namespace) -> int:
    codes = catalogue()
    out = sys.stdout
    if not args.code:
        for info in codes.values():
            out.write(f"{info.code}  {info.severity.value:<7}  {info.title}\n")
        out.write("\n" + "\n".join(_wrap(n, "") for n in NOTES) + "\n")
        return 0
    wanted = args.code.upper()
    if wanted in codes:
        info = codes[wanted]
        out.write(f"{info.code} ({info.severity.value}): {info.title}\n\n{_wrap(info.explanation)}\n\n")
        out.write(f"How to fix:\n{_wrap(info.hint)}\n")
        for ref in info.references:
            out.write(f"\nSee: {ref}\n")
        return 0
    family = [i for i in codes.values() if i.family == wanted]
    if family:
        for info in family:
            out.write(f"{info.code}  {info.severity.value:<7}  {info.title}\n")
        return 0
    raise UsageError(f"no finding code {args.code!r}; `mlsubmit explain` lists them")
