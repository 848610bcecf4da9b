"""mlsubmit advise [--ruleset X.Y.Z|auto] LOG...: every closed-division rule each run breaks, whatever it claims.

An open run learns what would keep it out of closed; a compliant closed run gets an empty list. The advice is
the closed hyperparameter table (HP findings) plus mlperf-logging's closed rule files run as if the log said
closed (RULE findings), unless --table-only.
"""

from __future__ import annotations

import argparse

from mlsubmit import __version__
from mlsubmit.checker.discover import discover
from mlsubmit.checker.hyperparameters import advise_log, coverage_findings
from mlsubmit.cli.output import add_output_options, emit
from mlsubmit.cli.rulesets import add_ruleset_option, rulesets_for
from mlsubmit.errors import UsageError
from mlsubmit.findings import Report


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("advise", help="list the closed-division rules each run log breaks")
    add_ruleset_option(parser)
    parser.add_argument("paths", nargs="+", metavar="LOG",
                        help="run log (raw job output too, gzip-compressed or not), or a folder of them")
    parser.add_argument("--table-only", action="store_true",
                        help="only the hyperparameter table, not mlperf-logging's closed rule files")
    add_output_options(parser)


def run(args: argparse.Namespace) -> int:
    groups = rulesets_for(args.ruleset, list(args.paths))
    report = Report(strict=args.strict)
    report.meta.update({"command": "advise", "ruleset": ", ".join(groups), "version": __version__})
    for ruleset, paths in groups.items():
        targets = discover(paths)
        if not targets.all_logs():
            raise UsageError(f"nothing to advise on: no run logs under {', '.join(paths)}")
        report.extend(coverage_findings(ruleset))  # path "": said once for the run
        for ref in targets.all_logs():
            report.add_file(ref.display, advise_log(ref.path, ref.display, ruleset, table_only=args.table_only,
                                                    unpack=ref.unpack))
    return emit(report, args)
