"""The package checker arguments `verify --official` hands on from `<org>/package_checker_params` (PKG070): the
verify script turns each line into `--<line>`, so only the package checker's own options pass, and `--log_output`
only to a file inside the private copy the tools run in (submission/handover.py decides the rest of the handover).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from mlsubmit.checker.tree import params as org_params

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding

# The package checker's options (mlperf_logging/package_checker/package_checker.py, get_parser): the flags, and
# the one that takes a value. tests/unit/submission/test_handover.py holds this to the installed release.
FLAGS = ("--werror", "--quiet", "--rcp-bypass", "--rcp-bert-train-samples", "--seed-checker-bypass")
VALUED = ("--log_output",)
_UNKNOWN_OPTION = re.compile(r"--[A-Za-z0-9][A-Za-z0-9_-]*")


def vetted_arguments(root: Path, shown: str, cwd: Path) -> tuple[list[str], list[Finding]]:
    """The package checker arguments the verify script builds from `<root>/package_checker_params`
    (params.script_arguments), and a PKG070 finding for each one not handed over: only the package checker's own
    options (an unknown `--name` too, which it refuses in its own words), and `--log_output` only to a file inside
    `cwd`, the private copy the tools run in."""
    try:
        args = org_params.script_arguments(root)
    except OSError as exc:
        return [], [finding("PKG070", shown, f"cannot be read: {exc.strerror or exc}")]
    refused = []
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        option = _matching(name) if _UNKNOWN_OPTION.fullmatch(name) else None
        if option in VALUED:
            if not eq:
                i += 1
                value = args[i] if i < len(args) else ""
            why = _outside(value, cwd)
            if why:
                refused.append(finding("PKG070", shown, f"{arg} ({option}) {why}: not handed to the package checker"))
        elif option in FLAGS and eq:
            refused.append(finding("PKG070", shown, f"{arg} ({option} takes no value): not handed to the package "
                                   "checker"))
        elif option is None and not _UNKNOWN_OPTION.fullmatch(arg):
            refused.append(finding("PKG070", shown, f"{arg!r} is not an option of the package checker: not handed "
                                   "to it"))
        i += 1
    return args, refused


def _matching(name: str) -> str | None:
    """The option argparse takes `name` for: itself, or the one option it abbreviates; None for no option or an
    ambiguous abbreviation (argparse refuses both)."""
    options = FLAGS + VALUED
    if name in options:
        return name
    found = [o for o in options if o.startswith(name)]
    return found[0] if len(found) == 1 else None


def _outside(value: str, cwd: Path) -> str | None:
    if not value or value.startswith("-"):
        return "has no file name"
    if os.path.isabs(value) or ".." in Path(value).parts or "\x00" in value:
        return f"names {value!r}, outside the private copy"
    target = os.path.realpath(cwd / value)
    if os.path.commonpath([os.path.realpath(cwd), target]) != os.path.realpath(cwd):
        return f"names {value!r}, which leads outside the private copy"
    return None
