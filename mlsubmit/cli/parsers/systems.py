"""The options of `mlsubmit systems` (the command: mlsubmit/cli/commands/systems.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from mlsubmit.cli.parsers import add_output_options, add_ruleset_option


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("systems", help="system descriptions: capture one from a machine")
    steps = parser.add_subparsers(dest="step", metavar="STEP", required=True)
    cap = steps.add_parser("capture", help="make a system description from a capture of the host (mlperf-sysinfo)")
    source = cap.add_mutually_exclusive_group(required=True)
    source.add_argument("--from", dest="from_file", type=Path, metavar="FILE",
                        help="a capture mlperf-sysinfo (profile training) wrote, on this host or another")
    source.add_argument("--sysinfo-config", type=Path, metavar="FILE",
                        help="capture this host now with mlperf-sysinfo and this config of its (profile training)")
    cap.add_argument("--system-id", required=True, metavar="ID",
                     help="the results folder's system id: the file written is DIR/ID.json")
    add_ruleset_option(cap)
    cap.add_argument("--pod-size", type=int, metavar="N", help="IPU-POD size (16, 64, 128, 256)")
    cap.add_argument("--m2000", type=int, metavar="M", help="IPU-M2000 machines in the POD (4 per POD16)")
    cap.add_argument("--host-servers", type=int, metavar="S",
                     help="host servers of the system (default: the nodes the capture covers)")
    cap.add_argument("--status", metavar="STATUS", help="availability (any spelling; written as the round spells it)")
    cap.add_argument("--set", dest="settings", action="append", default=[], metavar="FIELD=VALUE",
                     help="state a field no probe can read (repeatable); wins over the capture and the POD facts")
    cap.add_argument("--dir", type=Path, default=Path("systems"), help="folder to write into (default: systems)")
    cap.add_argument("--draft", action="store_true",
                     help="write even a partial capture or a description with errors (still exit 1)")
    cap.add_argument("--force", action="store_true", help="replace a different file of that name")
    add_output_options(cap)
