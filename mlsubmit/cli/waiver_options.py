"""--waivers FILE and --write-waivers FILE for the commands that report findings (check, advise, package).

The waivers of the nearest mlsubmit.toml above each PATH apply too. For `check` they are part of the run's policy
(checker/policy/check_config.py's `policy_for`; `waivers_only` for `advise` and `report`), read before any log and
applied by the policy finding by finding, after the check (nothing of them is cached). --write-waivers then writes
a starting file from what is still not waived. A waiver file's path globs are relative to the folder that holds it,
whatever folder the command runs in, so the same file waives the same findings when a tree is checked from
elsewhere.
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path
from typing import Any

from mlsubmit.checker.policy.waiverfile import refuse_existing as refuse_waiver_file
from mlsubmit.checker.policy.waiverfile import starting_file as starting_waiver_file
from mlsubmit.checker.policy.waiverfile import write_new as write_waiver_file
from mlsubmit.core.findings import Report
from mlsubmit.core.support.display_escape import notice

WAIVER_HEADER = "\n[[waiver]]\n"  # how the starting file opens each table


def waiver_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The waivers a run applies, as the policy's flags (checker/policy/check_config.py's `Flags`): read with the
    policy, before anything is checked. An existing --write-waivers FILE is exit 2 first."""
    if args.write_waivers is not None:
        refuse_waiver_file(args.write_waivers)
    return {"waivers": tuple(args.waivers), "project_waivers": not args.no_project_waivers}


def write_waivers(report: Report, args: argparse.Namespace, *, today: dt.date | None = None,
                  command: str = "check") -> None:
    """--write-waivers FILE: a starting file from what the report's waivers (applied by the policy) left."""
    if args.write_waivers is None:
        return
    file: Path = args.write_waivers
    text = starting_waiver_file(report.all_findings(), today=today or dt.date.today(), base=file.absolute().parent,
                                anchor=Path.cwd(), command=command)
    write_waiver_file(file, text)
    notice(f"mlsubmit: wrote {text.count(WAIVER_HEADER)} waiver(s) to {file}, one per error or warning no waiver "
           f"covers, each 'to review'; their paths are relative to its folder, so `--waivers {file}` applies "
           "them from any folder")
