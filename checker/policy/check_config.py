"""The policy a run applies, from its three sources: the profile (by name, shipped as data), the project's
`mlsubmit.toml` `[check]` table (schemas/check-config.schema.json), and the command line. Every code, family and
level is checked here, so a typo is exit 2 with a guess, never a setting that silently matches nothing.

    [check]
    profile = "full"                      # or extends = "full": the project's policy is that profile, then this
    select = ["SYS", "TREE", "RULE004"]   # only these codes or families (default: all)
    ignore = ["SYS044"]
    severity = { SYS016 = "error", POW = "warning" }
    fail-on = { rcp-risk = 0.05 }         # RUN009 is an error above this chance of an RCP fail (run planning)

    [[check.overrides]]                   # for findings under these paths (globs from this file's folder)
    paths = ["results/*/bert/*"]
    severity = { RULE004 = "info" }
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlsubmit.checker.policy.profiles import SHIPPED
from mlsubmit.checker.policy.severity import Layer, Policy, code_names, level_of, severity_pairs
from mlsubmit.checker.policy.waivers import Waiver, project_waivers, read_waivers, shown_path
from mlsubmit.checker.rounds.detect import check_table, nearest_configs

from mlsubmit.core.errors import UsageError


@dataclass(frozen=True)
class Flags:
    """The command line's part: --profile (None: not given), --select, --ignore, --severity CODE=LEVEL; for the
    commands that waive, the --waivers files and whether the project's mlsubmit.toml waivers apply; --fail-on."""

    profile: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: tuple[str, ...] = ()
    waivers: tuple[Path, ...] = ()
    project_waivers: bool = False
    fail_on: tuple[str, ...] = ()


def split_names(values: Sequence[str] | None) -> tuple[str, ...]:
    """`--select A,B --select C` as (A, B, C)."""
    return tuple(n.strip() for v in values or () for n in v.split(",") if n.strip())


def policy_for(paths: Sequence[str], flags: Flags, *, today: dt.date | None = None) -> tuple[Policy, Path | None]:
    """The policy for a run over `paths`, and the mlsubmit.toml it read (None: none above the paths): read and
    checked before anything is checked (a bad setting or waiver is exit 2). `today`: the day waivers expire on."""
    config = _one_config(paths)
    table = check_table(config) if config is not None else {}
    origin = f"{config} [check]" if config is not None else ""
    profile, layers = _from_table(table, origin, config.parent if config is not None else Path.cwd())
    if flags.profile is not None:
        profile = flags.profile
    if profile not in SHIPPED:
        raise UsageError(f"{origin or '--profile'}: no profile {profile!r}; the profiles are: {', '.join(SHIPPED)}")
    cli = Layer(
        "the command line",
        select=code_names(flags.select, "--select"),
        ignore=code_names(flags.ignore, "--ignore"),
        levels=severity_pairs(flags.severity, "--severity"),
    )
    if cli.select or cli.ignore or cli.levels:
        layers.append(cli)
    waivers = _waivers(paths, flags)
    limit = fail_on_limit(flags.fail_on, config)
    return Policy(profile, tuple(layers), waivers=waivers, today=today, rcp_risk_limit=limit), config


def waivers_only(paths: Sequence[str], flags: Flags, *, today: dt.date | None = None) -> Policy:
    """The policy of a command that applies the project's and --waivers files' waivers and nothing else of
    mlsubmit.toml [check] (`report` scores with the default profile): the profile of the flags, else the default."""
    return Policy(flags.profile or "full", waivers=_waivers(paths, flags), today=today)


def _waivers(paths: Sequence[str], flags: Flags) -> tuple[Waiver, ...]:
    """The project's waivers (the nearest mlsubmit.toml above each PATH), then each --waivers FILE's, globs relative
    to each file's folder."""
    found = project_waivers(paths) if flags.project_waivers else []
    for file in flags.waivers:
        found.extend(read_waivers(file, base=file.absolute().parent, shown=shown_path(file)))
    return tuple(found)


def _one_config(paths: Sequence[str]) -> Path | None:
    found = set(nearest_configs(paths or [os.getcwd()]))
    if len(found) > 1:
        shown = ", ".join(sorted(str(c) for c in found if c is not None)) or "none"
        raise UsageError(f"the PATHs fall under different mlsubmit.toml files ({shown}); check them separately")
    return next(iter(found))


def _from_table(table: dict[str, Any], origin: str, home: Path) -> tuple[str, list[Layer]]:
    if not table:
        return "full", []
    # jsonschema only when an mlsubmit.toml is read (start-up)
    from mlsubmit.core.support.schema_loader import SchemaError, load_schema, validate_or_raise

    try:
        validate_or_raise(table, load_schema("check-config.schema.json"), what=origin)
    except SchemaError as exc:
        raise UsageError(str(exc)) from None
    named: set[str] = {str(table[k]) for k in ("profile", "extends") if k in table}
    if len(named) > 1:
        raise UsageError(f"{origin}: profile and extends name different profiles ({', '.join(sorted(named))})")
    layers = [_layer(table, origin, ())]
    for i, override in enumerate(table.get("overrides", [])):
        paths = tuple(os.path.join(os.path.abspath(home), p) for p in override["paths"])
        layers.append(_layer(override, f"{origin} overrides[{i}] ({', '.join(override['paths'])})", paths))
    return (named.pop() if named else "full"), [layer for layer in layers if layer.select or layer.ignore
                                                 or layer.levels]


def _layer(table: dict[str, Any], origin: str, paths: tuple[str, ...]) -> Layer:
    levels = tuple((code_names([code], f"{origin} severity")[0], level_of(level, f"{origin} severity {code}"))
                   for code, level in table.get("severity", {}).items())
    return Layer(origin, select=code_names(table.get("select", []), f"{origin} select"),
                 ignore=code_names(table.get("ignore", []), f"{origin} ignore"), levels=levels, paths=paths)


FAIL_ON = ("rcp-risk",)


def fail_on_limit(values: Sequence[str], config: Path | None) -> float | None:
    """The chance of an RCP fail above which RUN009 is an error: `--fail-on rcp-risk=P` (the last one given),
    else mlsubmit.toml [check] fail-on's rcp-risk, else None."""
    limit: float | None = None
    for value in values:
        name, sep, number = value.partition("=")
        if name.strip() not in FAIL_ON or not sep:
            raise UsageError(f"--fail-on {value!r}: expected rcp-risk=P, a chance between 0 and 1 (e.g. 0.05)")
        limit = _chance(number, f"--fail-on {value!r}")
    if limit is not None or config is None:
        return limit
    table = check_table(config).get("fail-on", {})  # schema-checked by policy_for
    return float(table["rcp-risk"]) if isinstance(table, dict) and "rcp-risk" in table else None


def _chance(text: str, origin: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise UsageError(f"{origin}: the chance must be a number between 0 and 1 (e.g. 0.05 for 5 %)")
    return value
