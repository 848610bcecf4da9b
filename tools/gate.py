"""`make check`: run `mlsubmit check` over the paths configured in mlsubmit.toml ([check] table).

The gate is configuration, not code: the ruleset, the paths (globs, relative to the config file) and strictness
live in mlsubmit.toml so a submitter adds a staged tree by editing data. Paths may not leave the repository.
Exit codes are mlsubmit's: 0 clean, 1 findings, 2 bad configuration or input, 3 internal error.
"""

from __future__ import annotations

import argparse
import glob
import subprocess
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

ROOT = Path(__file__).resolve().parents[1]
KEYS = {"ruleset": str, "paths": list, "strict": bool}
# the check's own policy keys: `mlsubmit check` reads and validates them (schemas/check-config.schema.json)
POLICY_KEYS = {"profile", "extends", "select", "ignore", "severity", "overrides"}


class GateError(Exception):
    pass


def load(config: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise GateError(f"{config}: cannot read the gate configuration: {exc}") from exc
    table = data.get("check")
    if not isinstance(table, dict):
        raise GateError(f"{config}: no [check] table")
    for key, value in table.items():
        if key in POLICY_KEYS:
            continue
        if key not in KEYS:
            raise GateError(f"{config}: unknown key check.{key} (known: {', '.join(KEYS)})")
        if not isinstance(value, KEYS[key]):
            raise GateError(f"{config}: check.{key} must be a {KEYS[key].__name__}")
    if not all(isinstance(p, str) and p for p in table.get("paths", [])):
        raise GateError(f"{config}: check.paths must be a list of non-empty strings")
    return table


def expand(base: Path, patterns: list[str]) -> tuple[list[str], list[str]]:
    """(existing paths, patterns that matched nothing); every path must stay inside `base`."""
    found: list[str] = []
    unmatched: list[str] = []
    root = base.resolve()
    for pattern in patterns:
        if Path(pattern).is_absolute():
            raise GateError(f"check.paths: {pattern!r} is absolute; paths are relative to the config file")
        matches = sorted(glob.glob(pattern, root_dir=base))
        if not matches:
            unmatched.append(pattern)
        for match in matches:
            if not (base / match).resolve().is_relative_to(root):
                raise GateError(f"check.paths: {match!r} leaves the repository")
            if match not in found:
                found.append(match)
    return found, unmatched


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make check", description=__doc__)
    parser.add_argument("--config", type=Path, default=ROOT / "mlsubmit.toml")
    parser.add_argument("--ruleset", help="override check.ruleset")
    args, extra = parser.parse_known_args(argv)  # anything else goes to `mlsubmit check` (--format, --output...)
    try:
        table = load(args.config)
        base = args.config.resolve().parent
        paths, unmatched = expand(base, list(table.get("paths", [])))
    except GateError as exc:
        print(f"mlsubmit gate: error: {exc}", file=sys.stderr)
        return 2
    for pattern in unmatched:
        print(f"mlsubmit gate: {pattern!r} matches nothing; skipped", file=sys.stderr)
    ruleset = args.ruleset or table.get("ruleset")
    if not ruleset:
        print("mlsubmit gate: error: no ruleset (set check.ruleset or RULESET=...)", file=sys.stderr)
        return 2
    if not paths:
        print("mlsubmit gate: nothing to check", file=sys.stderr)
        return 0
    argv_check = ["check", "--ruleset", ruleset, *(["--strict"] if table.get("strict") else []), *extra]
    # Run from the config's folder so reports show the paths as the config wrote them.
    return subprocess.call([sys.executable, "-m", "mlsubmit", *argv_check, "--", *paths], cwd=base)


if __name__ == "__main__":
    sys.exit(main())
