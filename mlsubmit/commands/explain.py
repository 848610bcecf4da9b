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
