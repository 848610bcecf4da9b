"""How `verify --official` runs mlperf-logging's tools: confined, with limits, in their own working folder.

Each tool runs as `python -I -m mlperf_logging.<module>` (isolated: the working folder, which holds the tree, is not
on its import path, and no PYTHON* variable is read), with a minimal environment, in the unit's working folder,
under resource limits set by a small launcher of ours before it starts the tool (memory, CPU time, file size, no
core files), and inside the strongest confinement the platform offers:

- bubblewrap (`bwrap`): the whole file system read-only but the working folder, new namespaces (no network, no
  other process visible), the tool killed with us;
- else `unshare` (util-linux): new network, IPC and PID namespaces (no network); the file system is not protected
  beyond the private copy and the checks made before the handover;
- else none: the output says so.

Which one is found is probed once per process, by running `true` in it.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

MEMORY_LIMIT = 2 << 30  # address space of one tool (pandas and numpy map ~0.6 GiB; the input bounds keep use far below)
CPU_LIMIT = 3600  # s of CPU time, as the wall-clock timeout (official.STEP_TIMEOUT)
FILE_LIMIT = 1 << 30  # the largest file a tool may write (its log, scaling.json, the summary)
_PROBE_TIMEOUT = 20

# The launcher: our own code, run isolated; it sets the limits and becomes the tool.
_LAUNCH = (
    "import os, resource, sys\n"
    "mem, cpu, size = (int(x) for x in sys.argv[1:4])\n"
    "for what, value in ((resource.RLIMIT_AS, mem), (resource.RLIMIT_CPU, cpu), (resource.RLIMIT_FSIZE, size),\n"
    "                    (resource.RLIMIT_CORE, 0)):\n"
    "    resource.setrlimit(what, (value, value))\n"
    "os.execv(sys.executable, [sys.executable, '-I', *sys.argv[4:]])\n"
)


@dataclass(frozen=True)
class Confinement:
    kind: str  # "bwrap", "unshare" or "none"
    words: str  # what the output says of it

    def wrap(self, argv: list[str], cwd: Path) -> list[str]:
        """`argv` inside the confinement, with `cwd` the one folder it may write to."""
        if self.kind == "bwrap":
            return [_tool("bwrap"), *_bwrap_args(cwd), "--", *argv]
        if self.kind == "unshare":
            return [_tool("unshare"), *_UNSHARE_ARGS, "--", *argv]
        return argv


_UNSHARE_ARGS = ("--user", "--map-root-user", "--net", "--ipc", "--pid", "--fork", "--kill-child")


def _bwrap_args(cwd: Path) -> list[str]:
    where = str(cwd)
    return ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--bind", where, where, "--chdir", where,
            "--unshare-all", "--die-with-parent", "--new-session"]  # fmt: skip


def _tool(name: str) -> str:
    return shutil.which(name, path=os.defpath + os.pathsep + "/usr/sbin:/sbin") or name


@functools.cache
def available() -> Confinement:
    """bwrap, else unshare, else none: the first that runs `true` here."""
    probe = Path(tempfile.gettempdir())
    for kind in ("bwrap", "unshare"):
        if shutil.which(kind, path=os.defpath + os.pathsep + "/usr/sbin:/sbin") is None:
            continue
        found = Confinement(kind, "")
        try:
            done = subprocess.run(found.wrap(["true"], probe), stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=_PROBE_TIMEOUT, env=environment(probe), check=False)  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0:
            return Confinement(kind, _WORDS[kind])
    return Confinement("none", _WORDS["none"])


_LIMITS = f"{MEMORY_LIMIT >> 30} GiB of memory, {CPU_LIMIT} s of CPU, files up to {FILE_LIMIT >> 30} GiB"
_WORDS = {
    "bwrap": f"confined with bubblewrap: no network, read-only outside the private copy; {_LIMITS}",
    "unshare": f"confined with unshare: no network (bubblewrap not found: files outside the private copy are not "
               f"write-protected); {_LIMITS}",
    "none": f"NOT confined: neither bubblewrap (bwrap) nor unshare runs here, so the tools have the network and "
            f"this user's files; {_LIMITS}",
}  # fmt: skip


def environment(cwd: Path) -> dict[str, str]:
    """What a tool sees of the environment: no variable of ours (tokens, proxies, PYTHON*), one thread for the
    numerical libraries, its working folder as home and temporary folder."""
    return {"PATH": os.pathsep.join(dict.fromkeys([str(Path(sys.executable).parent), "/usr/bin", "/bin"])),
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HOME": str(cwd), "TMPDIR": str(cwd),
            "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}  # fmt: skip


def tool_command(module: str, args: list[str]) -> list[str]:
    """`python -I -m <module> <args>` behind the launcher that sets the limits."""
    limits = [str(MEMORY_LIMIT), str(CPU_LIMIT), str(FILE_LIMIT)]
    return [sys.executable, "-I", "-c", _LAUNCH, *limits, "-m", module, *args]
