"""The severity each finding ends with, and which findings are kept: the profile's levels (per round), then the
project's `mlsubmit.toml [check]` (its levels, select and ignore, then its per-path overrides), then the command
line's `--select`, `--ignore` and `--severity`; then the waivers. A `Policy` is resolved once, before any log is
read (check_config.py's `policy_for`), and `settle` applies it to each finding once, after checking, so cached log
results (which hold the checks' own severities) stay valid under any policy: the cache key does not need it.
"""

from __future__ import annotations

import datetime as dt
import difflib
import fnmatch
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from mlsubmit.checker.base.contract import may_emit
from mlsubmit.checker.base.options import CheckOptions
from mlsubmit.checker.policy.profiles import CodeLevel, ProfileSpec, load
from mlsubmit.checker.policy.waiver_pass import WaiverPass, waiver_pass
from mlsubmit.checker.policy.waivers import Waiver

from mlsubmit.core.codes import catalogue, families, finding
from mlsubmit.core.errors import UsageError
from mlsubmit.core.findings import Finding, Report, Severity


@dataclass(frozen=True)
class Layer:
    """One source of settings: the codes or families it selects, ignores and sets a level for."""

    origin: str  # "mlsubmit.toml [check]", "--severity", ...
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    levels: tuple[tuple[str, Severity], ...] = ()
    paths: tuple[str, ...] = ()  # an override's path globs, absolute (anchored at its mlsubmit.toml's folder)

    def applies(self, path: str) -> bool:
        if not self.paths:
            return True
        where = os.path.abspath(path) if path else ""
        return any(fnmatch.fnmatchcase(where, p) for p in self.paths)


def _matches(code: str, names: Iterable[str]) -> str | None:
    """The most specific of `names` (a code, else its family) that covers `code`."""
    family = code.rstrip("0123456789")
    names = tuple(names)
    return code if code in names else family if family in names else None


_Key = tuple[str, str, str | None, str | None]  # code, path (or ""), field, case: what a decision depends on


@dataclass(frozen=True)
class Decision:
    level: Severity | None  # None: the check's own severity
    origin: str
    practice: str | None = None
    dropped: bool = False


@dataclass(frozen=True)
class RunFiles:
    """What the engine says of a run's log files, so that one pass settles each finding: how many of a log's
    findings (its first) are the log checks' own, the logs whose own errors their folder judges (TREE007/TREE008),
    and the logs checked alone, outside any folder."""

    own: Mapping[str, int] = field(default_factory=dict)
    judged: frozenset[str] = frozenset()
    alone: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Policy:
    """A run's whole policy, resolved before any log is read: the profile (its levels, run_errors, kept_errors,
    note_alone), the layers over it, the waivers (the project's and --waivers files'), the date they expire on and
    the fail-on limit."""

    profile: str = "full"
    layers: tuple[Layer, ...] = field(default=())
    waivers: tuple[Waiver, ...] = field(default=(), compare=False)
    today: dt.date | None = field(default=None, compare=False)  # None: the day it is applied
    rcp_risk_limit: float | None = None  # --fail-on rcp-risk=P, or mlsubmit.toml's; None: RUN009 is information

    @property
    def spec(self) -> ProfileSpec:
        return load(self.profile)

    def decide(self, code: str, round_name: str, path: str = "", field: str | None = None,
               case: str | None = None) -> Decision:
        """What the policy says of `code` in a round, for a finding at `path` (in `field` of its file, of the check's
        `case` there), and where that comes from."""
        setting = self.spec.levels().get(code)
        level = setting.level(round_name) if setting else None
        decision = Decision(level, setting.origin if setting and level else "the catalogue (mlsubmit/core/codes)",
                            setting.practice if setting and level else None)
        own = setting.in_field(field, case) if setting else None
        if setting and own:
            decision = Decision(own.level, f"{setting.origin}, field {own.label()}", own.practice or setting.practice)
        for layer in self.layers:  # in order; within a layer its levels, then what it selects and ignores
            if not layer.applies(path):
                continue
            found = _matches(code, dict(layer.levels))
            if found is not None:
                decision = Decision(dict(layer.levels)[found], layer.origin, dropped=decision.dropped)
            if layer.select:
                chosen = _matches(code, layer.select) is not None
                decision = replace(decision, dropped=not chosen,
                                   origin=decision.origin if chosen else f"{layer.origin} (not selected)")
            if _matches(code, layer.ignore) is not None:
                decision = replace(decision, dropped=True, origin=f"{layer.origin} (ignored)")
        return decision

    def describe(self, code: str, catalogued: Severity) -> list[str]:
        """What `mlsubmit explain CODE` says of the severity in force: the level, per round where it differs, and
        the file, table or flag it comes from."""
        spec, setting = self.spec, self.spec.levels().get(code)
        family = code.rstrip("0123456789").lower()
        lines = [f"the catalogue's severity: {catalogued.value} (mlsubmit/core/codes/{family}.yaml), which a check "
                 "may change for some findings, as the explanation says"]
        if setting is not None:
            rounds = "; ".join(f"{r}: {level.value}" for r, level in setting.rounds)
            others = setting.default.value if setting.default else "the check's own"
            where = f"{others} in every round" if not rounds else f"{rounds}; other rounds: {others}"
            lines.append(f"profile {spec.name} ({setting.origin}): {where}")
            lines.append(f"  why: {setting.source}")
            if setting.practice:
                lines.append(f"  accepted in practice: {setting.practice}")
            lines += _field_lines(setting)
        else:
            lines.append(f"profile {spec.name} ({', '.join(f'tables/profile-{n}.yaml' for n in spec.chain)}): "
                         "sets no level for it")
        for layer in self.layers:
            found = _matches(code, dict(layer.levels))
            if found is not None:
                lines.append(f"{layer.origin}: {dict(layer.levels)[found].value} (as {found})")
            if layer.select and _matches(code, layer.select) is None:
                lines.append(f"{layer.origin}: not selected, so not reported")
            if _matches(code, layer.ignore) is not None:
                lines.append(f"{layer.origin}: ignored, so not reported")
        if code in spec.kept_errors:
            lines.append("a run's own error that stays an error inside an organisation tree: no folder tolerance "
                         "covers it")
        elif spec.run_errors == "folder" and _logs_emit(spec, code):
            lines.append("a run's own errors inside an organisation tree are shown as warnings: its folder judges "
                         "them (TREE007, TREE008)")
        return lines

    def apply(self, report: Report, round_name: str) -> None:
        """Every finding of the report with the levels and selections of the policy (in place); no waivers."""
        self.settle(report, round_name)

    def waiving(self) -> WaiverPass | None:
        """The pass of this policy's waivers over a run (None without waivers); one for all the rounds of a run."""
        return waiver_pass(self.waivers, today=self.today)

    def waive(self, report: Report) -> None:
        """The waivers alone over a report whose findings keep the severities they were made with (`advise`'s
        advice), in place: each finding once, then the waivers' own findings (WVR)."""
        waiving = self.waiving()
        if waiving is None:
            return
        for path, found in report.files.items():
            report.files[path] = [waiving.waive(f) for f in found]
        report.tree = [waiving.waive(f) for f in report.tree]
        report.extend(waiving.own_findings())

    def settle(self, report: Report, round_name: str, logs: RunFiles | None = None,
               waiving: WaiverPass | None = None) -> None:
        """Every finding of the report as the policy has it, each in one pass (in place): a log's own error that
        its folder judges shown as a warning (not the profile's kept_errors), the note of a log checked alone
        (POL001) added after its own findings, the level and selection of the profile and layers, then the
        waivers. The waivers' own findings (WVR) are the caller's to add, once the pass has seen every report."""
        logs = logs or RunFiles()
        memo: dict[_Key, Decision] = {}
        plain = not any(layer.paths for layer in self.layers)
        kept = self.spec.kept_errors
        for path, found in report.files.items():
            own = logs.own.get(path, 0)
            head = [_judged(f, kept) for f in found[:own]] if path in logs.judged else found[:own]
            note = [_alone_note(path, head)] if path in logs.alone and _errors(head) else []
            report.files[path] = self._applied([*head, *note, *found[own:]], round_name, memo, plain, waiving)
        report.tree = self._applied(report.tree, round_name, memo, plain, waiving)

    def _applied(self, found: Sequence[Finding], round_name: str, memo: dict[_Key, Decision], plain: bool,
                 waiving: WaiverPass | None) -> list[Finding]:
        out = []
        for f in found:
            field = field_of(f)
            key = (f.code, "" if plain else f.path, field, f.case)
            decision = memo.get(key)
            if decision is None:
                decision = memo[key] = self.decide(f.code, round_name, f.path, field, f.case)
            if decision.dropped:
                continue
            settled = _with_level(f, decision)
            out.append(waiving.waive(settled) if waiving is not None else settled)
        return out

    def still_errors(self, codes: Iterable[str], round_name: str, path: str) -> tuple[str, ...]:
        """Of a run's error codes, those the policy leaves errors (a code it makes milder, or drops, does not
        make the run non-compliant in its folder's count, TREE007)."""
        out = []
        for code in codes:
            decision = self.decide(code, round_name, path)
            if not decision.dropped and decision.level in (None, Severity.ERROR):
                out.append(code)
        return tuple(out)


def field_of(f: Finding) -> str | None:
    """The field of its file a finding points into: its JSON pointer's first name (RFC 6901 escapes undone)."""
    if not f.pointer or not f.pointer.startswith("/"):
        return None
    return f.pointer[1:].split("/", 1)[0].replace("~1", "/").replace("~0", "~")


def _field_lines(setting: CodeLevel) -> list[str]:
    """The profile's levels per field (and case), each with its source: what `explain CODE` shows of them."""
    if not setting.fields:
        return []
    lines = ["  per field of the file (the finding's JSON pointer); other fields as above:"]
    for f in setting.fields:
        lines.append(f"  - {f.label()}: {f.level.value}; why: {f.source}")
        if f.practice and f.level is not Severity.ERROR:
            lines.append(f"    accepted in practice: {f.practice}")
    return lines


def _judged(f: Finding, kept: frozenset[str]) -> Finding:
    """A run's own error inside a tree is a warning: it counts through its folder's olympic tolerance (TREE007,
    as in the package checker); the profile's `kept_errors` stay errors, as no tolerance covers them (RULE010)."""
    return replace(f, severity=Severity.WARNING) if f.severity is Severity.ERROR and f.code not in kept else f


def _errors(found: Iterable[Finding]) -> list[str]:
    return sorted({f.code for f in found if f.severity is Severity.ERROR})


def _alone_note(path: str, own: Sequence[Finding]) -> Finding:
    """POL001: a log checked outside its tree keeps its errors, and is told what its folder will make of them."""
    return finding("POL001", path, f"checked alone, this run does not comply ({', '.join(_errors(own))}); in its "
                   "results folder it counts as one non-compliant run, and olympic scoring accepts one per folder "
                   "(four of unet3d's 40), judged there as TREE008 or TREE007")


def _with_level(f: Finding, decision: Decision) -> Finding:
    if decision.level is None or decision.level is f.severity:
        return f
    milder = decision.level.rank > f.severity.rank
    message = f"{f.message}; accepted in practice: {decision.practice}" if milder and decision.practice else f.message
    return replace(f, severity=decision.level, message=message)


# --- reading settings: codes, families and levels as a user writes them ----------------------------------------


def code_names(values: Iterable[str], origin: str) -> tuple[str, ...]:
    """Codes or families as given (case-insensitive), checked against the catalogue: UsageError with a guess."""
    values = tuple(values)
    if not values:
        return ()  # the catalogue read only when a name is to be checked: it is not needed before a log is read
    known = set(catalogue()) | set(families())
    out = []
    for value in values:
        name = str(value).strip().upper()
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
            guess = f"; did you mean {close[0]}?" if close else "; `mlsubmit explain` lists them"
            raise UsageError(f"{origin}: no finding code or family {value!r}{guess}")
        out.append(name)
    return tuple(out)


LEVELS = tuple(s.value for s in Severity)


def level_of(value: object, origin: str) -> Severity:
    text = str(value).strip().lower()
    if text not in LEVELS:
        close = difflib.get_close_matches(text, LEVELS, n=1, cutoff=0.5)
        guess = f"; did you mean {close[0]}?" if close else ""
        raise UsageError(f"{origin}: no severity {value!r} (one of {', '.join(LEVELS)}){guess}")
    return Severity(text)


def severity_pairs(values: Iterable[str], origin: str) -> tuple[tuple[str, Severity], ...]:
    """`CODE=LEVEL` items (--severity), checked."""
    out = []
    for item in values:
        code, sep, level = str(item).partition("=")
        if not sep:
            raise UsageError(f"{origin} {item!r}: write CODE=LEVEL, for example SYS016=error")
        out.append((code_names([code], origin)[0], level_of(level, f"{origin} {code}")))
    return tuple(out)


def _logs_emit(spec: ProfileSpec, code: str) -> bool:
    """Whether one of the profile's log checks may emit `code`."""
    return any(may_emit(name, code) for name in spec.names("log"))


def in_force(options: CheckOptions) -> Policy:
    """The policy applied to a check run's report: the options' own, or the profile's (over the layers of one
    made for another profile)."""
    given = options.policy
    if isinstance(given, Policy):
        return given if given.profile == options.profile.value else replace(given, profile=options.profile.value)
    return Policy(options.profile.value)
