"""The options of `mlsubmit report` (the command: mlsubmit/cli/commands/report.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from mlsubmit.cli.parsers import add_ruleset_option, add_waiver_options
from mlsubmit.report.tables import WRITERS


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("report", help="scores per system and benchmark as tables, JSON or HTML")
    add_ruleset_option(parser)
    parser.add_argument("paths", nargs="+", metavar="PATH", help="org folder, folder of orgs, results folder or log")
    parser.add_argument("--format", choices=sorted(WRITERS), default="text", help="table format (default: text)")
    parser.add_argument("--output", "-o", metavar="FILE", help="write the table to FILE instead of stdout")
    parser.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report to FILE")
    parser.add_argument("--prices", type=Path, metavar="TOML",
                        help="price rules (default: prices.toml beside each org's systems/ folder)")
    parser.add_argument("--baseline", metavar="SYSTEM",
                        help="system id or system_name the per-dollar comparison is relative to "
                             "(default: the systems of a rule with baseline = true)")
    parser.add_argument("--per-dollar-time", choices=("olympic", "scored"), default="olympic",
                        help="minutes per dollar uses: the unscaled olympic mean (default; as results are "
                             "published) or the scored time with RCP scaling")
    parser.add_argument("--summary-csv", type=Path, metavar="OUT.csv",
                        help="also write the results chair's summary: the files mlperf-logging's result_summarizer "
                             "--csv OUT.csv writes (OUT.csv, OUT.json, OUT_detailed.csv, OUT_detailed.json)")
    parser.add_argument("--summary-xlsx", type=Path, metavar="OUT.xlsx",
                        help="also write the summary as a workbook, a sheet per division (needs openpyxl)")
    parser.add_argument("--against", type=Path, metavar="CHAIR.csv",
                        help="compare with a chair's summary (OUT.csv or OUT_detailed.csv): every result that "
                             "differs or is missing there is a finding (REP002-REP004)")
    parser.add_argument("--generate-private-ids", type=Path, metavar="DIR",
                        help="write the privateid.json files the result summarizer's --generate_private_ids writes, "
                             "as DIR/<org>/results/<system>/privateid.json (never into the checked tree)")
    parser.add_argument("--jobs", "-j", type=int, default=0, help="worker processes (default: one per core)")
    parser.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")
    add_waiver_options(parser)
