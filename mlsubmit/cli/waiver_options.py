"""--waivers FILE and --write-waivers FILE for the commands that report findings (check, advise, package).

The waivers of the nearest mlsubmit.toml above each PATH apply too. They are applied to the finished report, after
the check (nothing of them is cached), and before it is written; --write-waivers then writes a starting file from
what is still not waived. A waiver file's path globs are relative to the folder that holds it, whatever folder the
command runs in, so the same file waives the same findings when a tree is checked from elsewhere.
"""

from __future__ import annotations

import argparse
import datetime as dt
from collections.abc import Sequence
from pathlib import Path

from mlsubmit.checker import Waiver, apply_waivers, read_waivers
from mlsubmit.checker.policy.waiverfile import refuse_existing as refuse_waiver_file
from mlsubmit.checker.policy.waiverfile import starting_file as starting_waiver_file
from mlsubmit.checker.policy.waiverfile import write_new as write_waiver_file
from mlsubmit.checker.policy.waivers import project_waivers, shown_path
from mlsubmit.core.findings import Report
from mlsubmit.core.support.display_escape import notice

WAIVER_HEADER = "\n[[waiver]]\n"  # how the starting file opens each table


def waivers_for(args: argparse.Namespace, paths: Sequence[str]) -> list[Waiver]:
    """The waivers a run applies, read and checked before anything is checked (a bad one is exit 2)."""
    if args.write_waivers is not None:
        refuse_waiver_file(args.write_waivers)
    found = [] if args.no_project_waivers else project_waivers(paths)
    for file in args.waivers:
        found.extend(read_waivers(file, base=file.absolute().parent, shown=shown_path(file)))
    return found


def waive(report: Report, args: argparse.Namespace, waivers: Sequence[Waiver], *, today: dt.date | None = None,
          command: str = "check") -> Report:
    """The report with the waivers applied; with --write-waivers, the starting file written from it."""
    report = apply_waivers(report, waivers, today=today)
    if args.write_waivers is not None:
        file: Path = args.write_waivers
        text = starting_waiver_file(report.all_findings(), today=today or dt.date.today(),
                                    base=file.absolute().parent, anchor=Path.cwd(), command=command)
        write_waiver_file(file, text)
        notice(f"mlsubmit: wrote {text.count(WAIVER_HEADER)} waiver(s) to {file}, one per error or warning no waiver "
               f"covers, each 'to review'; their paths are relative to its folder, so `--waivers {file}` applies "
               "them from any folder")
    return report
