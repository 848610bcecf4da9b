"""`main(argv) -> int`, the exit-code contract, and `console()`, the `mlsubmit` command's process.

Exit codes: 0 no errors, 1 errors found (warnings too with --strict), 2 usage error or unreadable input,
3 internal error (one line on stderr, the traceback in a log file), 130 interrupted.
"""


from __future__ import annotations

import argparse
import errno
import gc
import importlib
import os
import sys
import tempfile

# The crash handler's needs are taken at start: a run that exhausts memory must still be able to say so (importing
# traceback after a MemoryError can itself fail, and then not even exit 3 comes out).
import traceback
from typing import Any

from mlsubmit import __version__, version_line
from mlsubmit.cli.commands import COMMANDS, PARSERS
from mlsubmit.core.errors import FatalError, UsageError
from mlsubmit.core.support.display_escape import notice
from mlsubmit.core.support.names import did_you_mean


class _Parser(argparse.ArgumentParser):
    """Usage errors are exit 2 with a "did you mean" for a mistyped option. Abbreviated options are refused
    (allow_abbrev=False): `--str` meaning `--strict` today would mean something else once an option is added."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        command = self.prog.removeprefix("mlsubmit").strip()
        if message.startswith("unrecognized arguments:"):
            message += _option_suggestion(message.split(":", 1)[1].split(), _option_strings(self))
        raise UsageError(f"{command}: {message}" if command else message)


def _option_strings(parser: argparse.ArgumentParser) -> list[str]:
    """The options of a parser and of the command parsers built under it."""
    found = [s for a in parser._actions for s in a.option_strings if s.startswith("--")]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _option_strings(sub)
    return found


def _option_suggestion(unknown: list[str], known: list[str]) -> str:
    for word in unknown:
        flag = word.partition("=")[0]
        if flag.startswith("--"):
            hint = did_you_mean(flag, known, cutoff=0.75)
            if hint:
                return hint
    return ""


class _Version(argparse.Action):
    """--version, worked out only when asked (the installed mlperf-logging's version costs an import)."""

    def __call__(self, parser: argparse.ArgumentParser, *_args: Any, **_kwargs: Any) -> None:
        sys.stdout.write(version_line() + "\n")  # on stdout, as argparse's own version action writes it
        parser.exit()


def build_parser(wanted: str | None = None) -> argparse.ArgumentParser:
    """The parser; only the chosen command's options are imported (mlsubmit/cli/parsers/: `check --help` loads no
    checker), and main() imports the command itself once they are parsed."""
    parser = _Parser(prog="mlsubmit", description="Check, package and score MLPerf Training submissions.")
    parser.add_argument("--version", action=_Version, nargs=0, help="show the version and exit")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (_, summary) in COMMANDS.items():
        if name == wanted:
            importlib.import_module(PARSERS[name]).add_parser(sub)
        else:
            sub.add_parser(name, help=summary, add_help=False)
    return parser


HOOK_FILES = "--hook-files"


def hook_files(argv: list[str]) -> list[str]:
    """pre-commit runs a hook as its entry, then the user's args, then the staged file names, so a staged file named
    `--output=notes.txt` would be an option (the report would replace notes.txt), and a `--` in the entry would make
    the user's args file names. After HOOK_FILES, which ends the hooks' entry, an argument starting with `-` that
    names an existing file is that file, written ./NAME. The user's options name no file; a staged file named like
    one makes the run a usage error, never a write."""
    if HOOK_FILES not in argv:
        return argv
    at = argv.index(HOOK_FILES) + 1
    return argv[:at] + [f"./{a}" if a.startswith("-") and os.path.lexists(a) else a for a in argv[at:]]


def _command_in(argv: list[str]) -> str | None:
    return next((a for a in argv if not a.startswith("-")), None)


# Room for the crash handler, given back to the allocator before it runs.
_RESERVE_BYTES = 4 << 20
_reserve: list[bytearray] = []
# A write of the output that fails for lack of room is the environment's problem (exit 2), not a bug (exit 3).
_NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def _crash_log(exc: BaseException) -> str:
    fd, path = tempfile.mkstemp(prefix="mlsubmit-crash-", suffix=".log")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(f"mlsubmit {__version__}\nargv: {sys.argv!r}\n\n")
        fh.write("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    return path


def _internal_error(exc: Exception, debug: bool) -> int:
    _reserve.clear()
    if isinstance(exc, OSError) and exc.errno in _NO_ROOM:
        notice(f"mlsubmit: error: cannot write the output: {exc.strerror or exc}")
        return 2
    if debug:
        traceback.print_exc()
    try:
        where = _crash_log(exc)
    except (OSError, MemoryError):
        where = "(could not write a crash log)"
    notice(f"mlsubmit: internal error: {type(exc).__name__}: {exc}; details in {where}")
    return 3


def main(argv: list[str] | None = None) -> int:
    argv = hook_files(list(sys.argv[1:] if argv is None else argv))
    debug = "--debug" in argv
    if not _reserve:
        _reserve.append(bytearray(b"\xff") * _RESERVE_BYTES)  # written, so its pages are really held
    try:
        parser = build_parser(_command_in(argv))
        args = parser.parse_args(argv)
        if not args.command:
            parser.print_help(sys.stderr)
            return 2
        module = importlib.import_module(COMMANDS[args.command][0])
        code = int(module.run(args))
        sys.stdout.flush()  # a full disk under stdout is met here, while it can still be told as exit 2
        return code
    except UsageError as exc:
        notice(f"mlsubmit: error: {exc}")
        return 2
    except FatalError as exc:
        notice(f"mlsubmit: error: {exc}")
        return 2
    except KeyboardInterrupt:
        notice("mlsubmit: interrupted")
        return 130
    except SystemExit as exc:  # argparse --help/--version
        return exc.code if isinstance(exc.code, int) else 0
    except BrokenPipeError:
        return 1
    except Exception as exc:
        return _internal_error(exc, debug)


def console() -> int:
    """The `mlsubmit` command and `python -m mlsubmit`: main() in a process that ends when it returns.

    The cyclic collector is off for such a process, and everything is frozen before it ends. A run makes no
    reference cycles of its own (reference counting frees everything), while the collector's passes over hundreds
    of thousands of records and findings, and its last pass at exit, cost 5-10% of a check; in forked workers
    they would also copy shared pages.
    In-process callers of main() (tests, other tools) keep their collector as it is.
    """
    gc.disable()
    try:
        code = main()
        if code == 2:  # output left unwritten (a full disk) would fail again at exit, with a traceback and 120
            _drop_pending_output()
        return code
    finally:
        # Python still runs one full collection while it shuts down, collector off or not: ~3% of a check over the
        # corpus. Frozen objects are left out of it; the process is ending, and the OS takes back its memory.
        gc.freeze()


def _drop_pending_output() -> None:
    """Point stdout at /dev/null when its buffer cannot be written, so the interpreter's last flush is quiet."""
    try:
        sys.stdout.flush()
    except OSError:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
