"""The organisation's `package_checker_params`: what the official verify script makes of it, from round 2.0 on.

`verify_for_v<round>_training.sh` (2.0 and later) reads `<org>/package_checker_params` with `while IFS= read -r
line` and appends `--<line>` to the package checker's command line, unquoted. So: only lines ended by a newline
count (`read` drops a last line without one), each line is split on blanks, and anything the package checker does
not accept stops the verification ("unrecognized arguments"). The flags were spelled with underscores until
mlcommons/logging 24bed7e (September 2024); published trees of 2.0-4.0 carry that spelling, so both are read.

This is a different reading from the per-system and per-benchmark files (folders.bypass_flags), which the package
checker itself compares line by line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mlsubmit.checker.rounds.detect import version

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding
from mlsubmit.core.support.safe_io import open_regular

NAME = "package_checker_params"
FIRST_RULESET = (2, 0, 0)  # the first verify script that reads the file
RCP_BYPASS, BERT_TRAIN_SAMPLES, SEED_BYPASS = "rcp-bypass", "rcp-bert-train-samples", "seed-checker-bypass"
# each spelling a verify script of some round passed on, to the flag it means
SPELLINGS = {
    "rcp-bypass": RCP_BYPASS, "rcp_bypass": RCP_BYPASS,
    "rcp-bert-train-samples": BERT_TRAIN_SAMPLES, "rcp_bert_train_samples": BERT_TRAIN_SAMPLES,
    "seed-checker-bypass": SEED_BYPASS,
}
_MAX_BYTES = 64 << 10  # a flag file is a few bytes; a bigger one is not read whole


@dataclass
class OrgParams:
    flags: set[str] = field(default_factory=set)  # canonical spellings
    findings: list[Finding] = field(default_factory=list)


def applies(ruleset: str) -> bool:
    return version(ruleset) >= FIRST_RULESET


def read_org_params(root: Path, shown: str, ruleset: str) -> OrgParams:
    """The flags the verify script would pass for `<root>/package_checker_params`, with a finding per line it
    would pass on and the package checker refuse (TREE046), per flag that bypasses a check (TREE022), and per
    last line it would silently drop (TREE047)."""
    out = OrgParams()
    path = root / NAME
    if not applies(ruleset) or not path.is_file():
        return out
    try:
        lines, last = _script_lines(path)
    except OSError as exc:
        out.findings.append(finding("TREE046", shown, f"cannot be read: {exc.strerror or exc}"))
        return out
    if last.strip():
        out.findings.append(finding("TREE047", shown, f"the last line {_text(last)!r} has no newline: the verify "
                                    "script drops it", line=len(lines) + 1))
    for number, raw in enumerate(lines, 1):
        out.findings += _line(_text(raw), number, shown, out.flags)
    return out


def script_arguments(root: Path) -> list[str]:
    """The package checker arguments the verify script builds from `<root>/package_checker_params`, as it builds
    them: `--<line>` for every newline-ended line, the whole expanded unquoted (so split on blanks), whatever the
    round or spelling. `verify --official` passes these; `read_org_params` judges the same lines."""
    path = root / NAME
    if not path.is_file():
        return []
    lines, _ = _script_lines(path)
    return "".join(f" --{line.decode('utf-8', 'surrogateescape')}" for line in lines).split()


def _script_lines(path: Path) -> tuple[list[bytes], bytes]:
    """The newline-ended lines `while read -r line` sees, and what follows the last newline (which it drops).
    Never a FIFO or device, and the first 64 KiB only: a flag file is a few bytes."""
    with open_regular(path) as fh:
        data = fh.read(_MAX_BYTES)
    lines = data.split(b"\n")
    return lines, lines.pop()


def _line(text: str, number: int, shown: str, flags: set[str]) -> list[Finding]:
    """One line as `--$line` unquoted: only its first word becomes an option; a blank line adds a harmless `--`."""
    words = text.split()
    if not words:
        return []
    if text[0].isspace() or len(words) > 1:
        return [finding("TREE046", shown, f"--{text} is split into {len(words) + (text[0].isspace())} arguments, "
                        "the package checker refuses the stray ones", line=number)]
    flag = SPELLINGS.get(words[0])
    if flag is None:
        return [finding("TREE046", shown, f"--{text} is not a package checker option: the verify script stops there",
                        line=number)]
    flags.add(flag)
    if flag == BERT_TRAIN_SAMPLES:
        return []
    return [finding("TREE022", shown, f"--{text} for the whole organisation", line=number)]


def _text(raw: bytes) -> str:
    # a CR stays: `read` keeps it, and "--rcp-bypass\r" is an unknown option to the package checker
    return raw.decode("utf-8", "replace").replace("\r", "\\r")
