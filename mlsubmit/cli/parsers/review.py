"""The options of `mlsubmit review` (the command: mlsubmit/cli/commands/review.py)."""

from __future__ import annotations

import argparse

from mlsubmit.cli.parsers import add_output_options, add_ruleset_option


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("review", help="the review period: borrowing, Preview results, changes since last round")
    steps = parser.add_subparsers(dest="step", metavar="STEP", required=True)
    borrow = steps.add_parser("borrow", help="is a resubmission a valid hyperparameter borrowing")
    borrow.add_argument("--original", required=True, metavar="DIR", help="our original results/<system>/<benchmark>")
    borrow.add_argument("--resubmitted", required=True, metavar="DIR", help="our resubmitted entry")
    donor = borrow.add_mutually_exclusive_group(required=True)
    donor.add_argument("--donor", metavar="DIR", help="the other submitter's entry the hyperparameters came from")
    donor.add_argument("--round-trees", nargs="+", metavar="TREE",
                       help="the round's trees (organisation folders or a training_results_vX.Y folder): the "
                            "donor is the entry the resubmission matches best")
    add_ruleset_option(borrow)
    borrow.add_argument("--html", metavar="FILE", help="also write the comparison table as an HTML page")
    add_output_options(borrow)
    preview = steps.add_parser("preview", help="last round's Preview results against this round's Available ones")
    preview.add_argument("--previous", nargs="+", required=True, metavar="TREE",
                         help="last round's trees (organisation folders or a training_results_vX.Y folder)")
    preview.add_argument("--current", nargs="+", required=True, metavar="TREE",
                         help="this round's trees (and the next round's, where the result is due then: 140 days)")
    preview.add_argument("--html", metavar="FILE", help="also write the comparison table as an HTML page")
    add_output_options(preview)
    since = steps.add_parser("since", help="our tree against our tree of the previous round")
    since.add_argument("--previous", required=True, metavar="TREE", help="our organisation tree of last round")
    since.add_argument("--current", required=True, metavar="TREE", help="our organisation tree of this round")
    since.add_argument("--previous-ruleset", default="auto", metavar="X.Y.Z|auto",
                       help="the previous tree's ruleset (default: from its training_results_vX.Y folder)")
    add_ruleset_option(since)
    since.add_argument("--html", metavar="FILE", help="also write what changed as an HTML page")
    add_output_options(since)
