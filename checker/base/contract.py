"""The contract every check keeps: a registered name, a stage (STAGES, the order a check run takes them in), the
codes it may emit, declared beside it, and how it is run, as one Protocol per stage. The registry of the checks is
the engine's (checker/engine/checks.py): it holds each check's declaration, and the catalogue's view of which checks
emit a code (`emitted_by`) is worked out from those declarations there."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from mlsubmit.core.codes import family_codes

if TYPE_CHECKING:
    from pathlib import Path

    from mlsubmit.checker.base.options import CheckOptions, CodeTask
    from mlsubmit.checker.base.targets import LogRef, OrgTree, RawFolder
    from mlsubmit.checker.logs.facts import LogFacts
    from mlsubmit.checker.logs.reader import ParsedLog
    from mlsubmit.checker.logs.sinks import WholeLogReader

    from mlsubmit.core.findings import Finding

STAGES = ("log", "prepare", "code", "org", "raw", "file")  # raw: a folder of raw job output, judged as run sets;
# file: a system description given on its own


_State = TypeVar("_State")


class LogCheck(Protocol[_State]):
    """A check of one log, fed as the reader streams it: `start` gives its state for the log (a reader sink, or
    None when it reads only what the reader counts), `finish` adds its findings to those found so far."""

    def start(self, ref: LogRef, options: CheckOptions, whole: WholeLogReader, /) -> _State: ...

    def finish(self, state: _State, log: ParsedLog, options: CheckOptions, found: list[Finding], /
               ) -> list[Finding]: ...


class PrepareCheck(Protocol):
    """Work of an org check that needs no log, done beside the log checks; kept on `org.prepared`."""

    def __call__(self, org: OrgTree, options: CheckOptions, /) -> None: ...


class CodeCheck(Protocol):
    """The files of an organisation tree the worker pool scans beside the logs (the secret scan)."""

    def __call__(self, org: OrgTree, options: CheckOptions, /) -> list[CodeTask]: ...


class OrgCheck(Protocol):
    """A check of an organisation tree, given the facts of its logs (each read once, by display path)."""

    def __call__(self, org: OrgTree, facts: Mapping[str, LogFacts], options: CheckOptions, /) -> list[Finding]: ...


class RawCheck(Protocol):
    """A check of a folder of raw job output, judged as run sets."""

    def __call__(self, raw: RawFolder, facts: Mapping[str, LogFacts], options: CheckOptions, /) -> list[Finding]: ...


class FileCheck(Protocol):
    """A check of a system description given on its own."""

    def __call__(self, path: Path, display: str, ruleset: str, /) -> list[Finding]: ...


Run = TypeVar("Run", covariant=True)


def no_codes() -> frozenset[str]:
    return frozenset()


@dataclass(frozen=True)
class Check(Generic[Run]):
    """One check at one stage: its registered name, the codes it declares, and how to load what runs it. Both are
    loaded when first asked for, so a check's module, and its heavy imports (jsonschema, SQLite, numpy), cost a
    check run that does not run it nothing; its declaration sits beside it in its module all the same."""

    name: str
    stage: str  # one of STAGES
    load: Callable[[], Run]
    declares: Callable[[], frozenset[str]] = no_codes  # the codes it may emit (a preparation's: none, its org check's)

    def function(self) -> Run:
        return self.load()

    @property
    def declared(self) -> frozenset[str]:
        """Its declaration as written: codes, and families named whole."""
        return self.declares()

    def emits(self, code: str) -> bool:
        return covers(self.declared, code)

    @property
    def codes(self) -> frozenset[str]:
        """Every code the check may emit, a whole family declared read from the catalogue."""
        return expanded_codes(self.declared)


def covers(declared: frozenset[str], code: str) -> bool:
    """Whether a declaration holds `code`: named, or its whole family named ("SYS": every SYS code, for a family
    one check or command emits alone, so a new code of it needs no line in the declaration)."""
    return code in declared or code.rstrip("0123456789") in declared


def expanded_codes(declared: frozenset[str]) -> frozenset[str]:
    """The codes a declaration holds, each family named read from the catalogue (only those families load)."""
    out = {code for code in declared if not code.isalpha()}
    for family in (code for code in declared if code.isalpha()):
        out |= set(family_codes(family))
    return frozenset(out)


# The codes each check and command declares, by name: the registry (checker/engine/checks.py) hands them over
# as it is imported (the checker package imports it first), so a module under the engine, such as the policy, can
# ask what a check may emit without importing the engine. Each is read when first asked for.
_DECLARED: dict[str, list[Callable[[], frozenset[str]]]] = {}


def declare(name: str, codes: Callable[[], frozenset[str]]) -> None:
    """Record that the check or command `name` may emit `codes()` (besides what it declared at other stages)."""
    _DECLARED.setdefault(name, []).append(codes)


def may_emit(name: str, code: str) -> bool:
    """Whether the check or command of that name declares `code`."""
    return any(covers(codes(), code) for codes in _DECLARED.get(name, ()))
