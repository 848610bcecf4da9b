"""Subcommands: each module has `add_parser(subparsers)` and `run(args) -> int`; imported only when used."""

from __future__ import annotations

# name -> (module, one-line help). Modules are imported lazily so `mlsubmit explain` does not pay for the checker.
COMMANDS: dict[str, tuple[str, str]] = {
    "advise": ("mlsubmit.commands.advise", "list the closed-division rules each run log breaks, whatever it claims"),
    "check": ("mlsubmit.commands.check", "check run logs, system descriptions and submission trees"),
    "explain": ("mlsubmit.commands.explain", "explain a finding code, or list them all"),
    "package": ("mlsubmit.commands.package", "build a submission tree (and archive) from raw runs"),
    "report": ("mlsubmit.commands.report", "scores per system and benchmark: tables, JSON, a self-contained HTML page"),
    "verify": ("mlsubmit.commands.verify", "verify a packaged (and possibly encrypted) submission archive"),
}
