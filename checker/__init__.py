"""The checks: mlperf-logging's rule files, the closed hyperparameter table, system descriptions, organisation trees,
power logs, convergence and RCPs, and the code's hygiene. This module is the checker's public API: the names the
command line, `report` and `submission` use most (docs/architecture.md lists them; tests/unit/checker/test_public_api.py
holds the list and `__all__` equal). What they use once is imported from its module, among the public modules that
docs/architecture.md lists; an import-linter contract keeps them out of every other module. Tests may reach inside.

The subpackages, each named for what it holds:

- `engine/`: a check run: discovery of what PATHs hold, the registry of checks, the pipeline;
- `base/`: the floor under the checks: options, targets, the Check contract, the worker pool, the cache, the ledger;
- `rounds/`: what a round is: its benchmarks, the division a result counts in, the round a path states;
- `logs/`: the input (plain, gzip, raw job output), the record reader, the facts a tree check needs;
- `rules/`: mlperf-logging's rule files, run by our own engine through the AST whitelist;
- `hyperparameters/`: the closed table as data, its constraint vocabulary, its application, the advice;
- `systems/`: system descriptions, their agreement with the logs, and their capture from a machine;
- `tree/`: the organisation tree check (default profile and the reference package checker's verdict), seeds;
- `power/`: power logs and their rules;
- `rcp/`: convergence and the RCP check (mlperf-logging's own RCP checker, through `upstream/`), the RCP advice;
- `hygiene/`: junk, names, big files, links and secrets in a tree;
- `policy/`: a project's policy over the findings: waivers for what the review granted;
- `upstream/`: every touch of mlperf-logging's internals (its files, its version, its RCP checker run as ours).

"""

from __future__ import annotations

from mlsubmit.checker.base.options import CheckOptions, Profile, Tracker, no_progress
from mlsubmit.checker.base.targets import LogRef, OrgTree
from mlsubmit.checker.engine.discover import discover, is_org
from mlsubmit.checker.engine.pipeline import CheckRun, run_check, run_rounds
from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.logs.reader import ParsedLog, read_log
from mlsubmit.checker.policy.check_config import policy_for
from mlsubmit.checker.policy.waiver_pass import apply_waivers
from mlsubmit.checker.policy.waivers import Waiver, read_waivers
from mlsubmit.checker.rounds.detect import round_name
from mlsubmit.checker.rounds.window import median_window
from mlsubmit.checker.rules.files import (
    RulesetError,
    available_rulesets,
    newer_than_installed,
    unknown_ruleset,
)
from mlsubmit.checker.upstream.installed import version as mlperf_logging_version

__all__ = [
    "CheckOptions",  # what to check and how: ruleset, profile, jobs, cache, progress
    "CheckRun",  # a check's result: what it found, each log's result, the report
    "LogFacts",  # what the tree checks need from a log
    "LogRef",  # one log found under a PATH
    "OrgTree",  # an organisation tree found under a PATH
    "ParsedLog",  # a log's MLLOG records with their real lines, and its LOG findings
    "Profile",  # `--profile`: a shipped profile (full, reference, ...)
    "RulesetError",  # an unknown ruleset, or a rule file not shaped as mlperf-logging's are
    "Tracker",  # the progress callback a command passes in
    "Waiver",  # one `[[waiver]]` table: where it is written and what it grants
    "apply_waivers",  # a report whose findings a live waiver covers are marked waived
    "available_rulesets",  # the training rulesets the installed mlperf-logging ships
    "discover",  # the logs, systems and trees PATHs hold
    "is_org",  # whether a folder is an organisation tree
    "median_window",  # the median window of N consecutive runs, olympic-scored
    "mlperf_logging_version",  # the installed mlperf-logging's version
    "newer_than_installed",  # a round whose rules only a newer mlperf-logging ships
    "no_progress",  # the Tracker that shows nothing
    "policy_for",  # the project's policy for a run over PATHs, and the mlsubmit.toml it read
    "read_log",  # read one log; bad content or an unreadable file becomes findings
    "read_waivers",  # the waivers of a TOML file
    "round_name",  # the round a ruleset belongs to ("1.1.0" -> "1.1")
    "run_check",  # every check that applies to PATHs, with one ruleset
    "run_rounds",  # one CheckRun per round the PATHs state, the logs of all through one pool
    "unknown_ruleset",  # why a ruleset cannot be checked with the installed mlperf-logging
]
