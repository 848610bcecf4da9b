"""The charts of `runs show --format html`, as inline SVG a reviewer reads without hovering: axes with a scale,
a legend, every value written beside its point (up to LABELLED runs) and the median window shaded and named; the
run set's risk (rcp/planning.py) as a histogram with each bar's count. No script, no external font.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mlsubmit.core.support.display_escape import html_text as esc

_W, _H = 680.0, 260.0
_LEFT, _RIGHT, _TOP, _BOTTOM = 76.0, 16.0, 48.0, 44.0
LABELLED = 24  # more runs than this: values in the table below the chart only
_BLUE, _RED, _ORANGE, _SHADE = "#1f5fa8", "#b3261e", "#c26a00", "#f2c14e"


def ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round values for an axis from low to high (1, 2 or 5 times a power of ten apart)."""
    span = high - low
    if not span > 0 or not math.isfinite(span):
        return [low]
    raw = span / max(1, count)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(low / step) * step
    return [first + i * step for i in range(int((high - first) / step + 1e-9) + 1)]


def _num(v: float) -> str:
    """Four significant digits, an exponent written short (2.64e6)."""
    text = f"{v:.4g}"
    mantissa, sep, exponent = text.partition("e")
    return f"{mantissa}e{int(exponent)}" if sep else text


def _frame(title: str, x_title: str, y_title: str, low: float, high: float) -> tuple[list[str], float, float]:
    """The SVG head, title, y axis with gridlines and axis titles; (parts, plot width, plot height)."""
    pw, ph = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W:.0f}" height="{_H:.0f}" role="img" '
             f'font-family="sans-serif"><title>{esc(title)}</title>',
             f'<text x="{_LEFT}" y="16" font-size="13" font-weight="bold">{esc(title)}</text>',
             f'<line x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{_TOP + ph}" stroke="#333"/>',
             f'<line x1="{_LEFT}" y1="{_TOP + ph}" x2="{_LEFT + pw}" y2="{_TOP + ph}" stroke="#333"/>',
             f'<text x="{_LEFT + pw / 2:.1f}" y="{_H - 6}" font-size="11" text-anchor="middle">{esc(x_title)}</text>',
             f'<text transform="translate(14 {_TOP + ph / 2:.1f}) rotate(-90)" font-size="11" '
             f'text-anchor="middle">{esc(y_title)}</text>']
    for t in ticks(low, high):
        y = _TOP + ph - (t - low) / (high - low) * ph
        parts.append(f'<line x1="{_LEFT - 4}" x2="{_LEFT + pw}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>'
                     f'<text x="{_LEFT - 6}" y="{y + 4:.1f}" font-size="10" text-anchor="end">{_num(t)}</text>')
    return parts, pw, ph


def _legend(items: Sequence[tuple[str, str]]) -> str:
    """One row of legend entries under the title: (kind, words); kind: point, mean, fastest, window, cross."""
    out, x = [], _LEFT
    for kind, words in items:
        mark = {"point": f'<circle cx="{x + 6}" cy="30" r="4" fill="{_BLUE}"/>',
                "cross": f'<text x="{x + 6}" y="34" font-size="12" text-anchor="middle" fill="{_RED}">×</text>',
                "mean": f'<line x1="{x}" x2="{x + 14}" y1="30" y2="30" stroke="{_RED}" stroke-width="2" '
                        'stroke-dasharray="5 3"/>',
                "fastest": f'<line x1="{x}" x2="{x + 14}" y1="30" y2="30" stroke="{_ORANGE}" stroke-width="2" '
                           'stroke-dasharray="2 2"/>',
                "window": f'<rect x="{x}" y="24" width="14" height="12" fill="{_SHADE}" fill-opacity="0.45" '
                          f'stroke="{_ORANGE}"/>'}[kind]
        out.append(mark + f'<text x="{x + 18}" y="34" font-size="11">{esc(words)}</text>')
        x += 26 + 6.2 * len(words)
    return "".join(out)


def run_chart(values: Sequence[float | None], lines: Sequence[tuple[str, float | None]], title: str, y_title: str,
              window: tuple[int, int] | None) -> str:
    """Values by run in start order (None: did not converge, drawn as a cross at the top), the RCP's lines, and
    the median window [start, stop) shaded."""
    shown = [v for v in values if v is not None] + [v for _, v in lines if v is not None]
    if not shown:
        return f"<p>{esc(title)}: no values</p>"
    low, high = min(shown), max(shown)
    pad = (high - low) * 0.12 or abs(high) * 0.05 or 1.0
    low, high = low - pad, high + pad
    parts, pw, ph = _frame(title, "run, in start order", y_title, low, high)
    n = len(values)
    step = pw / max(1, n)

    def x(i: float) -> float:
        return _LEFT + (i + 0.5) * step

    def y(v: float) -> float:
        return _TOP + ph - (v - low) / (high - low) * ph

    legend = [("point", "run")]
    if window is not None:
        parts.append(f'<rect x="{x(window[0] - 0.5):.1f}" y="{_TOP}" width="{(window[1] - window[0]) * step:.1f}" '
                     f'height="{ph}" fill="{_SHADE}" fill-opacity="0.45" stroke="{_ORANGE}"/>'
                     f'<text x="{x(window[0] - 0.5) + 4:.1f}" y="{_TOP + ph - 5}" font-size="10" fill="#7a4a00">'
                     f'median window: runs {window[0]}..{window[1] - 1} (scored)</text>')
        legend.append(("window", "median window"))
    for (name, v), kind in zip(lines, ("mean", "fastest"), strict=False):
        if v is not None:
            colour, dash = (_RED, "5 3") if kind == "mean" else (_ORANGE, "2 2")
            parts.append(f'<line x1="{_LEFT}" x2="{_LEFT + pw}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="{colour}" '
                         f'stroke-width="1.5" stroke-dasharray="{dash}"/>')
            legend.append((kind, f"{name} {_num(v)}"))
    every = max(1, math.ceil(n / 30))
    for i, v in enumerate(values):
        if i % every == 0:
            parts.append(f'<text x="{x(i):.1f}" y="{_TOP + ph + 14}" font-size="10" text-anchor="middle">{i}</text>')
        if v is None:
            parts.append(f'<text x="{x(i):.1f}" y="{_TOP + 10}" font-size="14" text-anchor="middle" fill="{_RED}">×'
                         f"<title>run {i}: did not converge</title></text>")
            continue
        parts.append(f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="4" fill="{_BLUE}"><title>run {i}: {v:.6g}'
                     "</title></circle>")
        if n <= LABELLED:
            parts.append(f'<text x="{x(i):.1f}" y="{y(v) - 7:.1f}" font-size="9" text-anchor="middle">{_num(v)}'
                         "</text>")
    if any(v is None for v in values):
        legend.append(("cross", "did not converge"))
    return "".join(parts) + _legend(legend) + "</svg>"


def histogram(bars: Sequence[tuple[float, float, int]], marks: Sequence[tuple[str, float]], title: str,
              x_title: str) -> str:
    """Bars (low, high, count) with each count written on its bar and the marks (10 %, median, 90 %) drawn."""
    if not bars:
        return f"<p>{esc(title)}: no draw passes</p>"
    top = max(c for _, _, c in bars)
    parts, pw, ph = _frame(title, x_title, "draws", 0.0, top * 1.15 or 1.0)
    low, high = bars[0][0], bars[-1][1]
    span = (high - low) or 1.0

    def x(v: float) -> float:
        return _LEFT + (v - low) / span * pw if high > low else _LEFT + pw / 2

    for lo, hi, count in bars:
        h = count / (top * 1.15) * ph
        left, width = x(lo), max(2.0, x(hi) - x(lo) - 1)
        parts.append(f'<rect x="{left:.1f}" y="{_TOP + ph - h:.1f}" width="{width:.1f}" height="{h:.1f}" '
                     f'fill="{_BLUE}" fill-opacity="0.75"/><text x="{left + width / 2:.1f}" y="{_TOP + ph - h - 3:.1f}"'
                     f' font-size="9" text-anchor="middle">{count}</text>')
    for t in ticks(low, high, 6):
        parts.append(f'<text x="{x(t):.1f}" y="{_TOP + ph + 14}" font-size="10" text-anchor="middle">{_num(t)}</text>')
    for i, (name, v) in enumerate(marks):  # above the bars, staggered, so close marks stay readable
        parts.append(f'<line x1="{x(v):.1f}" x2="{x(v):.1f}" y1="{_TOP}" y2="{_TOP + ph}" stroke="{_RED}" '
                     f'stroke-dasharray="4 3"/><text x="{x(v):.1f}" y="{_TOP - 5 - 11 * (i % 2)}" font-size="10" '
                     f'fill="{_RED}" text-anchor="middle">{esc(name)} {_num(v)}</text>')
    return "".join(parts) + "</svg>"
