"""Read and validate the package configuration (TOML), resolving its paths against the config file's folder.

A config is the user's own file, so a problem with it ends the command (exit 2) with every schema error listed at
its place, rather than becoming a finding about the submission.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlsubmit.checker.tree import params as org_params
from mlsubmit.submission.fulllog import Redaction

from mlsubmit.core.errors import FatalError
from mlsubmit.core.support import numbers, tomlfile
from mlsubmit.core.support.names import did_you_mean
from mlsubmit.core.support.safe_io import read_bounded
from mlsubmit.core.support.schema_loader import errors as schema_errors
from mlsubmit.core.support.schema_loader import load_schema, pointer

SELECT_ALL = "all"
SELECT_MEDIAN_WINDOW = "median-window"


@dataclass(frozen=True)
class Implementation:
    repo: Path
    repo_text: str  # as written in the config: recorded in the manifest instead of an absolute path
    rev: str
    path: str
    name: str

    def same_source(self, other: Implementation) -> bool:
        return (self.repo.resolve(), self.rev, self.path) == (other.repo.resolve(), other.rev, other.path)


@dataclass(frozen=True)
class ResultEntry:
    index: int  # position in [[results]], for messages (/results/<index>)
    system: str
    benchmark: str
    logs: tuple[str, ...]
    select: str
    implementation: Implementation | None
    checker_params: tuple[str, ...] = ()  # for results/<system>/<benchmark>/package_checker_params
    upload: int = 1  # which upload <org>_<n> it goes into, when the organisation is split
    ledger: str | None = None  # a run ledger whose runs of this system and benchmark are packaged too


@dataclass(frozen=True)
class PackageConfig:
    path: Path
    base: Path  # the config file's folder: every relative path starts here
    org: str
    ruleset: str
    out: Path
    systems: Path
    results: tuple[ResultEntry, ...]
    full_output: bool = False  # result files hold the run's whole output (TR6.1 "Result files"), not only records
    redaction: Redaction = field(default_factory=Redaction)
    checker_params: tuple[str, ...] = ()  # flags for <org>/package_checker_params, in the config's order
    system_params: dict[str, tuple[str, ...]] = field(default_factory=dict)  # results/<system>/package_checker_params
    uploads: int = 1  # > 1: the organisation is split into uploads <org>_1 ... <org>_<uploads>


def _read(path: Path) -> dict[str, Any]:
    try:
        raw = read_bounded(path, 1 << 20)
    except OSError as exc:
        raise FatalError(f"{path}: cannot read the config: {exc.strerror or exc}") from None
    try:
        data: dict[str, Any] = tomlfile.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise FatalError(f"{path}: the config is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except tomlfile.TOMLDecodeError as exc:
        raise FatalError(f"{path}: not valid TOML: {exc}") from None
    return data


def _count(value: Any) -> int:
    """A count the schema let through as an integer: TOML's `2.0` is one (JSON Schema's integers include it)."""
    return numbers.whole_number(value, 99) or 1


def _validate(data: dict[str, Any], path: Path) -> None:
    errs = schema_errors(data, load_schema("package-config.schema.json"))
    if errs:
        lines = [f"{pointer(e) or '/'}: {e.message}" for e in errs[:20]]
        more = f"\n  ... and {len(errs) - 20} more" if len(errs) > 20 else ""
        raise FatalError(
            f"{path}: the config does not match the package-config schema:\n  " + "\n  ".join(lines) + more
        )


def _implementation(data: dict[str, Any] | None, base: Path) -> Implementation | None:
    if data is None:
        return None
    return Implementation(
        repo=base / data["repo"],
        repo_text=data["repo"],
        rev=data["rev"],
        path=data.get("path", "."),
        name=data["name"],
    )


def _check_consistency(cfg: PackageConfig) -> None:
    seen: dict[tuple[str, str], int] = {}
    impls: dict[tuple[str, str], Implementation] = {}
    for entry in cfg.results:
        key = (entry.system, entry.benchmark)
        if key in seen:
            raise FatalError(
                f"{cfg.path}: /results/{entry.index}: {entry.system}/{entry.benchmark} is already packaged by "
                f"/results/{seen[key]}; give each system and benchmark one entry with all its logs"
            )
        seen[key] = entry.index
        impl = entry.implementation
        if impl is None:
            continue
        other = impls.setdefault((entry.benchmark, impl.name), impl)
        if not other.same_source(impl):
            raise FatalError(
                f"{cfg.path}: /results/{entry.index}/implementation: benchmarks/{entry.benchmark}/implementations/"
                f"{impl.name} is exported twice from different sources; give them different names"
            )


def _check_scopes(cfg: PackageConfig, data: dict[str, Any]) -> None:
    """Folder params name a packaged system; with uploads, every entry names one of them and none is empty."""
    systems = {e.system for e in cfg.results}
    for system in cfg.system_params:
        if system not in systems:
            raise FatalError(f"{cfg.path}: /system_checker_params/{system}: no [[results]] entry packages that system"
                             + did_you_mean(system, sorted(systems)))
    if cfg.uploads == 1:
        stray = [e for e in cfg.results if "upload" in data["results"][e.index] and e.upload != 1]
        if stray:
            raise FatalError(f"{cfg.path}: /results/{stray[0].index}/upload: set `uploads` to split the "
                             "organisation first")
        return
    for entry in cfg.results:
        if "upload" not in data["results"][entry.index] or entry.upload > cfg.uploads:
            raise FatalError(f"{cfg.path}: /results/{entry.index}/upload: with uploads = {cfg.uploads}, every entry "
                             f"names its upload, 1 to {cfg.uploads}")
    empty = sorted(set(range(1, cfg.uploads + 1)) - {e.upload for e in cfg.results})
    if empty:
        raise FatalError(f"{cfg.path}: /uploads: no [[results]] entry goes into upload {empty[0]}")


def _check_out(cfg: PackageConfig) -> None:
    """`out` is replaced as a whole, so it must not hold the config or any input it would destroy."""
    out = cfg.out.resolve()
    inputs = [cfg.path.resolve(), cfg.systems.resolve()]
    inputs += [e.implementation.repo.resolve() for e in cfg.results if e.implementation]
    for item in inputs:
        if item == out or out in item.parents:
            raise FatalError(f"{cfg.path}: `out` ({cfg.out}) contains {item}, which the build would replace")


FULL_OUTPUT_FROM = (6, 1, 0)  # TR6.1 "Result files" (training_policies PR #588)


def _full_output(data: dict[str, Any]) -> tuple[bool, Redaction]:
    """Whole output by default from 6.1.0 on, or when the config asks; what to redact in it."""
    table = data.get("result_files", {})
    default = tuple(int(x) for x in data["ruleset"].split(".")) >= FULL_OUTPUT_FROM
    return (table.get("full_output", default),
            Redaction(paths=tuple(table.get("redact_paths", ())), env=tuple(table.get("redact_env", ()))))


def _checker_params(data: dict[str, Any], path: Path) -> tuple[str, ...]:
    flags = tuple(data.get("checker_params", ()))
    if flags and not org_params.applies(data["ruleset"]):
        raise FatalError(f"{path}: /checker_params: no verify script of ruleset {data['ruleset']} reads "
                         f"{org_params.NAME} (rounds from 2.0 on do); remove the key")
    return flags


def load_config(path: str | Path) -> PackageConfig:
    path = Path(path)
    data = _read(path)
    _validate(data, path)
    base = path.parent
    results = tuple(
        ResultEntry(
            index=i,
            system=r["system"],
            benchmark=r["benchmark"],
            logs=tuple(r.get("logs", ())),
            select=r.get("select", SELECT_ALL),
            implementation=_implementation(r.get("implementation"), base),
            checker_params=tuple(r.get("checker_params", ())),
            upload=_count(r.get("upload", 1)),
            ledger=r.get("ledger"),
        )
        for i, r in enumerate(data["results"])
    )
    cfg = PackageConfig(
        path=path,
        base=base,
        org=data["org"],
        ruleset=data["ruleset"],
        out=base / data["out"],
        systems=base / data.get("systems", "systems"),
        results=results,
    )
    full, redaction = _full_output(data)
    cfg = dataclasses.replace(cfg, full_output=full, redaction=redaction, checker_params=_checker_params(data, path),
                              system_params={k: tuple(v) for k, v in data.get("system_checker_params", {}).items()},
                              uploads=_count(data.get("uploads", 1)))
    _check_consistency(cfg)
    _check_scopes(cfg, data)
    _check_out(cfg)
    return cfg
