"""What mlperf-logging's tools open in an organisation folder, found as they find it (issue 54).

The package checker, the result summarizer and the RCP checker list `results/` and each system folder with
`os.listdir` and `os.path.isdir` (a link to a folder counts), then find a benchmark's logs with
`glob.glob('<benchmark folder>/result_*.txt', recursive=True)`; the summarizer finds a run's power logs with
`glob.glob('<benchmark folder>/power/<run>/node_*.txt', recursive=True)` (and `sw_*.txt`) when the benchmark folder
has a `power` folder. The folder names are part of the pattern, so a system folder named `**` makes the glob reach
logs at any depth. These functions make the same calls, from the folder the tools run in, so the paths they give
are the ones the tools open (links followed as they follow them). The pattern strings are copied from
package_checker.py, result_summarizer.py and rcp_checker.py of 4.1.68; tests/unit/submission/test_gate.py holds them
to the installed release's source.

`reference_takes` is the reference's reading of one line (mlp_parser/ruleset_*.py for 1.0.0 on): whether it makes a
record of it, which it then judges and whose values may choose rule files.
"""

from __future__ import annotations

import glob
import json
import os
import re

RESULT_PATTERN = "{folder}/result_*.txt"
POWER_PATTERNS = ("{folder}/power/{result}/node_*.txt", "{folder}/power/{result}/sw_*.txt")
TOKEN = ":::MLLOG "
_BEFORE_TOKEN = re.compile(".*" + TOKEN)


def _sub_folders(folder: str, cwd: str) -> list[str]:
    """`_get_sub_folders` of the tools: every entry of the folder that `os.path.isdir` (a link to a folder too)."""
    try:
        names = sorted(os.listdir(os.path.join(cwd, folder)))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if os.path.isdir(os.path.join(cwd, folder, n))]


def benchmark_folders(cwd: str, org: str) -> list[str]:
    """`<org>/results/<system>/<benchmark>` as the tools list them, relative to `cwd` (where they run)."""
    return [bench for system in _sub_folders(os.path.join(org, "results"), cwd) for bench in _sub_folders(system, cwd)]


def result_files(cwd: str, org: str) -> list[str]:
    """Every path the tools open as a result log (relative to `cwd`), once each, in their own glob's words."""
    found: list[str] = []
    for bench in benchmark_folders(cwd, org):
        found += glob.glob(RESULT_PATTERN.format(folder=bench), root_dir=cwd, recursive=True)
    return sorted(set(found))


def power_files(cwd: str, org: str, results: list[str]) -> list[str]:
    """The power logs the summarizer opens for those result logs (relative to `cwd`)."""
    found: list[str] = []
    for result in results:
        bench = os.path.dirname(result)
        if not os.path.isdir(os.path.join(cwd, bench, "power")):
            continue
        run = result.split("/")[-1].split(".")[0]
        for pattern in POWER_PATTERNS:
            found += glob.glob(pattern.format(folder=bench, result=run), root_dir=cwd, recursive=True)
    return sorted(set(found))


def reference_takes(line: str) -> bool:
    """Whether the reference makes a record of this line (one line as its text-mode reader gives it): the text
    from the last `:::MLLOG ` on, decoded by `json.loads` (NaN, Infinity and 1e999 included), with a `time_ms`
    that `float` takes and a key, value and metadata."""
    if TOKEN not in line:
        return False
    text = _BEFORE_TOKEN.sub(TOKEN, line).strip()
    try:
        record = json.loads(text[len(TOKEN) :])
        float(record["time_ms"])
        return all(k in record for k in ("key", "value", "metadata"))
    except Exception:  # a ValueError is a line it skips, any other a crash: no record either way
        return False
