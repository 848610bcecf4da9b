"""The --ruleset option every command shares, and its check against the rulesets mlperf-logging ships."""

from __future__ import annotations

import argparse

from mlsubmit.checker.ruleset import RulesetError, available_rulesets
from mlsubmit.errors import UsageError


def add_ruleset_option(parser: argparse.ArgumentParser, *, auto: bool = False) -> None:
    if auto:
        parser.add_argument(
            "--ruleset",
            default="auto",
            metavar="X.Y.Z|auto",
            help="training ruleset of the round (1.0.0 to 6.1.0, as mlperf-logging ships them); auto (default): "
            "from each PATH's training_results_vX.Y folder, so one run can cover several rounds",
        )
        return
    parser.add_argument(
        "--ruleset",
        required=True,
        metavar="X.Y.Z",
        help="training ruleset of the round (the ones mlperf-logging ships, 1.0.0 to 6.1.0)",
    )


def validate_ruleset(version: str) -> str:
    try:
        known = available_rulesets()
    except RulesetError as exc:
        raise UsageError(str(exc)) from exc
    if version not in known:
        raise UsageError(f"unknown ruleset {version!r}; choose one of: {', '.join(known)}")
    return version
