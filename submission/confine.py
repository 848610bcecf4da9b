"""How `verify --official` runs mlperf-logging's tools: confined, with limits, in their own working folder.

Each tool runs as `python -I tool_launcher.py ... <module> <args>` (submission/tool_launcher.py: isolated, so the
working folder, which holds the tree, is not on its import path and no PYTHON* variable is read), with a minimal
environment, in the unit's working folder. The launcher sets the resource limits (memory, CPU time, file size, no
core files), installs an audit hook that keeps the tool to the files its release ships (no rule file, code or
pickle from elsewhere, no process, no network), then runs the tool's module in the same process.

Around that process, bubblewrap (`bwrap`): new namespaces (no network, no other process visible, killed with us),
the file system read-only, the places that hold a user's secrets hidden behind empty folders (homes, /root,
/run/user, /tmp ...) with only what the interpreter needs bound back read-only, and the working folder the one place
it may write. Without bwrap there is no confinement: `verify --official` refuses to run (exit 2) unless given
`--unconfined`, and then says so. Whether bwrap works here is probed once per process.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mlsubmit.checker.upstream.installed import package_folder
from mlsubmit.submission import tool_launcher

MEMORY_LIMIT = 2 << 30  # address space of one tool (pandas and numpy map ~0.6 GiB; the input bounds keep use far below)
CPU_LIMIT = 3600  # s of CPU time, as the wall-clock timeout (official.STEP_TIMEOUT)
FILE_LIMIT = 1 << 30  # the largest file a tool may write (its log, scaling.json, the summary)
_PROBE_TIMEOUT = 20

LAUNCHER = Path(tool_launcher.__file__)
BWRAP = "bwrap"
PACKAGE = "bubblewrap"  # what to install for it (Debian, Ubuntu, Fedora, Arch: the same name)
# Where a user's secrets live: hidden from the tools (each one that exists here) behind an empty folder.
SECRET_PLACES = ("/home", "/root", "/run/user", "/run/secrets", "/var/run/secrets", "/tmp", "/var/tmp", "/mnt",
                 "/media", "/srv")  # fmt: skip


@dataclass(frozen=True)
class Confinement:
    kind: str  # "bwrap" or "none"
    words: str  # what the output says of it
    why: str = ""  # why there is none

    @property
    def confined(self) -> bool:
        return self.kind != "none"

    def wrap(self, argv: list[str], cwd: Path) -> list[str]:
        """`argv` inside the confinement, with `cwd` the one folder it may write to."""
        if self.kind == "bwrap":
            return [_tool(BWRAP), *bwrap_args(cwd), "--", *argv]
        return argv


def bwrap_args(cwd: Path) -> list[str]:
    """Read-only everywhere, secret places hidden, the interpreter's folders bound back, `cwd` writable."""
    hidden = hidden_places()
    args = ["--ro-bind", "/", "/"]
    for place in hidden:
        args += ["--tmpfs", place]
    for need in needed_paths():
        real = os.path.realpath(need)
        args += ["--ro-bind", real, real] + (["--ro-bind", real, need] if need != real else [])
    where = str(cwd)
    args += ["--bind", where, where]
    for place in hidden:  # the empty folders become read-only too, once what is bound back is in place
        args += ["--remount-ro", place]
    return [*args, "--dev", "/dev", "--proc", "/proc", "--chdir", where, "--unshare-all", "--die-with-parent",
            "--new-session"]  # fmt: skip


def hidden_places() -> list[str]:
    """The secret places that exist here, this user's home among them, each once and none under another."""
    home = os.path.expanduser("~")
    found = [os.path.realpath(p) for p in (*SECRET_PLACES, home) if os.path.isdir(p)]
    unique = sorted(set(found))
    return [p for p in unique if p != "/" and not any(p.startswith(q + os.sep) for q in unique if q != p)]


def needed_paths() -> list[str]:
    """What the tool's process reads besides the working folder: the interpreter, its standard library and
    site-packages (a venv's and its base's), mlperf-logging's folder and the launcher's."""
    paths = sysconfig.get_paths()
    wanted = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable)),
              os.path.dirname(sys.executable), *(paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")),
              str(LAUNCHER.parent)]  # fmt: skip
    package = package_folder()
    wanted += [str(package)] if package is not None else []
    unique = sorted({os.path.abspath(p) for p in wanted if os.path.exists(p)})
    return [p for p in unique if not any(p.startswith(q + os.sep) for q in unique if q != p)]


def _tool(name: str) -> str:
    return shutil.which(name) or name


@functools.cache
def available_confinement() -> Confinement:
    """bubblewrap when it runs the interpreter here, else none (with the reason in its words)."""
    if shutil.which(BWRAP) is None:
        return _none(f"{BWRAP} is not installed (package {PACKAGE})")
    found = Confinement("bwrap", _WORDS["bwrap"])
    probe = Path(tempfile.mkdtemp(prefix="mlsubmit-probe-"))
    try:
        argv = found.wrap([sys.executable, "-I", "-c", ""], probe)
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=_PROBE_TIMEOUT,
                              env=environment(probe), check=False)  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        return _none(f"{BWRAP} does not run here ({exc})")
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        return _none(f"{BWRAP} does not run here ({said[0]})")
    return found


def _none(why: str) -> Confinement:
    return Confinement("none", _WORDS["none"].format(why=why), why)


_LIMITS = f"{MEMORY_LIMIT >> 30} GiB of memory, {CPU_LIMIT} s of CPU, files up to {FILE_LIMIT >> 30} GiB"
_WORDS = {
    "bwrap": f"confined with bubblewrap: no network, read-only, homes and temporary folders hidden, writes only in "
             f"the private copy; the tools read only the rule files, code and data mlperf-logging ships; {_LIMITS}",
    "none": "NOT confined: {why}, so the tools could read this user's files, write where this user can and reach "
            "the network (given --unconfined); the tools still read only the rule files, code and data "
            f"mlperf-logging ships; {_LIMITS}",
}  # fmt: skip


def environment(cwd: Path) -> dict[str, str]:
    """What a tool sees of the environment: no variable of ours (tokens, proxies, PYTHON*), one thread for the
    numerical libraries, its working folder as home and temporary folder."""
    return {"PATH": os.pathsep.join(dict.fromkeys([str(Path(sys.executable).parent), "/usr/bin", "/bin"])),
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HOME": str(cwd), "TMPDIR": str(cwd),
            "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}  # fmt: skip


def tool_command(module: str, args: list[str]) -> list[str]:
    """`python -I tool_launcher.py <limits> <mlperf-logging's folder> <module> <args>`: the launcher sets the limits
    and the audit hook, then runs the module in its own process."""
    limits = [str(MEMORY_LIMIT), str(CPU_LIMIT), str(FILE_LIMIT)]
    package = package_folder()
    if package is None:
        raise ImportError("mlperf-logging is not installed")
    return [sys.executable, "-I", "-B", str(LAUNCHER), *limits, str(package), module, *args]
