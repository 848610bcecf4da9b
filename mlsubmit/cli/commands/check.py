"""mlsubmit check [--ruleset X.Y.Z|auto] PATH...: every check that applies to the paths given."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from mlsubmit import __version__
from mlsubmit.checker import CheckOptions, Profile, mlperf_logging_version, policy_for, run_rounds
from mlsubmit.checker.logs.input import without_records
from mlsubmit.checker.policy.check_config import Flags as PolicyFlags
from mlsubmit.checker.policy.check_config import split_names
from mlsubmit.checker.rcp.custom import parse as parse_rcps
from mlsubmit.cli.output import emit
from mlsubmit.cli.progress import tracker
from mlsubmit.cli.rulesets import rulesets_for, say_round_data
from mlsubmit.cli.waiver_options import waiver_flags, write_waivers
from mlsubmit.core.errors import UsageError
from mlsubmit.core.findings import Report
from mlsubmit.core.support.display_escape import notice
from mlsubmit.core.support.ledger_url import LedgerUrl
from mlsubmit.core.support.safe_io import read_bounded


def flags_of(args: argparse.Namespace) -> PolicyFlags:
    return PolicyFlags(profile=args.profile, select=split_names(args.select), ignore=split_names(args.ignore),
                       severity=tuple(args.severity))


def logs_among(paths: list[str]) -> list[str]:
    """--skip-non-logs: the PATHs less the files without MLLOG records, which are named on stderr."""
    passed = set(without_records(paths))
    if passed:
        notice(f"mlsubmit: passed over {len(passed)} file(s) without :::MLLOG records: "
               + ", ".join(p for p in paths if p in passed))  # fmt: skip
    return [p for p in paths if p not in passed]


def run(args: argparse.Namespace) -> int:
    if args.skip_non_logs:
        args.paths = logs_among(list(args.paths))
        if not args.paths:
            notice("mlsubmit: nothing to check: no file with :::MLLOG records")
            return 0
    groups = rulesets_for(args.ruleset, list(args.paths))
    # the whole policy (profile, layers, waivers, fail-on), read and checked once, before any log is read
    flags = replace(flags_of(args), fail_on=tuple(args.fail_on), **waiver_flags(args))
    policy, _ = policy_for(list(args.paths), flags)
    options = CheckOptions(
        ruleset=next(iter(groups)),
        profile=Profile(policy.profile),
        policy=policy,
        jobs=max(0, args.jobs),
        cache_dir=cache_folder(args.cache),
        changed_since=args.changed_since,
        strict=args.strict,
        custom_rcps=_custom_rcps(args.custom_rcps, policy.profile),
        run_system=args.system,
        run_systems=_run_systems(args.package_config),
        run_select=args.run_select,
        rcp_risk_limit=policy.rcp_risk_limit,
    )
    if isinstance(args.ledger, LedgerUrl):  # a server that cannot take the runs is said now, not after the check
        from mlsubmit.checker.base import ledger_pg

        ledger_pg.require_ready(args.ledger)
    runs = run_rounds(groups, options, loose_facts=args.ledger is not None, progress=tracker)
    report = merge([run.report for run in runs])
    if args.ledger is not None:
        # imported here: from the checker's public API (checker/__init__.py), the run sets' modules and SQLite
        # would load for every check
        from mlsubmit.checker.base.ledger_rows import record as record_runs
        from mlsubmit.checker.tree.runset import ledger_entries

        entries = [e for ruleset, run in zip(groups, runs, strict=True)
                   for e in ledger_entries(run, replace(options, ruleset=ruleset))]
        added = record_runs(args.ledger, entries)
        notice(f"mlsubmit: ledger {args.ledger}: {added} new of {len(entries)} run log(s) read")
    report.meta.update({"command": "check", "ruleset": ", ".join(groups), "version": __version__,
                        "mlperf_logging": mlperf_logging_version()})
    say_round_data(report, groups)  # a round only the installed mlperf-logging knows: said once
    if args.write_waivers is not None:  # from what the run's policy, waivers and all, left
        write_waivers(report, args)
    return emit(report, args)


# Written into a cache folder mlsubmit creates, so that a cache kept in a checkout (as CI jobs keep it) never shows
# up as untracked or gets committed: git reads a .gitignore in any folder, and `*` covers the folder and itself.
CACHE_GITIGNORE = "# written by mlsubmit: this folder is a cache and is not to be committed\n*\n"


def cache_folder(path: Path | None) -> Path | None:
    """--cache DIR, checked: a path that is not a folder is exit 2 (before, it was ignored without a word)."""
    if path is None:
        return None
    if path.exists() and not path.is_dir():
        raise UsageError(f"--cache {path}: not a folder (a cache is a folder of entries; give a new or existing "
                         "folder)")
    try:
        if not path.is_dir():  # only a folder mlsubmit creates gets the .gitignore: `--cache .` must not hide a repo
            path.mkdir(parents=True)
            (path / ".gitignore").write_text(CACHE_GITIGNORE, encoding="utf-8")
    except OSError as exc:
        if not path.is_dir():
            raise UsageError(f"--cache {path}: cannot create the folder: {exc.strerror or exc}") from None
        # an existing folder we cannot write to stays usable for reading: entries are best effort
    return path


_RCP_FILE_LIMIT = 16 << 20  # the shipped RCP files are a few kB


def _custom_rcps(path: Path | None, profile: str) -> str | None:
    """The text of --custom-rcps FILE, checked (rcp/custom.py); exit 2 for a file it cannot use."""
    if path is None:
        return None
    if Profile(profile) is Profile.REFERENCE:
        raise UsageError("--custom-rcps: the package checker takes no custom RCPs (only the RCP checker does); "
                         "use the full profile")
    try:
        text = read_bounded(path, _RCP_FILE_LIMIT).decode("utf-8")
        parse_rcps(text)
    except OSError as exc:
        raise UsageError(f"--custom-rcps {path}: cannot read it: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"--custom-rcps {path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except ValueError as exc:
        raise UsageError(f"--custom-rcps {path}: {exc}") from None
    return text


def _run_systems(config: Path | None) -> tuple[tuple[str, str], ...]:
    """(resolved file, system) for each file a package.toml's [[results]] would package, matched as `package`
    matches them (exit 2 for a bad config)."""
    if config is None:
        return ()
    # jsonschema and SQLite only with --package-config (start-up)
    from mlsubmit.submission.package_config import load_config
    from mlsubmit.submission.run_selection import expand_logs

    cfg = load_config(config)
    return tuple((str(path.resolve()), entry.system) for entry in cfg.results for path in expand_logs(cfg, entry)[0])


def merge(reports: list[Report]) -> Report:
    """The reports of several rounds as one (their files and trees never overlap: a PATH has one round)."""
    out = Report(strict=reports[0].strict)
    for report in reports:
        for path, found in report.files.items():
            out.add_file(path, found)
        out.tree.extend(report.tree)
    return out
