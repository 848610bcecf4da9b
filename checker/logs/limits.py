"""What one log may expand to: records kept and bytes read (decompressed, for raw job output). Past either, the
rest of the log is not read and LOG012 says so: memory and time stay bounded by these numbers, whatever the input
(4 MB of gzip held 10 M short records, 5 GB of memory once read).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlsubmit.codes import finding

if TYPE_CHECKING:
    from mlsubmit.checker.logs.reader import ParsedLog

# A round-6.1 result file holds up to 100 MiB of framework log: a few hundred thousand records at most.
MAX_RECORDS = 1_000_000
MAX_BYTES = 4 << 30  # read from the file, or from what a gzip-compressed one expands to


def over_limit(log: ParsedLog, size: int) -> bool:
    """True when the log has reached a limit; the first time, LOG012 is filed and the records cut to MAX_RECORDS."""
    records = len(log.records)
    if records < MAX_RECORDS and size <= MAX_BYTES:
        return False
    if any(f.code == "LOG012" for f in log.findings):
        return True
    what = f"{MAX_RECORDS:,} records or more" if records >= MAX_RECORDS else f"more than {MAX_BYTES:,} bytes"
    del log.records[MAX_RECORDS:]
    last = log.records[-1].line if log.records else None
    log.findings.append(finding("LOG012", log.path, f"the log holds {what}; the rest was not read", line=last))
    return True
