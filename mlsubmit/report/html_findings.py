"""The HTML report's findings: grouped as the text report groups them, and the escaping every part of the page uses.

Rows come from formats.causes.reading_order, the one home of how findings are read (count first, places as a
path pattern, causes first with their consequences under them, a shared hint once); every place of a pattern stays
one click away in the row's details. Paths may wrap after each separator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from mlsubmit.core.findings import Finding, Report, Severity, location
from mlsubmit.core.support.display_escape import html_text as esc
from mlsubmit.formats.causes import Entry, attach_causes, reading_order
from mlsubmit.formats.grouped import group

MAX_FINDING_ROWS = 5000  # groups; a page with more rows is slow to filter: the rest are counted, `check` lists them
MAX_PLACES_LISTED = 200  # a group's places listed one by one under its pattern, at most


def findings_section(findings: Sequence[Finding], base: str = "") -> str:
    """Findings grouped as the text report groups them (formats.causes.reading_order): one row per code and
    message with its count first and its places as a pattern, causes first with their consequences under them, a
    hint shared by consecutive rows given once. Every place stays one click away, in the row's details."""
    attached = attach_causes(Report(tree=list(findings))).tree
    # waived findings last, under their own heading and with their waiver, as the text report lists them
    entries = reading_order([f for f in attached if f.waived is None])
    waived = [Entry(g, None, None) for g in group(f for f in attached if f.waived is not None)]
    if waived:
        count = sum(e.group.count for e in waived)
        waived[0] = replace(waived[0], heading=f"waived ({count} finding(s); they do not fail the run)")
    entries += waived
    families = sorted({f.family for f in findings})
    options_sev = "".join(f'<option value="{s.value}">{s.value}</option>' for s in Severity)
    options_fam = "".join(f'<option value="{esc(f)}">{esc(f)}</option>' for f in families)
    shown = sum(e.group.count for e in entries[:MAX_FINDING_ROWS])
    parts = [
        '<h2 id="findings-title">Findings</h2><p>',
        f'<label>severity <select id="f-severity"><option value="">all</option>{options_sev}</select></label> ',
        f'<label>family <select id="f-family"><option value="">all</option>{options_fam}</select></label> ',
        f'<span class="meta">showing <span id="f-shown">{shown}</span> of {len(findings)} in '
        f"{len(entries)} group(s)</span>"
        + (f' · paths relative to <code class="path">{path_html(base)}</code>' if base else "")
        + "</p>",
        '<table id="findings"><thead><tr><th>count</th><th>severity</th><th>code</th><th>message</th>'
        "<th>where</th></tr></thead><tbody>",
    ]
    parts.extend(_group_rows(entry, base) for entry in entries[:MAX_FINDING_ROWS])
    parts.append("</tbody></table>")
    if len(entries) > MAX_FINDING_ROWS:
        rest = sum(e.group.count for e in entries[MAX_FINDING_ROWS:])
        parts.append(
            f"<p>{rest} more in {len(entries) - MAX_FINDING_ROWS} group(s); run <code>mlsubmit check</code> "
            "for all.</p>"
        )
    return "".join(parts)


def _relative(text: str, base: str) -> str:
    return text.replace(base.rstrip("/") + "/", "") if base and base != "." else text


def _group_rows(entry: Entry, base: str) -> str:
    g, f = entry.group, entry.group.first
    data = f'data-severity="{esc(f.severity.value)}" data-family="{esc(f.family)}"'
    follows = " follows" if g.cause else ""
    out = []
    if entry.heading:
        kind = "cause" if f.waived is None else "waived"  # the filter hides a cause's heading with its rows
        out.append(f'<tr class="{kind}"><td colspan="5">{esc(_relative(entry.heading, base))}</td></tr>')
    shown = g.where()
    where = f"<code>{path_html(_relative(shown, base))}</code>"
    if shown != ", ".join(location(x) for x in g.findings):  # a pattern: the places it stands for, on a click
        listed = "".join(f"<li><code>{path_html(_relative(location(x), base))}</code></li>"
                         for x in g.findings[:MAX_PLACES_LISTED])  # fmt: skip
        more = f"<li>{g.count - MAX_PLACES_LISTED} more</li>" if g.count > MAX_PLACES_LISTED else ""
        where = f"<details><summary>{where}</summary><ul>{listed}{more}</ul></details>"
    level = f.severity.value if f.waived is None else f"{f.severity.value} (waived)"
    out.append(
        f"<tr {data}>"
        f'<td class="num{follows}" data-count="{g.count}">{g.count}\u00d7</td>'
        f'<td class="sev-{esc(f.severity.value)}">{esc(level)}</td><td>{esc(f.code)}</td>'
        f"<td>{esc(_relative(f.message, base))}{_waived_note(f)}</td><td>{where}</td></tr>"
    )
    if entry.hint is not None:
        hint = esc(_relative(entry.hint, base))
        out.append(f'<tr class="hint{follows}" {data}><td></td><td colspan="4">hint: {hint}</td></tr>')
    return "".join(out)


def _waived_note(f: Finding) -> str:
    """A waived finding's reason, reference, who and expiry, under its message (the group shares its waiver)."""
    w = f.waived
    if w is None:
        return ""
    return (f'<br><span class="meta">waived: {esc(w.reason)} (reference {esc(w.reference)}; {esc(w.who)}; '
            f"until {esc(w.expires)}; waiver at <code>{path_html(w.where())}</code>)</span>")


def path_html(path: str) -> str:
    """An escaped path that may wrap after each separator, and nowhere else unless a part is wider than the page."""
    return "/<wbr>".join(esc(part) for part in path.split("/"))
