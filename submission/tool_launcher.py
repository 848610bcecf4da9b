"""The process one of mlperf-logging's tools runs in: limits, then an audit hook, then the tool's module.

`verify --official` runs `python -I tool_launcher.py MEM CPU FSIZE RULES_ROOT MODULE ARGS...` (submission/confine.py).
This file is run as a script, so it imports the standard library only, and nothing of ours or of the tree before
the hook is in place. The tools read what the tree names: the compliance checker joins a log's
`submission_division` value to its rule folder and executes the BEGIN/CODE snippets of the rule file it finds there.
Whatever our own check concluded, the hook keeps the tool to what its release ships:

- a rule file (YAML) is opened only inside RULES_ROOT (the installed mlperf_logging folder), and a path the tool
  builds from that folder (`<folder>/training_6.1.0/../../x`) must stay in it (RCP tables, configs);
- Python code (imported, compiled or executed with a file name) and pickles come only from the interpreter's own
  folders (standard library, site-packages) and RULES_ROOT, and the import path holds nothing else;
- nothing is written outside the working folder (the current folder when the hook comes; /dev/null aside);
- no process is started, no signal sent, no socket connected, no library loaded by path from elsewhere.

Code compiled from a string (the rule files' snippets, `<string>`) is allowed: rule files come only from RULES_ROOT,
so the snippets are the shipped ones. A refusal writes one line starting with MARKER to standard error and ends the
process at once with REFUSED_EXIT (no `except` of the tool's can swallow it). Audit hooks cannot be removed.
"""

from __future__ import annotations

import os
import resource
import sys
import sysconfig
from collections.abc import Callable, Sequence
from typing import Any

MARKER = "MLSUBMIT-CONFINE REFUSED:"
REFUSED_EXIT = 97
RULE_SUFFIXES = (".yaml", ".yml")
CODE_SUFFIXES = (".py", ".pyc", ".pyo", ".pyw", ".pth", ".so", ".pyd", ".pkl", ".pickle")
# Events that start a process, send a signal or reach the network: none of the three tools needs one.
NEVER = frozenset({"subprocess.Popen", "os.system", "os.fork", "os.forkpty", "os.kill", "os.killpg", "pty.spawn",
                   "socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg", "socket.getaddrinfo",
                   "socket.gethostbyname", "socket.gethostbyaddr", "urllib.Request", "webbrowser.open",
                   "ftplib.connect", "smtplib.connect", "http.client.connect", "os.startfile"})  # fmt: skip
NEVER_PREFIXES = ("os.exec", "os.spawn", "os.posix_spawn")


def is_inside(path: str, roots: Sequence[str]) -> bool:
    """Whether `path` (a real path) is one of `roots` (real paths) or under one."""
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def code_roots(rules_root: str) -> tuple[str, ...]:
    """The interpreter's own folders (standard library, site-packages) and the tool's package folder."""
    paths = sysconfig.get_paths()
    found = [paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if paths.get(k)]
    return tuple(dict.fromkeys(os.path.realpath(p) for p in [*found, rules_root]))


def _text(value: object) -> str | None:
    """A path argument of an audit event as text; None for a file descriptor or anything else."""
    if isinstance(value, (str, bytes, os.PathLike)):
        path = os.fspath(value)
        return os.fsdecode(path)
    return None


class Policy:
    """What the hook allows; `why(event, args)` is None when allowed, else the refusal's words."""

    def __init__(self, rules_root: str, import_path: Sequence[str] = (), work: str | None = None) -> None:
        self.rules_root = os.path.realpath(rules_root)
        # as the tool spells the paths it builds from its folder (its __file__: the import path's spelling)
        self.rules_text = tuple({os.path.abspath(rules_root) + os.sep, self.rules_root + os.sep})
        self.code = code_roots(rules_root)
        # the import path the interpreter set up with -I (its own folders, site-packages' .pth entries such as an
        # editable install's path hook): nothing of the tree's, and kept as it was when the hook came
        self.import_path = frozenset(import_path)
        self.work = os.path.realpath(work if work is not None else os.getcwd())  # the one folder written to

    def why(self, event: str, args: tuple[Any, ...]) -> str | None:
        if event == "open":
            path = _text(args[0]) if args else None
            if path is not None and _writes(args) and not is_inside(os.path.realpath(path), [self.work, os.devnull]):
                return f"writing {os.path.realpath(path)}, outside the working folder"
            return self._open(path)
        if event == "compile":
            return self._code_file(args[1] if len(args) > 1 else None, "compile")
        if event == "exec":
            return self._code_file(getattr(args[0], "co_filename", None) if args else None, "exec")
        if event == "import":
            return self._import_path(args[2] if len(args) > 2 else None)
        if event == "ctypes.dlopen":
            return self._library(args[0] if args else None)
        if event in NEVER or event.startswith(NEVER_PREFIXES):
            return f"{event} (the reference tools start no process and reach no network)"
        return None

    def _open(self, path: str | None) -> str | None:
        if path is None:
            return None
        real = os.path.realpath(path)
        if path.startswith(self.rules_text) and not is_inside(real, [self.rules_root]):
            return f"open of {real}: a path built from mlperf-logging's own folder that leaves it"
        lower = real.lower()
        if lower.endswith(RULE_SUFFIXES) and not is_inside(real, [self.rules_root]):
            return f"open of {real}: a rule file outside mlperf-logging's own folder"
        if lower.endswith(CODE_SUFFIXES) and not is_inside(real, self.code) and not self._text_read(path):
            return f"open of {real}: code outside the interpreter's and mlperf-logging's folders"
        return None

    @staticmethod
    def _text_read(path: str) -> bool:
        """The seed checker reads a tree's source files as text, so a .py file opens anywhere; what Python imports
        comes only from the import path (checked at every import), and compiling a file from elsewhere is refused."""
        return path.lower().endswith((".py", ".pyw"))

    def _code_file(self, name: object, what: str) -> str | None:
        if not isinstance(name, (str, bytes)):
            return None
        text = os.fsdecode(name)
        if text.startswith("<"):  # compiled from a string (<string>, <frozen os>): its text came from a shipped file
            return None
        real = os.path.realpath(text)
        if is_inside(real, self.code):
            return None
        return f"{what} of {real}: code outside the interpreter's and mlperf-logging's folders"

    def _import_path(self, path: object) -> str | None:
        if not isinstance(path, list):
            return None
        for entry in path:
            text = _text(entry)
            if text is None or text in self.import_path:
                continue
            if not is_inside(os.path.realpath(text or "."), self.code):
                shown = text or "the working folder"
                return f"import with {shown!r} on the import path (outside the interpreter's folders)"
        return None

    def _library(self, name: object) -> str | None:
        text = _text(name)
        if text is None or os.sep not in text:  # a library found by the loader's own search (libc, libm)
            return None
        real = os.path.realpath(text)
        if is_inside(real, [*self.code, "/usr/lib", "/lib", "/usr/lib64", "/lib64", "/usr/local/lib"]):
            return None
        return f"loading the library {real} (outside the interpreter's and the system's folders)"


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _writes(args: tuple[Any, ...]) -> bool:
    """Whether an `open` event (path, mode, flags) opens for writing: io.open gives a mode, os.open flags."""
    mode = args[1] if len(args) > 1 else None
    if isinstance(mode, str):
        return any(c in mode for c in "wax+")
    flags = args[2] if len(args) > 2 else 0
    return isinstance(flags, int) and bool(flags & _WRITE_FLAGS)


def hook_for(policy: Policy, stop: Callable[[str], None]) -> Callable[[str, tuple[Any, ...]], None]:
    def hook(event: str, args: tuple[Any, ...]) -> None:
        words = policy.why(event, args)
        if words is not None:
            stop(words)

    return hook


def stop_process(words: str) -> None:
    """Say what was refused on standard error and end the process: nothing the tool does afterwards can run."""
    for stream in (sys.stdout, sys.stderr):
        _flush(stream)
    os.write(2, f"\n{MARKER} {words}\n".encode("utf-8", "replace"))
    os._exit(REFUSED_EXIT)


def _flush(stream: Any) -> None:
    try:
        stream.flush()
    except (OSError, ValueError):  # a closed or broken stream: the marker line still goes out
        pass


def set_limits(memory: int, cpu: int, size: int) -> None:
    for what, value in ((resource.RLIMIT_AS, memory), (resource.RLIMIT_CPU, cpu), (resource.RLIMIT_FSIZE, size),
                        (resource.RLIMIT_CORE, 0)):  # fmt: skip
        resource.setrlimit(what, (value, value))


def main(argv: list[str]) -> None:
    memory, cpu, size = (int(x) for x in argv[:3])
    rules_root, module, args = argv[3], argv[4], argv[5:]
    set_limits(memory, cpu, size)
    sys.dont_write_bytecode = True  # no .pyc written beside the interpreter's modules (the hook would refuse it)
    sys.addaudithook(hook_for(Policy(rules_root, list(sys.path)), stop_process))
    import runpy  # after the hook: everything from here on is watched

    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
