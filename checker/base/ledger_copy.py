"""`mlsubmit runs export` and `runs import`: a ledger's entries copied into another ledger (an SQLite file or a
PostgreSQL URL, either way) or archived as JSON lines, and read back from them.

A copy adds only what is missing (the destination's unique key, sha256 and path), so running it again adds nothing,
and it is verified after it is made: every entry of the source is read back from the destination and compared by
its digest (the sha256 of its values as canonical JSON). A (sha256, path) the destination already held with other
values (first seen at another time, say) is kept as it was and named. Entries are copied a batch at a time, each
batch one transaction, in the source's order; memory holds a batch and a digest per entry.

The JSON lines: a first line naming the format, one line per entry (its fields as `runs show --format json`
writes them, not made inert: the values themselves), and a last line with the count and the sha256 of every line
before it; an archive whose last line is missing or does not match is refused whole (exit 2) before anything is
written. Every line is read within a length bound and every entry through the ledger's own guarded readers.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from mlsubmit.checker.base.ledger import VERSION, Entry
from mlsubmit.checker.base.ledger_rows import Reader, entry_of, record

from mlsubmit.core.errors import FatalError
from mlsubmit.core.support.ledger_url import LedgerUrl
from mlsubmit.core.support.safe_io import open_regular

BATCH = 5000  # entries a transaction
LINE_BYTES = 1 << 20  # an entry's line: ten texts of 4 KiB, escaped, are far less
FORMAT = "mlsubmit run ledger"

Where = Path | LedgerUrl


def digest(entry: Entry) -> str:
    """An entry's values as canonical JSON, hashed: equal digests, equal entries."""
    text = json.dumps(entry.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()


@dataclass
class Copied:
    """What a copy did: entries read, added, already there; the keys the destination holds otherwise or not at
    all (none, once verified), and the source's rows that are no entries."""

    read: int = 0
    added: int = 0
    other_values: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)

    def words(self, source: str, dest: str) -> str:
        there = self.read - self.added
        said = f"{self.read} entries of {source}: {self.added} added to {dest}, {there} already there"
        if not self.other_values and not self.missing:
            return said + "; verified: every one is in it with the same values (sha256)"
        return said + f"; {len(self.other_values)} held there with other values, {len(self.missing)} missing"

    @property
    def whole(self) -> bool:
        return not (self.other_values or self.missing or self.left_out)


def _batches(entries: Iterator[Entry]) -> Iterator[list[Entry]]:
    batch: list[Entry] = []
    for entry in entries:
        batch.append(entry)
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _copy(entries: Iterator[Entry], dest: Where, done: Copied) -> dict[tuple[str, str], str]:
    """Record the entries in `dest` a batch at a time; each one's key -> digest."""
    wanted: dict[tuple[str, str], str] = {}
    for batch in _batches(entries):
        for entry in batch:
            wanted.setdefault((entry.sha256, entry.path), digest(entry))  # the first of a key is the one kept
        done.read += len(batch)
        done.added += record(dest, batch)
    return wanted


def _verify(dest: Where, wanted: dict[tuple[str, str], str], done: Copied) -> None:
    with Reader(dest) as reader:
        for entry in reader.entries():
            key = (entry.sha256, entry.path)
            if key in wanted and wanted.pop(key) != digest(entry):
                done.other_values.append(f"{entry.sha256[:12]} {entry.path}")
    done.missing = [f"{sha[:12]} {path}" for sha, path in wanted]


def copy(source: Where, dest: Where) -> Copied:
    """Every entry of `source` into `dest`, then verified there."""
    if str(source) == str(dest):
        raise FatalError(f"--to {dest}: the ledger itself; give another")
    done = Copied()
    with Reader(source) as reader:
        wanted = _copy(reader.entries(), dest, done)
        done.left_out = reader.notes()
    _verify(dest, wanted, done)
    return done


def export_lines(source: Where, out: IO[str]) -> Copied:
    """Every entry of `source` as JSON lines (the format above)."""
    done = Copied()
    lines = hashlib.sha256()

    def put(obj: object) -> None:
        line = json.dumps(obj, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
        lines.update(line.encode("utf-8", "backslashreplace"))
        out.write(line)

    put({"format": FORMAT, "version": VERSION})
    with Reader(source) as reader:
        for entry in reader.entries():
            put(entry.to_dict())
            done.read += 1
        done.left_out = reader.notes()
    out.write(json.dumps({"entries": done.read, "sha256": lines.hexdigest()}) + "\n")
    return done


def _lines(path: Path) -> Iterator[bytes]:
    try:
        with open_regular(path) as stream:
            while line := stream.readline(LINE_BYTES + 1):
                if len(line) > LINE_BYTES:
                    raise FatalError(f"{path}: a line longer than {LINE_BYTES} bytes: not a ledger archive")
                yield line
    except OSError as exc:
        raise FatalError(f"{path}: cannot read it: {exc.strerror or exc}") from None


def _archived(path: Path, line: bytes, number: int) -> dict[str, object]:
    try:
        value = json.loads(line)
    except (UnicodeDecodeError, ValueError, RecursionError):
        value = None
    if not isinstance(value, dict):
        raise FatalError(f"{path}: line {number} is not a JSON object: not a ledger archive; nothing imported")
    return value


def _check_archive(path: Path) -> int:
    """The archive's entry count, once its first line, its last line's count and digest all match; exit 2 else."""
    lines, count, last, number = hashlib.sha256(), 0, b"", 0
    for number, line in enumerate(_lines(path), 1):
        if number == 1 and _archived(path, line, 1) != {"format": FORMAT, "version": VERSION}:
            raise FatalError(f"{path}: its first line is not a run ledger archive's of format {VERSION}; nothing "
                             "imported")
        if last:
            lines.update(last)
            count += 1
            if count > 1:  # an entry's line (the first is the format's): every one is an entry, or none is imported
                got = entry_of(_archived(path, last, number - 1))
                if isinstance(got, str):
                    raise FatalError(f"{path}: line {number - 1} is no ledger entry ({got}); nothing imported")
        last = line
    tail = _archived(path, last, number) if number > 1 else {}
    if tail != {"entries": count - 1, "sha256": lines.hexdigest()}:
        raise FatalError(f"{path}: its last line does not match its entries (cut short, or changed): nothing "
                         "imported")
    return count - 1


def import_lines(path: Path, dest: Where) -> Copied:
    """The archive's entries into `dest`, verified there (the archive is checked whole first)."""
    expected = _check_archive(path)
    done = Copied()

    def entries() -> Iterator[Entry]:
        for number, line in enumerate(_lines(path), 1):
            if number == 1 or number == expected + 2:
                continue
            got = entry_of(_archived(path, line, number))
            if isinstance(got, str):  # changed since it was checked: the batches before it are in
                raise FatalError(f"{path}: line {number} is no ledger entry ({got}); changed while it was read")
            yield got

    wanted = _copy(entries(), dest, done)
    _verify(dest, wanted, done)
    return done
