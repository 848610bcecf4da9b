"""The lines of a log that mlperf-logging's RCP reader can act on, kept while the log is read once.

The reference's `read_submission_file` opens the log again (latin-1, universal newlines) and looks only at lines
that hold one of a few words (`"global_batch_size" in line` and so on); every other line leaves its state as it
was. Keeping each physical line that holds one of those words, in order, and giving the reader just those lines
therefore gives the reader's own answer without reading the file twice. TRIGGERS is checked against the
installed reader's source by tests/differential/test_rcp_lines.py: a new word in a later mlperf-logging fails
a test instead of being missed.
"""

from __future__ import annotations

TRIGGERS: tuple[bytes, ...] = (
    b"global_batch_size",
    b"submission_benchmark",
    b"eval_accuracy",
    b"eval_error",
    b"train_samples",
    b"run_stop",
)


TOKEN = b":::MLLOG "
_SPARSE = 1 << 12  # fewer records than one per this many bytes: raw job output, looked at token by token
_PROBE = 1 << 16


def collect(block: bytes, out: list[bytes]) -> None:
    """Append to `out`, in order, every line of `block` (whole lines, split at b"\\n") that holds a trigger and
    the MLLOG token (the reader passes over any other line).

    Raw job output with few records is looked at record by record; a block of records, trigger by trigger with
    bytes.find (C speed). Either way a line is kept once however many triggers it holds."""
    first = block.find(TOKEN)
    if first < 0:
        return
    probe = min(len(block) - first, _PROBE)  # how dense are records where they start: a sample, not a count
    if block.count(TOKEN, first, first + probe) * _SPARSE < probe:
        _collect_sparse(block, first, out)
        return
    starts: set[int] = set()
    end = len(block)
    for word in TRIGGERS:
        at = block.find(word)
        while at >= 0:
            start = block.rfind(b"\n", 0, at) + 1
            starts.add(start)
            stop = block.find(b"\n", at)
            if stop < 0:
                break
            at = block.find(word, stop)
    for start in sorted(starts):
        stop = block.find(b"\n", start)
        out.append(block[start : stop if stop >= 0 else end])


def _collect_sparse(block: bytes, at: int, out: list[bytes]) -> None:
    while at >= 0:
        start = block.rfind(b"\n", 0, at) + 1
        stop = block.find(b"\n", at)
        line = block[start : stop if stop >= 0 else len(block)]
        if any(word in line for word in TRIGGERS):
            out.append(line)
        if stop < 0:
            return
        at = block.find(TOKEN, stop)


def as_text(lines: list[bytes]) -> tuple[str, ...]:
    """The kept lines as the reference reads them: latin-1, and "\\r\\n" or a lone "\\r" ending a line."""
    text = b"\n".join(lines).replace(b"\r\n", b"\n").replace(b"\r", b"\n").decode("latin-1")
    return tuple(text.split("\n")) if lines else ()
