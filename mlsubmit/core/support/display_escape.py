"""Text from a checked tree made inert for display: it can show itself, never steer the reader's terminal or CI.

File names, log values and messages may hold newlines (a forged `x: PASS` line or `::error` command), ANSI or OSC
escapes (colours, hyperlinks, a cleared screen), bidirectional overrides (text that reads other than it is) and
lone surrogates (unencodable). Each becomes a visible escape; every other character is kept as it is.
"""

from __future__ import annotations

import html
import re
import sys

# C0 controls but tab, DEL, C1 controls, line/paragraph separators, bidi embeddings/overrides/isolates, surrogates.
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r"}


def _visible(match: re.Match[str]) -> str:
    ch = match.group()
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def inert(text: str) -> str:
    """`text` on one line, with every control, bidi or surrogate character shown as an escape (`\\x1b`)."""
    return _UNSAFE.sub(_visible, text)


# A spreadsheet reads a cell starting with one of these as a formula (=HYPERLINK(...), +cmd|..., @SUM(...)); tab and
# CR start one too in some. Numbers (-1.5) are left as they are.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def html_text(value: object) -> str:
    """Any value as HTML text or attribute content: inert first, since a right-to-left override or a NUL would
    otherwise survive escaping and reorder or cut the text."""
    return html.escape(inert(str(value)), quote=True)


def spreadsheet_cell(text: str) -> str:
    """A CSV cell that shows as text in a spreadsheet: inert (controls, CR, LF and bidi characters escaped), and
    a quote before a leading = + - @ tab or CR, so that no value from a tree becomes a formula."""
    shown = inert(text)
    if text.startswith(_FORMULA_START) and not _NUMBER.fullmatch(text):
        return "'" + shown
    return shown


def notice(line: str) -> None:
    """One line on stderr for the person running mlsubmit (a note, a usage error), inert: it may name files of a
    tree, whose names can hold escape sequences and newlines."""
    print(inert(line), file=sys.stderr)
