"""What one log may expand to: records read and bytes read (decompressed, for raw job output). Past either, the
rest of the log is not read and LOG012 says so. The reader hands records on as it reads (`hand_records_on`) and the
checks keep per-key state, not records, so memory does not follow these numbers; they bound time (10 M records take
about 40 s). A rule file that reads the whole log runs on the log read again, kept whole up to WHOLE_RECORDS.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections.abc import Callable, Iterator
from itertools import accumulate
from typing import TYPE_CHECKING, Any

import msgspec
from mlsubmit.checker.logs.input import BTOKEN, MAX_LINE, Reading, SupportsRead, numbered_records, whole_lines
from mlsubmit.checker.logs.rcp_lines import collect

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding

if TYPE_CHECKING:
    from mlsubmit.checker.logs.reader import ParsedLog, Record

Sink = Callable[[list["Record"]], None]  # takes each batch of records as it is read (the log keeps none)

# A round-6.1 result file holds up to 100 MiB of framework log: a few hundred thousand records at most; a 1 GB log
# of nothing but records holds about 5 M.
MAX_RECORDS = 10_000_000
# Records a log keeps when it is read without a sink (advise, package, power logs): what memory does follow, so
# they are bounded by bytes too: the MLLOG lines kept, as decoded_cost counts them (record_bytes), plus
# KEPT_OVERHEAD a record (what a Record, its dict and a short value take in memory) stay within MAX_KEPT_BYTES
# whether they are small, wide or nested (about 48,000 records of mllog's usual 240 bytes, 2.1 kB each as counted;
# real logs hold a few thousand).
MAX_KEPT = 1_000_000
MAX_KEPT_BYTES = 96 << 20
KEPT_OVERHEAD = 600
# A decoded value takes far more than its JSON text: `[{},{}]` 24 times it, an object of 1,500 short keys 9 times
# (5,800 such records kept 661 MB under budgets that counted 96 MiB of text; issue 54). Every budget here counts
# ELEMENT_COST a list element, dict entry or container on top of the text (decoded_cost): measured with tracemalloc
# on Python 3.11, no shape takes more than 69 bytes an element past its text (a list of {"a": 1.5}: 22 times its
# text), floats and ints 29-31, [] and {} 31-35, short strings 55; 96 leaves a margin.
ELEMENT_COST = 96
# Records kept for the rule files that need the whole list (`loglines`, or asked for late: rules.engine), within
# WHOLE_BYTES too. The corpus's largest log holds 1,492.
WHOLE_RECORDS = 200_000
MAX_BYTES = 4 << 30  # read from the file, or from what a gzip-compressed one expands to
# What keeps values while `check` streams a log is bounded by their size as well as their count (a record may hold
# a 16 MiB value: MAX_LINE): the records a rule file asked for early may still need (rules.engine's prefix), the
# log read again for the whole-log rule files, the HP table's records and the facts. Sizes are what the values take
# decoded, counted from their JSON text (decoded_cost), plus KEPT_OVERHEAD a record (value_size); real logs stay far
# below each.
PREFIX_BYTES = 64 << 20
WHOLE_BYTES = 160 << 20  # ~100,000 records of mllog's usual 240 bytes (1.7 kB each as counted)
HP_BYTES = 32 << 20
FACTS_BYTES = 32 << 20  # the first record of each key and the series (facts.FactsBuilder)
FACTS_TOTAL = 160 << 20  # the facts of all a check's logs together (engine.kept_facts)
# One value (or metadata entry) the facts keep, and so everything made of them: run sets' names, messages, the
# ledger. A longer one is kept clipped, with its length and digest so two long values stay apart (clip_value).
# No value of the corpus passes 512 bytes; 10 logs with a 15 MiB submission_platform each took 1.4 GB (issue 49).
VALUE_CHARS = 1024  # a string's characters
VALUE_BYTES = 16 << 10  # a list's or an object's JSON text


# The lines kept for the RCP check (every eval_accuracy, train_samples, ... line): the largest real log has ~1,500
# records in all; past either bound the check reads the first ones, and LOG012 says so.
RCP_LINES = 50_000
RCP_BYTES = 4 << 20  # the reference reader holds each line several times over, in every run of a folder


def keep_rcp_lines(log: ParsedLog, block: bytes, kept: list[bytes]) -> None:
    """rcp_lines.collect, bounded: memory for these lines must not follow the records either."""
    if log.rcp_cut:
        return
    start = len(kept)
    collect(block, kept)
    log.rcp_bytes += sum(map(len, kept[start:]))
    if len(kept) > RCP_LINES or log.rcp_bytes > RCP_BYTES:
        while kept and (len(kept) > RCP_LINES or log.rcp_bytes > RCP_BYTES):
            log.rcp_bytes -= len(kept.pop())
        log.rcp_cut = True
        log.findings.append(finding("LOG012", log.path, f"the lines the RCP check reads pass {RCP_LINES:,} lines "
                                    f"or {RCP_BYTES >> 20} MiB; it reads the first {len(kept):,}"))


def decoded_cost(text: bytes) -> int:
    """What the JSON `text` takes once decoded, as the budgets above count it: its bytes (four times over when any is
    past ASCII: one wide character makes a whole str four bytes a character) plus ELEMENT_COST for each `,` `:` `[`
    `{`, each an element, a dict entry or a container. Counted in C; a comma inside a string counts too (over)."""
    size = len(text) if text.isascii() else 4 * len(text)
    return size + ELEMENT_COST * (text.count(b",") + text.count(b":") + text.count(b"[") + text.count(b"{"))


def value_size(values: list[Any]) -> int:
    """What `values` (records' values, or anything decoded from a log) take in memory, as the budgets above count
    it: decoded_cost of their compact JSON text (one C-level pass) plus KEPT_OVERHEAD each. A value msgspec cannot
    encode is measured by its repr, or counted as the longest line when even that fails (an integer of more digits
    than str() allows)."""
    try:
        text = msgspec.json.encode(values)
    except (TypeError, ValueError, OverflowError, RecursionError):
        return sum(map(_repr_size, values))
    # the list's own `[` and commas are not the values'
    return decoded_cost(text) + (KEPT_OVERHEAD - ELEMENT_COST) * len(values)


def _repr_size(value: Any) -> int:
    try:
        return decoded_cost(repr(value).encode("utf-8", "surrogatepass")) + KEPT_OVERHEAD
    except (ValueError, RecursionError):
        return MAX_LINE


def clipped_text(text: str, total: int | None = None) -> str:
    """`text` cut to VALUE_CHARS, with a note of its length (`total`: of what it was made from) and its digest."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{text[:VALUE_CHARS]}... [clipped: {total or len(text):,} characters, sha256 {digest}]"


def clip_value(value: Any) -> tuple[Any, bool]:
    """`value` within VALUE_CHARS (a string) or VALUE_BYTES (a list or an object, else its JSON text clipped), and
    whether it was clipped. Numbers and short strings, nearly every value, are handed back as they are."""
    if type(value) is str:
        return (value, False) if len(value) <= VALUE_CHARS else (clipped_text(value), True)
    if not isinstance(value, (list, dict)):
        return value, False
    try:
        text = msgspec.json.encode(value).decode("utf-8", "surrogatepass")
    except (TypeError, ValueError, OverflowError, RecursionError):
        text = repr(value) if value_size([value]) < MAX_LINE else type(value).__name__
    return (value, False) if len(text) <= VALUE_BYTES else (clipped_text(text), True)


def records_size(records: list[Record]) -> int:
    """value_size of the records' values, plus their keys' length (a key may be long too; the time and the line
    are within KEPT_OVERHEAD)."""
    return value_size([r.value for r in records]) + sum(map(len, [r.key for r in records]))


def records_that_fit(records: list[Record], room: int) -> tuple[int, int]:
    """How many of `records`, from the first, fit in `room` bytes (records_size), and their size: the whole batch in
    one pass when it fits, else record by record (once, where a keeper fills up)."""
    total = records_size(records)
    if total <= room:
        return len(records), total
    sizes = list(accumulate(records_size([r]) for r in records))
    n = bisect_right(sizes, room)
    return n, sizes[n - 1] if n else 0


def records_limit(sink: Sink | None) -> int:
    """MAX_RECORDS for a log handed on as it is read; MAX_KEPT for one that keeps its records."""
    return MAX_RECORDS if sink is not None else MAX_KEPT


def kept_cost(log: ParsedLog) -> int:
    """What the records a log keeps take, as MAX_KEPT_BYTES counts it."""
    return log.kept_bytes + log.record_count * KEPT_OVERHEAD


def over_limit(log: ParsedLog, size: int, limit: int) -> bool:
    """True when the log has reached `limit` records, MAX_BYTES or (records kept) MAX_KEPT_BYTES; the first time,
    LOG012 is filed."""
    heavy = limit == MAX_KEPT and kept_cost(log) > MAX_KEPT_BYTES
    if log.record_count < limit and size <= MAX_BYTES and not heavy:
        return False
    if any(f.code == "LOG012" and f.message.startswith("the log holds") for f in log.findings):  # not the RCP's
        return True
    what = f"records past {MAX_KEPT_BYTES >> 20} MiB kept (at {log.record_count:,} records)" if (
        heavy and log.record_count < limit) else None
    log.findings.append(cut_finding(log.path, log.record_count, limit, log.last_line or None, what))
    return True


def cut_finding(path: str, count: int, limit: int, line: int | None, what: str | None = None) -> Finding:
    """LOG012 for a log whose reading stopped at `limit` records or MAX_BYTES, said alike by check and package."""
    what = what or (f"{limit:,} records or more" if count >= limit else f"more than {MAX_BYTES:,} bytes")
    return finding("LOG012", path, f"the log holds {what}; the rest was not read", line=line)


_MARKS = frozenset({"run_start", "run_stop"})


# `,` `:` `[` `{` that every record line holds and a Record does not keep as elements: its object and the separators
# of time_ms, key, value and metadata (KEPT_OVERHEAD covers the Record, its dict and a short value)
ENVELOPE_ELEMENTS = 8


def record_bytes(block: bytes) -> int:
    """What the records read from `block` take once decoded (decoded_cost of their MLLOG lines, less each line's
    ENVELOPE_ELEMENTS): the whole block's when records are on most lines (a little over), else each record's line
    measured (few of them: a Python step each)."""
    hits = block.count(BTOKEN)
    if not hits:
        return 0
    if hits * 2 >= block.count(b"\n"):
        return max(len(block), decoded_cost(block) - ELEMENT_COST * ENVELOPE_ELEMENTS * hits)
    total, pos = 0, block.find(BTOKEN)
    while pos >= 0:
        end = block.find(b"\n", pos)
        end = len(block) if end < 0 else end
        line = block[block.rfind(b"\n", 0, pos) + 1 : end + 1]
        total += max(len(line), decoded_cost(line) - ELEMENT_COST * ENVELOPE_ELEMENTS)
        pos = block.find(BTOKEN, end)
    return total


def hand_records_on(log: ParsedLog, sink: Sink | None, block: bytes = b"", *, cut: bool = True) -> None:
    """Count the records the reader just added (cut to the limit), note the first run_start and run_stop, and
    give them to `sink`, which keeps what it needs: the log then keeps none. Without a sink the log keeps them,
    and `block` (the bytes they were read from) counts towards MAX_KEPT_BYTES."""
    start = 0 if sink is not None else log.record_count
    batch = log.records
    room = records_limit(sink) - log.record_count
    if cut and len(batch) - start > room:
        del batch[start + room :]
    if len(batch) == start:
        return
    if sink is None:
        log.kept_bytes += record_bytes(block)
    log.record_count += len(batch) - start
    log.last_line = batch[-1].line
    marks = log.marks
    if len(marks) < 2:  # run_order's two keys, first of each
        for rec in [r for r in (batch[start:] if start else batch) if r.key in _MARKS]:
            if rec.key not in marks:
                marks[rec.key] = rec
    if sink is not None:
        sink(batch)
        log.records = []


# Reading a run's output for packaging, within the same limits (LOG012 at the same byte as check's reader)


def raw_records(stream: SupportsRead, display: str, cut: list[Finding]) -> Iterator[tuple[int, bytes]]:
    """numbered_records within `check`'s limits (MAX_RECORDS, counting a line that does not decode as one,
    and MAX_BYTES, stopping at the same byte as `check`'s reader), and LOG012 into `cut` where it stops, as
    `check` says it: packaging copies raw job output through this, so the same bytes give the same cut."""
    reading = Reading(MAX_BYTES)
    count, last = 0, None
    for line, raw in numbered_records(stream, reading):
        yield line, raw
        count, last = count + 1, line
        if count >= MAX_RECORDS:
            break
    if count >= MAX_RECORDS or reading.stopped:
        cut.append(cut_finding(display, count, MAX_RECORDS, last))


def output_pieces(stream: SupportsRead, display: str, cut: list[Finding]) -> Iterator[tuple[bool, bytes]]:
    """A run's whole output as (is a record's line, bytes): each line holding the token alone, the lines between
    records as one piece, all of it byte for byte (a whole-output copy, submission/fulllog.py). Read in chunks
    within `check`'s limits, as raw_records reads: past them the rest is not read, and LOG012 goes into `cut`."""
    reading = Reading(MAX_BYTES)
    count, line, last = 0, 1, None
    for block in whole_lines(stream, reading):
        pos, find = 0, block.find
        at = find(BTOKEN)
        while at >= 0:
            start = block.rfind(b"\n", 0, at) + 1
            end = find(b"\n", at) + 1 or len(block)
            if start > pos:
                yield False, block[pos:start]
            line += block.count(b"\n", pos, start)
            yield True, block[start:end]
            count, last, pos = count + 1, line, end
            line += 1
            if count >= MAX_RECORDS:
                cut.append(cut_finding(display, count, MAX_RECORDS, last))
                return
            at = find(BTOKEN, end)
        if pos < len(block):
            yield False, block[pos:]
        line += block.count(b"\n", pos)
    if reading.stopped:
        cut.append(cut_finding(display, count, MAX_RECORDS, last))
