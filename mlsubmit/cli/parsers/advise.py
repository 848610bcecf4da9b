"""The options of `mlsubmit advise` (the command: mlsubmit/cli/commands/advise.py)."""

from __future__ import annotations

import argparse

from mlsubmit.cli.parsers import add_output_options, add_ruleset_option, add_waiver_options


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("advise", help="list the closed-division rules each run log breaks")
    add_ruleset_option(parser)
    parser.add_argument("paths", nargs="*", metavar="LOG",
                        help="run log (raw job output too, gzip-compressed or not), or a folder of them")
    parser.add_argument("--strictness", action="append", default=[], metavar="BENCHMARK[:GBS]",
                        help="how strict each measured RCP of the benchmark is (or the one at this global batch "
                             "size): max speedup and P(score < min) as rcp_viewer.py --bootstrap computes them "
                             "(HP011); needs --ruleset X.Y.Z without LOGs")
    parser.add_argument("--table-only", action="store_true",
                        help="only the hyperparameter table, not mlperf-logging's closed rule files")
    parser.add_argument("--no-rcp", action="store_true",
                        help="leave out the RCP a run is measured against and how its hyperparameters differ")
    parser.add_argument("--fail-on", action="append", choices=["rcp"], default=[], metavar="WHAT",
                        help="make a predicted verdict an error, for CI: 'rcp', the RCP check failing the runs "
                             "(HP008)")
    add_output_options(parser)
    add_waiver_options(parser)
