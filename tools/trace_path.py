"""The path of one finding: `mlsubmit check LOG` run in this process on a made log with one HP001, traced.

    python tools/trace_path.py [--log LOG] [--json]

Run it with the interpreter of the worktree to measure (its venv's python: that worktree's mlsubmit is imported).
Without --log it first writes the log in a child process (tests/fixtures/synth.py, which writes with mlperf-logging's
mllog): a ResNet-50 run of training 1.0.0 whose `lars_opt_momentum` is 0.5, one HP001 (and the POL001 note of a log
checked alone); the child keeps the imports of making it out of the count. The command is
`mlsubmit check --ruleset 1.0.0 LOG` plus any arguments given after `--`. Give the same --log to compare worktrees.

What it counts, from the import of `mlsubmit.cli` to the command's return (the interpreter's own start-up is not
counted):
- calls: every `call` event `sys.setprofile` reports, that is every Python frame entered: a function or method, a
  module body run by an import, a comprehension, a generator or coroutine started or resumed. Calls into C
  (`c_call`) are not calls here. "project calls" are the calls whose code lives in the project's source
  (`mlsubmit/` and `checker/` of the worktree), whoever calls them.
- first log byte: the index of the call during which the log is first opened for reading (an audit hook on the
  `open` event with the log's path; nothing reads a file without opening it), and its share of all calls (every
  open of the log is listed, `log_opens`, with the project functions that made it); also
  counted in project calls alone. The calls before it are split by what they serve: imports (a call inside any
  module's body), the command line (argparse and the parser's building), the command's own work (its `run`:
  configuration, policy, discovery) and other; and the first byte is also given among the calls outside imports.
- files on the path: the project's source files with at least one call.
- hops: project calls whose caller frame is in another project file (a call within one file is not a hop).
- policy passes: how many times the finding is handed to policy or waiver code: outermost calls (not made from
  policy code) into `checker/policy/`, `mlsubmit/cli/waiver_options.py` or the engine's severity steps
  (`_demote_run_errors`, `_demote_set_errors`, `_note_alone`, `_policed`; after issue 56: `_judged_sets`,
  `_run_files`) whose arguments hold the finding: the HP001 Finding itself, a list, dict, Report or dataclass (a
  check run, a log's facts) holding it, or the code "HP001" (a run's error codes), but not the policy's own
  settings (a waiver or layer naming HP001, the options and policy that hold them). Each pass is listed with the
  function it entered.

Exit 0 with the figures printed (or as JSON with --json); 1 when the command's text report does not name HP001
(`hp001_reported`: how many times it does; the POL001 note names it too).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

CODE = "HP001"
SETTINGS = {"Waiver", "Layer", "Policy", "CheckOptions", "_Index", "WaiverPass"}
POLICY_STEPS = {"_demote_run_errors", "_demote_set_errors", "_note_alone", "_policed", "_judged_sets", "_run_files"}
MAKE_LOG = (
    "import sys; from tests.fixtures.synth import write_run; "
    "write_run(sys.argv[1], benchmark='resnet', ruleset='1.0.0', hyperparameters={'lars_opt_momentum': 0.5})"
)


def made_log(folder: Path) -> Path:
    """A log with one HP001, written by a child process from this checkout's fixtures."""
    log = folder / "result_0.txt"
    root = Path(__file__).resolve().parent.parent
    subprocess.run([sys.executable, "-c", MAKE_LOG, str(log)], cwd=root, check=True)
    return log


class Trace:
    """What the profile hook and the audit hook saw."""

    def __init__(self, roots: tuple[str, ...], log: str) -> None:
        self.roots = roots
        self.log = log
        self.calls = 0
        self.project_calls = 0
        self.first_read: int | None = None
        self.first_read_project: int | None = None
        self.work_calls = 0  # calls not inside a module's body
        self.opens: list[str] = []  # each open of the log: its call indexes, the project function that opened it
        self.first_read_work: int | None = None
        self.files: set[str] = set()
        self.hops = 0
        self.passes: list[str] = []
        self.before: dict[str, int] = {"imports": 0, "command line": 0, "command": 0, "other": 0}
        self._own: dict[str, str | None] = {}  # co_filename -> project file (relative) or None
        self._policy: dict[str, bool] = {}

    def project_file(self, filename: str) -> str | None:
        known = self._own.get(filename, "?")
        if known != "?":
            return known
        real = os.path.realpath(filename)
        found = next((os.path.relpath(real, os.path.dirname(r)) for r in self.roots if real.startswith(r + os.sep)),
                     None)
        self._own[filename] = found
        return found

    def is_policy(self, frame: FrameType) -> bool:
        rel = self.project_file(frame.f_code.co_filename)
        if rel is None:
            return False
        if frame.f_code.co_name in POLICY_STEPS:
            return True
        known = self._policy.get(rel)
        if known is None:
            known = self._policy[rel] = rel.startswith("checker/policy/") or rel.endswith("cli/waiver_options.py")
        return known

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        self.calls += 1
        kind = _kind(frame)
        if kind != "imports":
            self.work_calls += 1
        if self.first_read is None:
            self.before[kind] += 1
        rel = self.project_file(frame.f_code.co_filename)
        if rel is None:
            return
        self.project_calls += 1
        self.files.add(rel)
        caller = frame.f_back
        origin = self.project_file(caller.f_code.co_filename) if caller is not None else None
        if origin is not None and origin != rel:
            self.hops += 1
        if self.is_policy(frame) and not (caller is not None and self.is_policy(caller)) and _holds(frame.f_locals):
            self.passes.append(f"{rel}:{frame.f_code.co_name}")

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        if event != "open" or not args or not isinstance(args[0], (str, Path)):
            return
        mode, flags = args[1], args[2]
        reads = (isinstance(mode, str) and "r" in mode) or (mode is None and isinstance(flags, int)
                                                            and flags & (os.O_WRONLY | os.O_RDWR) == 0)
        if not reads or os.path.realpath(args[0]) != self.log:
            return
        self.opens.append(f"call {self.calls} (project call {self.project_calls}): {self._opener()}")
        if self.first_read is None:
            self.first_read, self.first_read_project = self.calls, self.project_calls
            self.first_read_work = self.work_calls

    def _opener(self) -> str:
        """The innermost project function on the stack and the one that called it (what opened the log)."""
        seen: FrameType | None = sys._getframe(2)
        names: list[str] = []
        while seen is not None and len(names) < 2:
            rel = self.project_file(seen.f_code.co_filename)
            if rel is not None:
                names.append(f"{rel}:{seen.f_code.co_name}")
            seen = seen.f_back
        return " <- ".join(names)


def _kind(frame: FrameType) -> str:
    """What a call before the first log byte serves: an import (inside any module's body), the command line (argparse,
    the parser's building), the command's own work (the command's `run`: configuration, policy, discovery), other."""
    seen: FrameType | None = frame
    kind = "other"
    while seen is not None:
        code = seen.f_code
        if code.co_name == "<module>" and seen.f_globals.get("__name__") != "__main__":
            return "imports"
        if kind == "other" and (code.co_name == "build_parser" or code.co_filename.endswith("argparse.py")):
            kind = "command line"
        if kind == "other" and code.co_name == "run" and "commands" in code.co_filename:
            kind = "command"
        seen = seen.f_back
    return kind


def _holds(values: Any, depth: int = 0) -> bool:
    """Whether the arguments reach the HP001 finding (or its code), a few containers or dataclasses deep."""
    if depth > 6:
        return False
    if isinstance(values, str) or type(values).__name__ in SETTINGS:  # a waiver naming the code is not the finding
        return values == CODE
    if getattr(values, "code", None) == CODE and hasattr(values, "severity"):
        return True
    if hasattr(values, "files") and hasattr(values, "tree"):  # a Report
        return _holds(list(values.files.values()), depth + 1) or _holds(values.tree, depth + 1)
    if hasattr(values, "__dataclass_fields__") and not isinstance(values, type):  # a CheckRun, its results, facts
        return any(_holds(getattr(values, name, None), depth + 1) for name in values.__dataclass_fields__)
    if isinstance(values, dict):
        return any(_holds(v, depth + 1) for v in list(values.values())[:10_000])
    if isinstance(values, (list, tuple, set, frozenset)):
        return any(_holds(v, depth + 1) for v in list(values)[:10_000])
    return False


def traced(log: Path, argv: list[str]) -> tuple[Trace, int, str]:
    """Run `mlsubmit check` in this process under both hooks: (trace, exit code, what it printed)."""
    roots = tuple(os.path.realpath(p) for p in _source_roots())
    trace = Trace(roots, os.path.realpath(log))
    sys.addaudithook(trace.audit)  # stays for the process: it checks a flag first
    out = io.StringIO()
    old_argv = sys.argv
    sys.argv = ["mlsubmit", "check", "--ruleset", "1.0.0", *argv, str(log)]
    sys.setprofile(trace.profile)
    try:
        with contextlib.redirect_stdout(out):
            console: Callable[[], int] = __import__("mlsubmit.cli", fromlist=["console"]).console
            code = console()
    finally:
        sys.setprofile(None)
        sys.argv = old_argv
    return trace, code, out.getvalue()


def _source_roots() -> list[str]:
    """The project's two source folders of the mlsubmit that will be imported (found without importing it)."""
    import importlib.util

    spec = importlib.util.find_spec("mlsubmit")
    if spec is None or spec.origin is None:
        raise SystemExit("trace_path: mlsubmit is not importable with this interpreter")
    package = Path(spec.origin).resolve().parent
    return [str(package), str(package.parent / "checker")]


def figures(trace: Trace, code: int, printed: str) -> dict[str, Any]:
    first = trace.first_read
    return {
        "exit_code": code,
        "hp001_reported": printed.count(CODE),
        "calls": trace.calls,
        "project_calls": trace.project_calls,
        "first_log_byte_call": first,
        "first_log_byte_share": round(first / trace.calls, 4) if first is not None and trace.calls else None,
        "first_log_byte_project_call": trace.first_read_project,
        "calls_outside_imports": trace.work_calls,
        "first_log_byte_outside_imports": trace.first_read_work,
        "before_first_byte": trace.before,
        "log_opens": trace.opens,
        "files_on_path": len(trace.files),
        "hops": trace.hops,
        "policy_passes": len(trace.passes),
        "passes": trace.passes,
        "files": sorted(trace.files),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", type=Path, help="the log to check (default: one made with one HP001)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("check_args", nargs="*", help="more arguments for `mlsubmit check`, after --")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        log = args.log or made_log(Path(folder))
        trace, code, printed = traced(log, args.check_args)
    result = figures(trace, code, printed)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        for key, value in result.items():
            if key != "files":
                print(f"{key}: {value}")
    return 0 if result["hp001_reported"] >= 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
