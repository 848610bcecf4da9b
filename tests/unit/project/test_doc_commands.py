"""Every shell line of README.md and docs/*.md is run by a test or says why not (issue 57 item 8).

A `$ ` session is run by tests/cli/test_doc_examples.py (output and exit status). Any other fenced block holding
commands is a synopsis (its options in brackets or choices), or is listed here with the test that runs the same
commands, or why they cannot run on a test machine. A new block of commands must be one of these."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
COMMANDS = ("mlsubmit", ".venv/bin/mlsubmit", "make", "pip", "python", "cd", "sha1sum", "openssl", "git",
            "mlperf-sysinfo")  # fmt: skip

# (page, the block's first line as it starts) -> where its commands are run, or why they are not
NOT_RUN: dict[tuple[str, str], str] = {
    ("README.md", "make demo"): "tests/install/test_newcomer.py runs make demo from a fresh clone",
    ("README.md", "cd build/demo"): "tests/install/test_newcomer.py runs the newcomer:package block",
    ("README.md", ".venv/bin/mlsubmit report --ruleset 1.0.0 --prices prices.toml"): "two published trees; "
    "tests/cli/test_report_per_dollar.py",
    ("README.md", "make install"): "make targets; tests/install/test_newcomer.py and CI run them",
    ("docs/hyperparameters.md", "mlsubmit advise [--ruleset X.Y.Z|auto]"): "a synopsis, with `mlsubmit explain "
    "HP001` (tests/unit/core codes tests) and make demo-advise (tests/install/test_newcomer.py)",
    ("docs/packaging.md", "sha1sum mlperf_submission_Graphcore.tar.gz"): "the chair's by-hand steps; "
    "tests/cli/test_package.py runs sha1sum and openssl on a packaged archive",
    ("docs/packaging.md", "openssl enc -d -aes256 -pbkdf2"): "the chair's by-hand step; tests/cli/test_package.py",
    ("docs/report.md", "mlsubmit report --ruleset 5.1.0 Graphcore/ --summary-csv"): "a published tree; "
    "tests/unit/report/test_chair_summary.py writes the same file",
    ("docs/report.md", "mlsubmit report --ruleset 5.0.0 ../shared/corpus/training_results_v5.0/Lenovo"): "the "
    "corpus; tests/differential/test_private_ids.py",
    ("docs/systems.md", "mlsubmit check --ruleset 1.1.0 systems/"): "the same checks as the page's $ sessions, "
    "run by tests/cli/test_doc_examples.py; path/to/Graphcore stands for the reader's tree",
    ("docs/systems.md", "pip install '/path/to/mlsubmit-clone[capture]'"): "installs; tests/install/"
    "test_installed_wheel.py installs the wheel with the capture extra",
    ("docs/tree-checks.md", "mlsubmit check --ruleset 1.0.0 ../shared/corpus/training_results_v1.0/Graphcore"):
    "the corpus; tests/differential/test_reference_package.py checks every corpus tree",
    ("docs/waivers.md", "mlsubmit check tree --write-waivers waivers.toml"): "tree stands for the reader's tree; "
    "tests/cli/test_waivers_cli.py and tests/cli/test_waivers_real_path.py run the round trip",
}


def _blocks() -> list[tuple[str, list[str]]]:
    """(page, lines) of each fenced shell block that is not a `$ ` session."""
    out = []
    for doc in DOCS:
        name = doc.relative_to(ROOT).as_posix()
        text = doc.read_text(encoding="utf-8")
        for lang, body in re.findall(r"^```(\w*)\n(.*?)^```", text, re.MULTILINE | re.DOTALL):
            lines = body.splitlines()
            if lang in ("", "sh", "bash") and lines and not lines[0].startswith("$ "):
                out.append((name, lines))
    return out


def _commands(lines: list[str]) -> list[str]:
    """The command lines, a trailing backslash joining the next line."""
    joined: list[str] = []
    for line in lines:
        if joined and joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1] + " " + line.strip()
        else:
            joined.append(line)
    return [ln for ln in joined if ln.split() and ln.split()[0] in COMMANDS]


def _synopsis(commands: list[str]) -> bool:
    """A usage line: its options in brackets or alternatives, or a placeholder in capitals standing for an argument
    (`--ledger URL`), not a command to run as written."""
    return all("[" in c or " | " in c or any(_PLACEHOLDER.fullmatch(w) for w in c.split()) for c in commands)


_PLACEHOLDER = re.compile(r"[A-Z][A-Z_.|]+(?:\.\.\.)?")


def test_every_block_of_commands_is_run_or_says_why_not() -> None:
    unexplained, used = [], set()
    for name, lines in _blocks():
        commands = _commands(lines)
        if not commands or _synopsis(commands):
            continue
        key = next((k for k in NOT_RUN if k[0] == name and lines[0].startswith(k[1])), None)
        if key is None:
            unexplained.append(f"{name}: {lines[0]}")
        used.add(key)
    assert unexplained == [], "blocks of commands no test runs; make them $ sessions or say why in NOT_RUN"
    assert set(NOT_RUN) <= used, f"NOT_RUN names no block: {set(NOT_RUN) - used}"
