"""The checks: mlperf-logging's rule files, the closed hyperparameter table, system descriptions, organisation trees,
power logs, convergence and RCPs, and the code's hygiene. This module is the front door the command line, `report`
and `submission` use (an import-linter contract keeps them out of the rooms); tests may reach inside.

The rooms, each named for what it holds:

- `run/`: options and profiles, discovery of what PATHs hold, the pipeline, the worker pool, the cache;
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

Names are imported from their room when first used, so a command that never checks (`explain`) loads none of it.
"""

from __future__ import annotations

import ast
import functools
import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the front door's names; imported from their rooms when first used (__getattr__)
    from mlsubmit.checker.hygiene.check import scan as scan_hygiene
    from mlsubmit.checker.hyperparameters.advice import advise_parsed
    from mlsubmit.checker.hyperparameters.apply import coverage_findings
    from mlsubmit.checker.logs.facts import LogFacts, extract
    from mlsubmit.checker.logs.input import GZIP_ERRORS, numbered_records, open_log, record_lines
    from mlsubmit.checker.logs.reader import ParsedLog, read_log
    from mlsubmit.checker.policy.config import Flags as PolicyFlags
    from mlsubmit.checker.policy.config import policy_for, split_names
    from mlsubmit.checker.policy.profiles import load as load_profile
    from mlsubmit.checker.policy.waiverfile import refuse_existing as refuse_waiver_file
    from mlsubmit.checker.policy.waiverfile import starting_file as starting_waiver_file
    from mlsubmit.checker.policy.waiverfile import write_new as write_waiver_file
    from mlsubmit.checker.policy.waivers import (
        Waiver,
        apply_waivers,
        project_configs,
        project_waivers,
        read_waivers,
        shown_path,
    )
    from mlsubmit.checker.policy.waivers import applied as applied_waivers
    from mlsubmit.checker.power.energy import RunEnergy, entry_energy, run_energy, run_name
    from mlsubmit.checker.rcp import RcpResult, run_convergence
    from mlsubmit.checker.rcp import evidence as rcp_evidence
    from mlsubmit.checker.rcp import judged as rcp_evaluate
    from mlsubmit.checker.rcp.advice import advise_runs
    from mlsubmit.checker.rcp.custom import parse as parse_rcps
    from mlsubmit.checker.rcp.npstats import mean as numpy_mean
    from mlsubmit.checker.review.borrow import Borrowing, check_borrowing
    from mlsubmit.checker.review.donors import rank_donors
    from mlsubmit.checker.review.entries import entry_folders_all as review_entry_folders
    from mlsubmit.checker.review.entries import read_entry
    from mlsubmit.checker.review.preview import Comparison as PreviewComparison
    from mlsubmit.checker.review.preview import check_preview
    from mlsubmit.checker.review.rules import rules_for as borrow_rules_for
    from mlsubmit.checker.review.since import check_since, since_counts
    from mlsubmit.checker.rounds import benchmarks
    from mlsubmit.checker.rounds.benchmarks import olympic_mean
    from mlsubmit.checker.rounds.detect import AUTO, ROUND_FILE, group_by_round, round_name, spelled_ruleset
    from mlsubmit.checker.rounds.division import reference_closed, stated
    from mlsubmit.checker.rounds.window import Window, median_window
    from mlsubmit.checker.rounds.window import olympic as window_olympic
    from mlsubmit.checker.rules.files import (
        RulesetError,
        available_rulesets,
        get_ruleset,
        newer_than_installed,
        unknown_ruleset,
    )
    from mlsubmit.checker.run.discover import LogRef, OrgTree, discover, is_org
    from mlsubmit.checker.run.ledger import Entry as LedgerEntry
    from mlsubmit.checker.run.ledger import read as read_ledger
    from mlsubmit.checker.run.ledger import record as record_runs
    from mlsubmit.checker.run.options import CheckOptions, Profile, Tracker, no_progress
    from mlsubmit.checker.run.pipeline import CheckRun, run_check, run_rounds
    from mlsubmit.checker.systems.capture import Capture, parse_capture, read_capture
    from mlsubmit.checker.systems.completion import Request as CaptureRequest
    from mlsubmit.checker.systems.completion import build as build_description
    from mlsubmit.checker.systems.completion import check_bytes as check_description_bytes
    from mlsubmit.checker.systems.completion import field_order as description_fields
    from mlsubmit.checker.systems.completion import pod_of
    from mlsubmit.checker.systems.completion import render as render_description
    from mlsubmit.checker.systems.descriptions import SystemSummary, summarize
    from mlsubmit.checker.systems.host import capture_here
    from mlsubmit.checker.systems.jsonfile import read_json
    from mlsubmit.checker.tree import params as org_params
    from mlsubmit.checker.tree.runset import ledger_entries
    from mlsubmit.checker.upstream.installed import private_id_words
    from mlsubmit.checker.upstream.installed import version as mlperf_logging_version



@functools.cache
def _public() -> dict[str, tuple[str, str]]:
    """Public name -> (module, its name there; "" for a module itself), read from the TYPE_CHECKING block above,
    the one list of the front door's names (type checkers read it; at run time nothing there is imported)."""
    here = Path(__file__).parent
    tree = ast.parse((here / "__init__.py").read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    out: dict[str, tuple[str, str]] = {}
    for node in block.body:
        if not (isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(__name__)):
            continue
        folder = here.joinpath(*node.module[len(__name__):].split(".")[1:])
        for alias in node.names:
            is_module = (folder / f"{alias.name}.py").is_file()  # told from the files: nothing imported yet
            out[alias.asname or alias.name] = (f"{node.module}.{alias.name}", "") if is_module else (
                node.module, alias.name)
    return out


def __getattr__(name: str) -> Any:
    """A public name, imported from its room the first time it is asked for (PEP 562)."""
    if name.startswith("__") or name not in _public():
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    where, attribute = _public()[name]
    module = importlib.import_module(where)
    value = getattr(module, attribute) if attribute else module
    globals()[name] = value  # later lookups are plain attribute reads
    return value
