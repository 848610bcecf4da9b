"""The command line's options are light: `mlsubmit <command> --help` loads the command's options, not the command."""

from __future__ import annotations

import importlib
import subprocess
import sys

from mlsubmit.checker import Profile

from mlsubmit.cli.commands import COMMANDS, PARSERS
from mlsubmit.cli.parsers import PROFILES, RUNS_FORMATS
from mlsubmit.report.runs import WRITERS


def test_the_profiles_offered_are_the_shipped_ones() -> None:
    assert tuple(p.value for p in Profile) == PROFILES


def test_the_run_ledger_formats_offered_are_its_writers() -> None:
    assert tuple(sorted(WRITERS)) == RUNS_FORMATS


def test_every_command_has_its_options_module() -> None:
    """The CLI reads a command's options from its module in cli/parsers/ only (no fallback to the command's own
    module), so each one must be there and offer add_parser."""
    assert set(PARSERS) == set(COMMANDS)
    for name, module in PARSERS.items():
        assert callable(getattr(importlib.import_module(module), "add_parser", None)), name


def test_check_help_loads_no_checker_module() -> None:
    probe = ("import sys; from mlsubmit.cli import main; main(['check', '--help']); "
             "print(sorted(m for m in sys.modules if m.startswith(('mlsubmit.checker', 'mlsubmit.cli.commands.'))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
