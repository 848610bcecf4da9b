"""The HTML report's section on RCP-bypassed folders: the evidence "Handling RCP failures" asks for, drawn.

One figure per folder, two panels: each run's epochs or samples to converge against the RCP (its mean, the fastest
the check allows, the runs' olympic mean), and each run's evaluation curve. The numbers are those `package` writes
as rcp_convergence.csv and eval_curves.csv (checker rcp_evidence), so the page and the files agree.
"""

from __future__ import annotations

from typing import Any

from mlsubmit.core.support.display_escape import html_text as esc
from mlsubmit.core.support.display_escape import inert
from mlsubmit.report.html_charts import FAIL_COLOUR, figure_svg

WIDTH = 11.0  # inches: across the page
_DROPPED = "#8c959f"


def section(evidence: list[Any]) -> str:
    if not evidence:
        return ""
    parts = ['<h2 id="rcp-evidence">RCP bypass: the evidence for the review</h2>',
             '<p class="meta">Each folder whose RCP check a package_checker_params bypass switches off. The training '
             'rules ("Handling RCP failures") reject such a result unless the Submitters\' Working Group approves '
             "it, with the evidence due by the end of review week 1, or have its runs normalised to the reference. "
             "Left: each run's convergence point (hollow: left out by the olympic mean) against the RCP mean, the "
             "fastest the check allows and the runs' olympic mean. Right: each run's evaluation curve.</p>"]
    for i, ev in enumerate(evidence):
        norm = f"; normalisation to the RCP mean: ×{ev.normalisation:.4f}" if ev.normalisation else ""
        parts.append(f"<h3>{esc(ev.folder)}</h3><p>bypass written at the {esc(ev.scope)}; without it the RCP "
                     f"check says: {esc(ev.verdict)}{esc(norm)}</p>")
        parts.append(_figure(ev, f"rcp-evidence-{i}"))
    return "".join(parts)


def _figure(ev: Any, salt: str) -> str:
    # lazy: matplotlib: ~1 s to import; only a page with charts needs it
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH, 3.4), layout="constrained")
    left, right = fig.subplots(1, 2)
    _convergence(left, ev)
    _curves(right, ev)
    return figure_svg(fig, salt)


def _convergence(ax: Any, ev: Any) -> None:
    for x, run in enumerate(ev.runs):
        if run.to_converge is None:
            ax.plot([x], [0], marker="x", color=FAIL_COLOUR, linestyle="none")
            continue
        ax.plot([x], [run.to_converge], marker="o", linestyle="none", color="#0969da",
                markerfacecolor="#0969da" if run.in_mean else "white")  # fmt: skip
    for value, label, style in ((ev.rcp_mean, "RCP mean", "-"), (ev.fastest_allowed, "fastest allowed", "--"),
                                (ev.submission_mean, "olympic mean of the runs", ":")):  # fmt: skip
        if value is not None:
            ax.axhline(value, linestyle=style, color=FAIL_COLOUR if label.startswith("olympic") else _DROPPED,
                       label=f"{label} {value:,.4g}")  # fmt: skip
    ax.set_xticks(range(len(ev.runs)))
    ax.set_xticklabels([inert(r.name.removeprefix("result_").removesuffix(".txt")) for r in ev.runs])
    ax.set_xlabel("result file")
    ax.set_ylabel(f"{ev.unit} to converge")
    ax.legend(fontsize=7, loc="best")
    ax.grid(axis="y", color="#d0d7de", linewidth=0.6)


def _curves(ax: Any, ev: Any) -> None:
    for run in ev.runs:
        points = [(x, y) for x, y in run.curve if x is not None]
        if points:
            ax.plot([p[0] for p in points], [p[1] for p in points], marker=".", linewidth=0.8,
                    label=inert(run.name))  # fmt: skip
    ax.set_xlabel(f"{ev.unit} (eval_accuracy metadata)")
    ax.set_ylabel("eval_accuracy")
    if len(ev.runs) <= 12:
        ax.legend(fontsize=6, ncol=2)
    ax.grid(color="#d0d7de", linewidth=0.6)
