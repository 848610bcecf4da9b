"""mlsubmit advise [--ruleset X.Y.Z|auto] LOG...: every closed-division rule each run breaks, whatever it claims.

An open run learns what would keep it out of closed (or, HP010, that nothing in its log does); a compliant closed
run gets no error or warning. The advice is the closed hyperparameter table (HP findings) plus mlperf-logging's
closed rule files run as if the log said closed (RULE findings), unless --table-only. For closed and open runs it
adds the RCP the runs are (or would be) measured against, each hyperparameter that differs from it and the
predicted RCP verdict (HP006, HP007, HP008: info), once per results folder and batch size, unless --no-rcp;
--fail-on rcp makes a predicted RCP failure an error. Without --ruleset, each LOG's round comes from its
training_results_vX.Y folder (or the round a tree states), as in check.
"""

from __future__ import annotations

import argparse
import os

from mlsubmit import __version__
from mlsubmit.checker import ParsedLog, discover, mlperf_logging_version, read_log
from mlsubmit.checker.hyperparameters.apply import coverage_findings
from mlsubmit.checker.hyperparameters.as_closed import advise_parsed
from mlsubmit.checker.policy.check_config import Flags, waivers_only
from mlsubmit.checker.rcp.prediction import advise_runs
from mlsubmit.cli.output import emit
from mlsubmit.cli.rulesets import rulesets_for
from mlsubmit.cli.waiver_options import waiver_flags, write_waivers
from mlsubmit.core.errors import UsageError
from mlsubmit.core.findings import Report, Tally


def run(args: argparse.Namespace) -> int:
    if not args.paths and not args.strictness:
        raise UsageError("advise needs a LOG (or a folder of them), or --strictness BENCHMARK[:GBS]")
    if not args.paths:
        return _strictness(args)
    groups = rulesets_for(args.ruleset, list(args.paths))
    policy = waivers_only(list(args.paths), Flags(**waiver_flags(args)))  # its waivers, read before any log
    report = Report(strict=args.strict)
    report.meta.update({"command": "advise", "ruleset": ", ".join(groups), "version": __version__,
                        "mlperf_logging": mlperf_logging_version()})
    for ruleset, paths in groups.items():
        _advise_round(report, ruleset, paths, args)
    policy.waive(report)
    if args.write_waivers is not None:
        write_waivers(report, args, command="advise")
    return emit(report, args)


def _advise_round(report: Report, ruleset: str, paths: list[str], args: argparse.Namespace) -> None:
    targets = discover(paths)
    if not targets.all_logs():
        raise UsageError(f"nothing to advise on: no run logs under {', '.join(paths)}")
    report.extend(coverage_findings(ruleset))  # path "": said once for the run
    folders: dict[str, list[ParsedLog]] = {}
    for ref in targets.all_logs():
        log = read_log(ref.path, ref.display, unpack=ref.unpack)
        report.add_file(ref.display, advise_parsed(log, ruleset, table_only=args.table_only))
        if not args.no_rcp and log.records:
            folders.setdefault(os.path.dirname(ref.display), []).append(log)
    for logs in folders.values():  # the runs of one results folder share one RCP
        for found in advise_runs(logs, ruleset, fail_on_rcp="rcp" in args.fail_on):
            report.add(found)


def _strictness(args: argparse.Namespace) -> int:
    # the RCP planning's numpy (rcp/risk.py) only with --strictness (start-up of `advise`)
    from mlsubmit.checker.rcp.planning import strictness_findings

    if args.ruleset in (None, "auto"):
        raise UsageError("advise --strictness without LOGs needs --ruleset X.Y.Z (the round of the RCPs)")
    ruleset = next(iter(rulesets_for(args.ruleset, [])))
    report = Report(strict=args.strict)
    report.meta.update({"command": "advise", "ruleset": ruleset, "version": __version__,
                        "mlperf_logging": mlperf_logging_version()})
    for asked in args.strictness:
        for found in strictness_findings(ruleset, asked):
            report.add(found)
    # what the query measured: RCP records, not files ("0 file(s) checked" read as if nothing was looked at)
    report.tally = Tally(((len(list(report.all_findings())), "measured RCP record(s)"),))
    return emit(report, args)
