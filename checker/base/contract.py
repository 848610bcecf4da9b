"""The contract every check keeps: a registered name, a stage (STAGES, the order a check run takes them in) and how
it is run. The codes it may emit are those whose catalogue entry names it (`emitted_by` in
mlsubmit/core/codes/*.yaml). The registry of the checks is the engine's (checker/engine/checks.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from mlsubmit.core.codes import catalogue, info

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions
    from mlsubmit.checker.base.targets import LogRef
    from mlsubmit.checker.logs.reader import ParsedLog, Record
    from mlsubmit.checker.logs.sinks import WholeLogReader

    from mlsubmit.core.findings import Finding

STAGES = ("log", "prepare", "code", "org", "raw", "file")  # raw: a folder of raw job output, judged as run sets;
# file: a system description given on its own
PREPARING = ("prepare", "code")  # work done for a later stage of the same check, which reports its findings


class Sink(Protocol):
    def feed(self, batch: list[Record]) -> None: ...


@dataclass(frozen=True)
class Check:
    """One check: its registered name, its stage, the codes it may emit and how to run it."""

    name: str
    stage: str  # one of STAGES
    load: Callable[[], Callable[..., Any]]  # imports the function that does the work
    # log checks only: the per-log state fed as the log is read, and the findings it gives once read
    start: Callable[[LogRef, CheckOptions, WholeLogReader], Any] = field(default=lambda ref, options, whole: None)
    finish: Callable[[Any, ParsedLog, CheckOptions, list[Finding]], list[Finding]] | None = None

    def function(self) -> Callable[..., Any]:
        return self.load()

    def emits(self, code: str) -> bool:
        """Whether the check may emit `code`: its catalogue entry names it (only that code's family is loaded)."""
        return self.stage not in PREPARING and may_emit(self.name, code)

    @property
    def codes(self) -> frozenset[str]:
        """Every code the check may emit (the whole catalogue is read)."""
        return emitted_by(self.name) if self.stage not in PREPARING else frozenset()


def may_emit(name: str, code: str) -> bool:
    """Whether the check or command of that name may emit `code`: its catalogue entry names it (only that code's
    family is loaded)."""
    try:
        return name in info(code).emitted_by
    except KeyError:  # a code the catalogue does not hold is emitted by no check
        return False


def emitted_by(name: str) -> frozenset[str]:
    """The codes whose catalogue entry names this check or command."""
    return frozenset(code for code, entry in catalogue().items() if name in entry.emitted_by)
