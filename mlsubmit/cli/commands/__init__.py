"""Subcommands: each module has `run(args) -> int`, its options `add_parser(subparsers)` in mlsubmit/cli/parsers/;
both imported only when used (the options for the command named, the command once they are parsed)."""

from __future__ import annotations

# name -> (module, one-line help). Modules are imported lazily so `mlsubmit explain` does not pay for the checker.
_HERE = __name__
COMMANDS: dict[str, tuple[str, str]] = {
    "advise": (f"{_HERE}.advise", "list the closed-division rules each run log breaks, whatever it claims"),
    "check": (f"{_HERE}.check", "check run logs, system descriptions and submission trees"),
    "explain": (f"{_HERE}.explain", "explain a finding code, or list them all"),
    "package": (f"{_HERE}.package", "build a submission tree (and archive) from raw runs"),
    "report": (f"{_HERE}.report", "scores per system and benchmark: tables, JSON, a self-contained HTML page"),
    "rounds": (f"{_HERE}.rounds", "a new round's data: draft its closed hyperparameter table from its rules"),
    "runs": (f"{_HERE}.runs", "the run ledger (check --ledger): run sets, windows of N, convergence over time"),
    "review": (f"{_HERE}.review", "the review period: borrowing, Preview results, changes since last round"),
    "systems": (f"{_HERE}.systems", "system descriptions: capture one from a machine"),
    "verify": (f"{_HERE}.verify", "verify a packaged (and possibly encrypted) submission archive"),
}

# name -> the module of its options. The parsers are light, so `mlsubmit <command> --help` loads no command.
PARSERS: dict[str, str] = {name: f"mlsubmit.cli.parsers.{name}" for name in COMMANDS}
