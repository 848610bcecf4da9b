"""The HTML report's charts, as inline SVG drawn with matplotlib (imported when a page has charts): the time to
train per system and its runs, performance per dollar against a baseline, and what every chart shares (a figure as
SVG text, the colour of a failure). The evidence section (evidence_html.py) draws with the same.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

from mlsubmit.core.support.display_escape import inert
from mlsubmit.report.compare import Group
from mlsubmit.report.data import ResultRow

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# The page's class of each RCP status: the results table's colour and the chart's fail mark
RCP_CLASS = {"Pass": "pass", "Fail": "fail", "Interp. Fail": "fail", "Missing": "warn", "No RCP": "warn",
             "Unknown state": "warn"}  # fmt: skip
LOG_RANGE = 10.0  # a chart whose times span more than this factor gets a log axis, so short runs stay visible
PAIR_WIDTH, WIDE_WIDTH = 6.0, 11.0  # inches: a chart beside the other division's, or alone across the page
DOT_SPREAD = 0.5  # a row's runs are spread over this much of its height (the bar is 0.6 high)
FAIL_COLOUR = "#b3261e"


def _time_range(rows: Sequence[ResultRow]) -> tuple[float, float] | None:
    values = [v for r in rows for v in (r.score.time_to_train_minutes, *(run.minutes for run in r.score.runs))
              if v is not None and v > 0]  # fmt: skip
    return (min(values), max(values)) if values else None


def figure_svg(fig: Figure, salt: str) -> str:
    # lazy: matplotlib: ~1 s to import; only a page with charts needs it
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt, "font.size": 9}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def _label_rows(ax: Axes, labels: Sequence[str]) -> None:
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels([inert(label) for label in labels])
    for label in ax.get_yticklabels():
        label.set_parse_math(False)  # a "$" in a system id must not start TeX
    ax.set_ylim(len(labels) - 0.5, -0.5)
    ax.grid(axis="x", color="#d0d7de", linewidth=0.6)
    ax.set_axisbelow(True)


def chart_svg(rows: Sequence[ResultRow], salt: str, *, width: float = PAIR_WIDTH) -> str:
    """Horizontal bars: the score per system; dots: each run (hollow: dropped by the olympic mean; x: not counted).

    Times that span more than LOG_RANGE× get a log axis (a 6-minute run beside a 1,200-minute one).
    """
    # lazy: matplotlib: ~1 s to import; only a page with charts needs it
    from matplotlib.figure import Figure

    rows = sorted(rows, key=lambda r: (r.score.time_to_train_minutes is None, r.score.time_to_train_minutes or 0))
    fig = Figure(figsize=(width, 0.9 + 0.45 * len(rows)), layout="constrained")
    ax = fig.add_subplot()
    span = _time_range(rows)
    log = span is not None and span[1] > LOG_RANGE * span[0]
    left = span[0] / 1.5 if span is not None and log else 0.0
    for y, row in enumerate(rows):
        _draw_row(ax, y, row, left)
    if span is not None and log:
        # lazy: matplotlib: ~1 s to import; only a page with charts needs it
        from matplotlib.ticker import FuncFormatter

        ax.set_xscale("log")
        ax.set_xlim(left, span[1] * 1.6)  # room for the score label right of the longest bar
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,g}"))  # 1,000 rather than 10³
    else:
        ax.set_xlim(left=0)
    ax.set_xlabel("time to train (minutes, log scale)" if log else "time to train (minutes)")
    _label_rows(ax, [r.score.system + (" (RCP fail)" if _rcp_failed(r) else "") for r in rows])
    for label, row in zip(ax.get_yticklabels(), rows, strict=True):
        if _rcp_failed(row):
            label.set_color(FAIL_COLOUR)
    return figure_svg(fig, salt)


def _rcp_failed(row: ResultRow) -> bool:
    return RCP_CLASS.get(row.score.rcp.status) == "fail"


def _spread(count: int) -> list[float]:
    """Vertical offsets within a bar for `count` runs, so runs at nearly the same time stay apart, not a blob."""
    if count <= 1:
        return [0.0] * count
    return [-DOT_SPREAD / 2 + DOT_SPREAD * k / (count - 1) for k in range(count)]


def _draw_row(ax: Axes, y: int, row: ResultRow, left: float) -> None:
    score = row.score.time_to_train_minutes
    failed = _rcp_failed(row)
    if score is not None:
        ax.barh([y], [score - left], left=left, height=0.6, color=FAIL_COLOUR if failed else "#4c78a8",
                alpha=0.25 if failed else 0.35, hatch="//" if failed else None, zorder=1)  # fmt: skip
        ax.text(score, y - 0.33, f" {score:.2f}" + (" RCP fail" if failed else ""), va="bottom", fontsize=8,
                color=FAIL_COLOUR if failed else "#1b1f24", parse_math=False)  # fmt: skip
    timed = sorted(((run.minutes, run) for run in row.score.runs if run.minutes is not None), key=lambda p: p[0])
    for (minutes, run), dy in zip(timed, _spread(len(timed)), strict=True):
        x, y_run = [minutes], [y + dy]
        # Counted dots are small and below; rings (dropped by the olympic mean) are larger and drawn over them,
        # so a dropped run at the same time as a kept one still shows.
        if not run.counted:
            ax.plot(x, y_run, "x", color=FAIL_COLOUR, markersize=6, mew=1.5, zorder=4)
        elif run.olympic_dropped:
            ax.plot(x, y_run, "o", mfc="none", mec="#c2410c", mew=1.2, markersize=6, zorder=3)
        else:
            ax.plot(x, y_run, "o", color="#1f3b5c", markersize=3.5, zorder=2)


def comparison_svg(group: Group, salt: str) -> str:
    """Bars: each priced result's performance per dollar relative to the group's baseline (the line at 1)."""
    # lazy: matplotlib: ~1 s to import; only a page with charts needs it
    from matplotlib.figure import Figure

    entries = sorted((e for e in group.entries if e.relative is not None), key=lambda e: -(e.relative or 0.0))
    fig = Figure(figsize=(PAIR_WIDTH + 2, 0.9 + 0.45 * len(entries)), layout="constrained")
    ax = fig.add_subplot()
    for y, e in enumerate(entries):
        ratio = e.relative or 0.0
        ax.barh([y], [ratio], height=0.6, color="#6b7280" if e.baseline else "#2f7d4f", alpha=0.8, zorder=1)
        ax.text(ratio, y, f" {ratio:.2f}x", va="center", fontsize=8, parse_math=False)
    ax.axvline(1.0, color="#1b1f24", linewidth=1.0, zorder=2)
    ax.set_xlim(0, max([1.0, *(e.relative or 0.0 for e in entries)]) * 1.2)
    ax.set_xlabel("performance per dollar, relative to the baseline (= 1)")
    _label_rows(ax, [e.system + (" (baseline)" if e.baseline else "") for e in entries])
    return figure_svg(fig, salt)
