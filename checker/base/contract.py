"""The contract every check keeps: a registered name, a stage (STAGES, the order a check run takes them in), the
codes it may emit, and how it is run. The registry of the checks is the engine's (checker/run/checks.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions
    from mlsubmit.checker.base.targets import LogRef
    from mlsubmit.checker.logs.reader import ParsedLog, Record
    from mlsubmit.checker.logs.sinks import WholeLogReader

    from mlsubmit.core.findings import Finding

STAGES = ("log", "prepare", "code", "org", "raw")  # raw: a folder of raw job output, judged as run sets


class Sink(Protocol):
    def feed(self, batch: list[Record]) -> None: ...


@dataclass(frozen=True)
class Check:
    """One check: its registered name, its stage, the codes it may emit and how to run it."""

    name: str
    stage: str  # one of STAGES
    codes: frozenset[str]
    load: Callable[[], Callable[..., Any]]  # imports the function that does the work
    # log checks only: the per-log state fed as the log is read, and the findings it gives once read
    start: Callable[[LogRef, CheckOptions, WholeLogReader], Any] = field(default=lambda ref, options, whole: None)
    finish: Callable[[Any, ParsedLog, CheckOptions, list[Finding]], list[Finding]] | None = None

    def function(self) -> Callable[..., Any]:
        return self.load()
