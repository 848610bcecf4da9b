"""mlsubmit report [--ruleset X.Y.Z|auto] PATH...: scores per system × benchmark, as a table, JSON or an HTML page.

It runs the same checks as `mlsubmit check` (each log read once) and scores from their facts. The exit code is
the check's: 0 when no errors were found, 1 otherwise (warnings too with --strict); the report is written either way.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from mlsubmit.checker import CheckOptions, CheckRun, run_check
from mlsubmit.checker.policy.check_config import Flags, waivers_only
from mlsubmit.cli.output import write_text
from mlsubmit.cli.progress import tracker
from mlsubmit.cli.rulesets import rulesets_for
from mlsubmit.cli.waiver_options import waiver_flags, write_waivers
from mlsubmit.core.errors import FatalError, UsageError
from mlsubmit.core.findings import Finding, Report
from mlsubmit.core.support.display_escape import notice
from mlsubmit.formats import text
from mlsubmit.report.against import compare_with_chair, read_chair
from mlsubmit.report.compare import unknown_baseline
from mlsubmit.report.data import ReportData, collect
from mlsubmit.report.html import render
from mlsubmit.report.inputs import load_prices
from mlsubmit.report.private_ids import generate
from mlsubmit.report.summary import build
from mlsubmit.report.summary_files import summary_paths, write_summary, write_xlsx, xlsx_ready
from mlsubmit.report.tables import WRITERS

if TYPE_CHECKING:
    from mlsubmit.report.against import ChairSummary


def run(args: argparse.Namespace) -> int:
    groups = rulesets_for(args.ruleset, list(args.paths))
    if len(groups) > 1:
        raise UsageError(f"the PATHs are in {len(groups)} rounds ({', '.join(groups)}); report one round at a time")
    ruleset = next(iter(groups))
    prices = load_prices(args.prices) if args.prices else None
    if args.summary_csv:
        summary_paths(args.summary_csv)  # a bad name is a usage error before anything is checked
    if args.summary_xlsx:
        xlsx_ready(args.summary_xlsx)  # so is a bad name or no openpyxl
    chair = None
    if args.against:
        chair = read_chair(args.against)  # an unreadable file is exit 2 before anything is checked or written
    if args.generate_private_ids:
        _outside_the_trees(args.generate_private_ids, args.paths)
    policy = waivers_only(list(args.paths), Flags(**waiver_flags(args)))  # read before any log; applied by the check
    options = CheckOptions(ruleset=ruleset, jobs=max(0, args.jobs), strict=args.strict, policy=policy)
    result = run_check(args.paths, options, progress=tracker)
    if args.write_waivers is not None:
        write_waivers(result.report, args, command="report")
    ids = _private_ids(args.generate_private_ids, result) if args.generate_private_ids else {}
    data = collect(result, ruleset, prices=prices, baseline=args.baseline, time_basis=args.per_dollar_time)
    if args.baseline is not None:
        problem = unknown_baseline(data.rows, args.baseline)
        if problem:
            raise FatalError(problem)
    data.paths = list(args.paths)
    _chair_summary(args, data, result, chair, ids)
    writer = WRITERS[args.format]
    if args.output:
        buffer = io.StringIO()
        writer(data, buffer)
        write_text(args.output, buffer.getvalue())
    else:
        writer(data, sys.stdout)
    if args.html:
        write_text(args.html, render(data))
    return result.report.exit_code()


def _outside_the_trees(out: Path, paths: list[str]) -> None:
    """Checking never writes into the tree under check: the ids go to a folder of their own."""
    where = out.resolve()
    for path in paths:
        tree = Path(path).resolve()
        if where == tree or tree in where.parents or where in tree.parents:
            raise UsageError(f"--generate-private-ids {out}: inside or above the checked {path}; give a folder of "
                             "its own (copy the files into the tree when the chair asks for them)")


def _private_ids(out: Path, result: CheckRun) -> dict[tuple[str, str], str]:
    """Write the ids; they are the summary's private_id column, as in the summarizer's run that writes them."""
    made = generate(list(result.targets.orgs), out)
    for item in made.findings:
        result.report.add(item)
    kept = f"; {len(made.kept)} system(s) already have one in the tree" if made.kept else ""
    notice(f"mlsubmit: wrote {len(made.written)} privateid.json file(s) under {out}{kept}")
    return made.ids


def _chair_summary(args: argparse.Namespace, data: ReportData, result: CheckRun,
                   chair: ChairSummary | None, ids: dict[tuple[str, str], str]) -> None:  # fmt: skip
    """--summary-csv, --summary-xlsx and --against: the summary built once; --against's findings join the report."""
    if not (args.summary_csv or args.summary_xlsx or chair):
        return
    summary = build(data, result, ids)
    if args.summary_csv:
        write_summary(summary, args.summary_csv)
    if args.summary_xlsx:
        write_xlsx(summary, args.summary_xlsx)
    if chair is not None:
        found = compare_with_chair(summary, chair)
        for item in found:
            result.report.add(item)
        data.findings.extend(found)
        _list_on_stderr(found, args.against)


def _list_on_stderr(found: list[Finding], chair: Path) -> None:
    """The comparison's findings are what --against is for: listed (the report's own are counted only)."""
    if found:
        text(Report(files={str(chair): list(found)}), sys.stderr)  # filed under the chair's file: its verdict
    else:
        notice(f"every result agrees with {chair}")
