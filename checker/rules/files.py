"""Load the compliance rule files mlperf-logging ships, as data, once per process.

Each `training_X.Y.Z/` folder of `mlperf_logging/compliance_checker` holds YAML files of KEY/BEGIN/END records.
We read them with PyYAML's BaseLoader (as mlperf-logging does: every scalar a string, no objects built) and compile
every snippet once through the whitelist in `safe_eval`. Files are found by listing the folder; a name a rule asks
for is looked up in that listing and never joined onto a path.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mlsubmit.checker.rules.safe_eval import Evaluator, Mode, Snippet, compile_snippet, conjunction
from mlsubmit.checker.upstream import installed

from mlsubmit.core.support.datafiles import derived_data

USAGE = "training"
_RULESET_RE = re.compile(r"^training_(\d+)\.(\d+)\.(\d+)$")
_EVAL_FIELDS = {"CHECK", "ATLEAST_ONE_CHECK", "FIRST_CHECK"}


class RulesetError(ValueError):
    """An unknown ruleset, or a rule file that is not shaped as mlperf-logging's rule files are."""


def rules_root() -> Path:
    folder = installed.rules_folder()
    if folder is None:
        raise RulesetError("mlperf-logging is not installed")
    return folder


# Rounds newer than the oldest mlperf-logging we support -> the oldest release tested here that ships their rules.
_SHIPPED_FROM = {"6.0.0": "4.1.50", "6.1.0": "4.1.60"}


def newer_than_installed(version: str) -> bool:
    """A round whose rules a newer mlperf-logging than the installed one ships."""
    return version in _SHIPPED_FROM


def unknown_ruleset(version: str) -> str:
    """Why `version` cannot be checked with the installed mlperf-logging, said alike by every command."""
    try:
        ships = ", ".join(available_rulesets())
    except RulesetError as exc:
        return str(exc)
    version_installed = installed.version()
    if version in _SHIPPED_FROM:
        return (f"mlperf-logging {version_installed} has no rules for ruleset {version} (it ships {ships}); install "
                f"mlperf-logging>={_SHIPPED_FROM[version]} to check this round")  # fmt: skip
    return f"unknown ruleset {version!r}; mlperf-logging {version_installed} ships {ships}"


@functools.cache
def available_rulesets() -> tuple[str, ...]:
    """Training rulesets from 1.0.0 on that the installed mlperf-logging ships, oldest first."""
    found = []
    for entry in rules_root().iterdir():
        m = _RULESET_RE.match(entry.name)
        if m and entry.is_dir() and int(m.group(1)) >= 1:
            found.append(tuple(int(x) for x in m.groups()))
    return tuple(".".join(map(str, v)) for v in sorted(found))


@dataclass(frozen=True)
class KeyRule:
    name: str
    req: str | None
    pre: tuple[Snippet, ...] = ()
    check: tuple[Snippet, ...] = ()
    post: tuple[Snippet, ...] = ()
    first_check: tuple[Snippet, ...] = ()
    atleast_one: Snippet | None = None
    all_checks: Snippet | None = None  # `check` as one conjunction, when they only read (safe_eval.conjunction)
    # For a rule whose per-record work only reads (no PRE/POST/FIRST_CHECK, not a submission_* key checked once,
    # checks and ATLEAST_ONE_CHECK that only read): its checks' conjunction and its ATLEAST_ONE_CHECK as safe_eval's
    # evaluators (None where it has none). The engine's fast path for the bulk of records.
    plain: tuple[Evaluator | None, Evaluator | None] | None = None


@dataclass(frozen=True)
class RuleFile:
    name: str  # as rules name it: "training_1.0.0/closed_bert.yaml"
    keys: dict[str, KeyRule] = field(default_factory=dict)
    begin: tuple[Snippet, ...] = ()
    end_pre: tuple[Snippet, ...] = ()
    end_check: tuple[Snippet, ...] = ()

    @functools.cached_property
    def once_keys(self) -> frozenset[str]:
        """Keys of REQ EXACTLY_ONE: the one requirement that reads the values (its message lists them)."""
        return frozenset(k for k, r in self.keys.items() if r.req == "EXACTLY_ONE")

    @functools.cached_property
    def reads_whole_log(self) -> bool:
        """Whether a snippet reads `loglines`: such a file cannot run on a stream (engine.LogRun)."""
        snips = [*self.begin, *self.end_pre, *self.end_check]
        for rule in self.keys.values():
            snips += [*rule.pre, *rule.check, *rule.post, *rule.first_check, *filter(None, [rule.atleast_one])]
        return any("loglines" in s.source for s in snips)

    @functools.cached_property
    def requirements(self) -> tuple[tuple[tuple[str, str, int], ...], tuple[tuple[str, ...], ...]]:
        """The REQ fields, read once: (key, REQ as written, n) for each key with a count to meet (exactly one, or at
        least n), and the sorted groups of AT_LEAST_ONE_OR keys of which one must appear. OPTIONAL and unknown forms
        ask nothing."""
        counts: list[tuple[str, str, int]] = []
        groups: set[tuple[str, ...]] = set()
        for key, rule in self.keys.items():
            req = rule.req
            if req in ("EXACTLY_ONE", "AT_LEAST_ONE"):
                counts.append((key, req, 1))
            elif req is not None and req.startswith("AT_LEAST(") and req.endswith(")"):
                n = int(req[len("AT_LEAST(") : -1])
                counts.append((key, f"AT_LEAST({n})", n))
            elif req is not None and req.startswith("AT_LEAST_ONE_OR(") and req.endswith(")"):
                others = [a.strip() for a in req[len("AT_LEAST_ONE_OR(") : -1].split(",")]
                groups.add(tuple(sorted({key, *others})))
        return tuple(counts), tuple(sorted(groups))


def _snippets(value: object, mode: Mode, origin: str) -> tuple[Snippet, ...]:
    items = value if isinstance(value, list) else [value]
    if not all(isinstance(x, str) for x in items):
        raise RulesetError(f"{origin}: a snippet is not text")
    return tuple(_compiled(x.strip(), mode) for x in items)  # type: ignore[union-attr]


@functools.lru_cache(maxsize=4096)
def _compiled(text: str, mode: Mode) -> Snippet:
    """Rule files repeat their snippets (284 in the 1.0.0 and 1.1.0 files, 88 different): each is vetted and
    compiled once. Snippets are immutable and hold no file name; findings name the rule file themselves."""
    return compile_snippet(text, mode, origin="<rule snippet>")


@functools.lru_cache(maxsize=1024)
def _conjunction(checks: tuple[Snippet, ...]) -> Snippet | None:
    return conjunction(checks)


def _key_rule(rec: dict[str, object], origin: str) -> KeyRule:
    name = rec.get("NAME")
    if not isinstance(name, str):
        raise RulesetError(f"{origin}: KEY without NAME")
    where = f"{origin}:{name}"

    def get(field_name: str) -> tuple[Snippet, ...]:
        if field_name not in rec:
            return ()
        mode: Mode = "eval" if field_name in _EVAL_FIELDS else "exec"
        return _snippets(rec[field_name], mode, f"{where}:{field_name}")

    req = rec.get("REQ")
    atleast = get("ATLEAST_ONE_CHECK")
    checks = get("CHECK")
    rule = KeyRule(
        name=name,
        req=req if isinstance(req, str) else None,
        pre=get("PRE"),
        check=checks,
        all_checks=_conjunction(checks),
        post=get("POST"),
        first_check=get("FIRST_CHECK"),
        atleast_one=atleast[0] if atleast else None,
    )
    if rule.pre or rule.post or rule.first_check or "submission_" in name:
        return rule
    joined = rule.all_checks if rule.all_checks is not None and rule.all_checks.code is not None else None
    if rule.check and joined is None:  # checks that may write: the general path
        return rule
    at_least = rule.atleast_one
    if at_least is not None and (conjunction((at_least,)) is None or at_least.code is None):
        return rule
    return replace(rule, plain=(_evaluator(joined), _evaluator(at_least)))


def _evaluator(snippet: Snippet | None) -> Evaluator | None:
    return snippet.evaluate if snippet is not None else None


def load_rule_data(text: str) -> Any:
    """The YAML as mlperf-logging reads it: BaseLoader, every scalar a string, no objects built."""
    # lazy: PyYAML: ~40 ms to import; rule files come from the validated cache after the first run
    import yaml

    try:  # the C loader is several times faster; BaseLoader semantics either way
        loader: Any = yaml.CBaseLoader
    except AttributeError:  # pragma: no cover - PyYAML without libyaml
        loader = yaml.BaseLoader
    return yaml.load(text, Loader=loader)


def _text(raw: bytes) -> str:
    """The file's text as read_text() gives it (universal newlines)."""
    return raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def build_rule_file(data: Any, name: str) -> RuleFile:
    """Records of a parsed rule file, every snippet vetted by the whitelist and compiled."""
    if data is None:
        return RuleFile(name)
    if not isinstance(data, list):
        raise RulesetError(f"{name}: top level is not a list of records")
    keys: dict[str, KeyRule] = {}
    begin: tuple[Snippet, ...] = ()
    end_pre: tuple[Snippet, ...] = ()
    end_check: tuple[Snippet, ...] = ()
    for item in data:
        if not isinstance(item, dict) or len(item) != 1:
            raise RulesetError(f"{name}: a record is not a one-key mapping")
        (kind, rec), = item.items()
        if not isinstance(rec, dict):
            raise RulesetError(f"{name}: {kind} record is not a mapping")
        if kind == "KEY":
            rule = _key_rule(rec, name)
            keys[rule.name] = rule  # a later record for the same key replaces the earlier, as upstream
        elif kind == "BEGIN":
            begin = _snippets(rec.get("CODE", ""), "exec", f"{name}:BEGIN")
        elif kind == "END":
            end_pre = _snippets(rec["PRE"], "exec", f"{name}:END:PRE") if "PRE" in rec else ()
            end_check = _snippets(rec["CHECK"], "eval", f"{name}:END:CHECK") if "CHECK" in rec else ()
        else:
            raise RulesetError(f"{name}: unknown record kind {kind}")
    return RuleFile(name, keys, begin, end_pre, end_check)


@dataclass
class Ruleset:
    """One round's rule files, parsed and compiled on first use and kept for the life of the process."""

    version: str
    folder: Path
    names: frozenset[str]
    _files: dict[str, RuleFile] = field(default_factory=dict)

    @property
    def prefix(self) -> str:
        return f"{USAGE}_{self.version}/"

    def resolve(self, requested: str) -> tuple[str, str] | None:
        """(ruleset, file) for a rule file a rule asks for by name, or None; the name is never a path.

        mlperf-logging's own rule files chain into an older round's folder in places (1.1.0 open_common.yaml
        asks for training_1.0.0/open_<benchmark>.yaml), so any shipped training ruleset may be named, but only
        as `training_X.Y.Z/<file>.yaml` with a file that is in that folder's listing.
        """
        folder, sep, bare = requested.partition("/")
        if not sep or not folder.startswith(f"{USAGE}_") or "/" in bare or "\\" in bare or ".." in bare:
            return None
        version = folder[len(USAGE) + 1 :]
        if version not in available_rulesets():
            return None
        owner = self if version == self.version else get_ruleset(version)
        return (version, bare) if bare in owner.names else None

    def file(self, bare: str, version: str | None = None) -> RuleFile:
        if version is not None and version != self.version:
            return get_ruleset(version).file(bare)
        if bare not in self._files:
            if bare not in self.names:
                raise RulesetError(f"{self.prefix}{bare} is not a rule file of this ruleset")
            raw = (self.folder / bare).read_bytes()
            # the parsed YAML (strings, lists, mappings) is kept as data; its snippets are vetted again each time
            data = derived_data("rules", b"BaseLoader\0" + raw, lambda: load_rule_data(_text(raw)))
            self._files[bare] = build_rule_file(data, self.prefix + bare)
        return self._files[bare]


@functools.cache
def get_ruleset(version: str) -> Ruleset:
    if version not in available_rulesets():
        raise RulesetError(unknown_ruleset(version))
    folder = rules_root() / f"{USAGE}_{version}"
    names = frozenset(p.name for p in folder.iterdir() if p.suffix == ".yaml" and p.is_file())
    return Ruleset(version, folder, names)
