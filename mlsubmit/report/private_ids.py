"""`report --generate-private-ids DIR`: the `privateid.json` files mlperf-logging's result summarizer writes with
`--generate_private_ids`, into a folder of their own (the checked tree is never written to).

The summarizer (4.1.68, `_get_id_from_sysinfo`) joins `str()` of nine system-description values, takes the SHA-256
hex digest, folds its 32 bytes into 4 by XOR over equal segments (humanhash's `compress`) and spells each with its
256-word list: `word-word-word-word`. A join already hashed in the same run gets the system id appended, so two
identical systems get different ids. It writes `results/<system>/privateid.json` (`json.dump(..., indent=4)`, no
final newline) for each system folder, in name order, that has none with a `private_id`; a system whose
description is missing or not JSON is passed over, and one that lacks a hashed key stops the summarizer
(KeyError) — here that system is passed over with REP010 instead. The verify script runs the summarizer once per
organisation, so the joins seen are counted per organisation.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlsubmit.checker import OrgTree
from mlsubmit.checker.upstream.installed import private_id_words
from mlsubmit.core.codes import finding
from mlsubmit.core.errors import FatalError
from mlsubmit.core.findings import Finding
from mlsubmit.core.support import jsontext
from mlsubmit.core.support.safe_io import read_bounded

HASHED = ("division", "submitter", "system_name", "number_of_nodes", "host_processor_model_name",
          "host_processors_per_node", "accelerator_model_name", "accelerators_per_node", "framework")  # fmt: skip
FILE = "privateid.json"
WORDS = 4
_LIMIT = 1 << 20


@dataclass
class Generated:
    written: list[Path] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # systems whose tree already has a private id
    ids: dict[tuple[str, str], str] = field(default_factory=dict)  # (org display, system) -> the id written
    findings: list[Finding] = field(default_factory=list)


def spell(hexdigest: str) -> str:
    """humanhash's four words for a hex digest: its bytes XOR-folded into four equal segments."""
    data = bytes.fromhex(hexdigest)
    size = len(data) / WORDS
    folded = [0] * WORDS
    for i, byte in enumerate(data):
        folded[min(int(i // size), WORDS - 1)] ^= byte
    words = private_id_words()
    return "-".join(words[b] for b in folded)


def private_id(desc: dict[str, Any], system: str, seen: set[str]) -> str:
    """The summarizer's id for a system description; `seen`: the joins already hashed in this run (updated)."""
    joined = "".join(str(desc[key]) for key in HASHED)
    if joined in seen:
        joined += system
    seen.add(joined)
    return spell(hashlib.sha256(joined.encode("utf-8")).hexdigest())


def generate(orgs: list[OrgTree], out: Path) -> Generated:
    result = Generated()
    for org in orgs:
        seen: set[str] = set()
        results = org.sub("results")
        names = sorted(os.listdir(results)) if results.is_dir() else []
        for system in names:
            if (results / system).is_dir():
                _one(org, system, seen, out, result)
    return result


def _one(org: OrgTree, system: str, seen: set[str], out: Path, result: Generated) -> None:
    existing = _json(org.sub("results", system, FILE))
    if isinstance(existing, dict) and "private_id" in existing:
        result.kept.append(system)
        return
    desc = _json(org.sub("systems", f"{system}.json"))
    if not isinstance(desc, dict):
        return  # the summarizer prints the error and goes on
    missing = [k for k in HASHED if k not in desc]
    if missing:
        result.findings.append(finding("REP010", org.shown("systems", f"{system}.json"),
                                       f"no {missing[0]!r}: the result summarizer's --generate_private_ids stops "
                                       f"here (KeyError), so {system} gets no private id"))  # fmt: skip
        return
    try:
        made = private_id(desc, system, seen)
    except (UnicodeEncodeError, ValueError) as exc:  # a lone surrogate; an integer str() refuses (4,300 digits)
        result.findings.append(finding("REP010", org.shown("systems", f"{system}.json"),
                                       f"a hashed value the summarizer cannot write as UTF-8 text: its "
                                       f"--generate_private_ids stops here ({type(exc).__name__}), so {system} gets "
                                       "no private id"))  # fmt: skip
        return
    text = json.dumps({"private_id": made}, indent=4)
    result.written.append(_write(out / org.name / "results" / system / FILE, text))
    result.ids[(org.display, system)] = made


def _json(path: Path) -> Any:
    try:
        return jsontext.loads(read_bounded(path, _LIMIT), finite=False)  # NaN as json.loads reads it; depth bounded
    except (OSError, ValueError):
        return None


def _write(path: Path, text: str) -> Path:
    """A new file, or one already holding these bytes: a different file is never replaced (exit 2)."""
    data = text.encode("utf-8")
    if path.exists():
        try:
            same = path.is_file() and read_bounded(path, _LIMIT) == data
        except OSError:
            same = False
        if not same:
            raise FatalError(f"{path}: already exists with other content; --generate-private-ids never replaces a file")
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "xb") as fh:
            fh.write(data)
    except OSError as exc:
        raise FatalError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
