"""The HTML page: self-contained, escaped, deterministic, with the sections a reviewer needs."""

from __future__ import annotations

import base64
import hashlib
import re

import pytest
from mlsubmit.checker.systems import summarize

from mlsubmit.codes import finding
from mlsubmit.report import html as html_report
from mlsubmit.report.data import ReportData, ResultRow
from mlsubmit.report.inputs import Price, SystemFacts
from mlsubmit.report.scoring import RcpOutcome, RunResult, build_score

HOSTILE = '<script>alert("x")</script>'


def run(path: str, minutes: float, counted: bool = True) -> RunResult:
    return RunResult(path=path, minutes=minutes, status="success", converged=True, compliant=counted,
                     reason=None if counted else "fails the round's log rules")  # fmt: skip


def row(system: str, division: str, benchmark: str = "bert", minutes: tuple[float, ...] = (9, 10, 11),
        price: Price | None = None, facts: SystemFacts | None = None) -> ResultRow:  # fmt: skip
    runs = [run(f"{system}/{benchmark}/result_{i}.txt", m) for i, m in enumerate(minutes)]
    score = build_score(system=system, benchmark=benchmark, division=division, runs=runs, facts=[],
                        rcp=RcpOutcome(""))  # fmt: skip
    return ResultRow(score, facts, price)


def hostile_system() -> SystemFacts:
    data = {"system_name": "IPU-POD16", "division": "open", "framework": HOSTILE, "number_of_nodes": "1",
            "accelerators_per_node": "16"}  # fmt: skip
    return SystemFacts(id="evil", path="systems/evil.json", fields=tuple(data.items()), summary=summarize(data))


@pytest.fixture
def data() -> ReportData:
    evil = hostile_system()
    return ReportData(
        ruleset="1.1.0",
        rows=[
            row("pod16", "closed", price=Price(149995, "USD", "list", "list price")),
            row("pod64", "closed", minutes=(3, 4, 5, 6)),
            row("evil", "open", facts=evil),
            row("a$b$c \\frac{1}{2} x_{1}^", "open"),  # TeX-looking ids must be drawn as text
            row("pcl", "close", benchmark="resnet"),
        ],
        systems=[evil, SystemFacts(id="broken", path="systems/broken.json", readable=False)],
        findings=[
            finding("RULE001", "r/result_0.txt", HOSTILE, line=3),
            finding("TREE013", "benchmarks/bert", "no implementation for bert"),
        ],
        paths=["org"],
    )


def test_self_contained(data: ReportData) -> None:
    page = html_report.render(data)
    assert page.startswith("<!DOCTYPE html>")
    # Every reference to another resource is internal to the page (SVG defs, section anchors).
    refs = re.findall(r'\b(?:src|href|xlink:href)\s*=\s*"([^"]*)"', page)
    assert refs and all(r.startswith("#") for r in refs), [r for r in refs if not r.startswith("#")]
    assert "@import" not in page
    assert all(u.startswith("#") for u in re.findall(r"url\(([^)]*)\)", page))  # SVG clip paths only
    scripts = re.findall(r"<script>(.*?)</script>", page, flags=re.S)
    assert scripts == [html_report.SCRIPT]
    digest = base64.b64encode(hashlib.sha256(html_report.SCRIPT.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in page and "default-src 'none'" in page


def test_input_is_escaped(data: ReportData) -> None:
    page = html_report.render(data)
    assert HOSTILE not in page
    assert page.count("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;") >= 2  # the finding and the framework


def test_charts_closed_and_open_side_by_side(data: ReportData) -> None:
    page = html_report.render(data)
    bert = page[page.index("<h3>bert</h3>") : page.index("<h3>resnet</h3>")]
    assert bert.count('<div class="pair">') == 1 and bert.count("<svg") == 2
    assert bert.index("<h3>closed</h3>") < bert.index("<h3>open</h3>")
    resnet = page[page.index("<h3>resnet</h3>") : page.index('<h2 id="runs">')]
    assert resnet.count('<p class="empty">no results</p>') == 2  # PCL's "close" is neither closed nor open...
    assert "division not closed or open" in resnet and resnet.count("<svg") == 1  # ...and gets its own chart
    assert "a$b$c \\frac{1}{2} x_{1}^" in page  # the id as text in the SVG, not rendered as TeX


def test_findings_table_is_filterable(data: ReportData) -> None:
    page = html_report.render(data)
    assert '<tr data-severity="error" data-family="RULE">' in page
    assert '<tr data-severity="error" data-family="TREE">' in page
    families = re.search(r'<select id="f-family">(.*?)</select>', page)
    assert families is not None and re.findall(r'value="(\w*)"', families.group(1)) == ["", "RULE", "TREE"]
    assert "r/result_0.txt:3" in page


def test_findings_are_capped(data: ReportData, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(html_report, "MAX_FINDING_ROWS", 1)
    page = html_report.render(data)
    assert page.count("<tr data-severity=") == 1 and "1 more; run <code>mlsubmit check</code>" in page


def test_price_estimate_is_labelled_only_when_priced(data: ReportData) -> None:
    page = html_report.render(data)
    assert '<span class="estimate">Estimate</span>' in page and "perf_per_price_estimate" in page
    unpriced = ReportData(ruleset="1.1.0", rows=[row("pod64", "closed")])
    assert "perf_per_price" not in html_report.render(unpriced)


def test_system_descriptions_listed(data: ReportData) -> None:
    page = html_report.render(data)
    section = page[page.index('<h2 id="systems">') :]
    assert "accelerators (total)</td><td>16" in section
    assert "systems/broken.json: not readable" in section


def test_deterministic(data: ReportData) -> None:
    assert html_report.render(data) == html_report.render(data)


def test_runs_section_marks_dropped_and_uncounted() -> None:
    runs = [run("r0", 10), run("r1", 11), run("r2", 12), run("r3", 13, counted=False)]
    score = build_score(system="s", benchmark="bert", division="open", runs=runs, facts=[], rcp=RcpOutcome(""))
    page = html_report.render(ReportData(ruleset="1.1.0", rows=[ResultRow(score, None, None)]))
    runs_html = page[page.index('<h2 id="runs">') : page.index('<h2 id="findings-title">')]
    assert runs_html.count("<td>dropped</td>") == 1  # only the fastest: the failed run stands in for the slowest
    assert "no: fails the round&#x27;s log rules" in runs_html


def test_text_and_markdown_tables_neutralise_control_characters() -> None:
    import io

    from mlsubmit.report.tables import write_markdown, write_text

    data = ReportData(ruleset="1.1.0", rows=[row("evil\x1b[31m|x*", "closed")])
    text, md = io.StringIO(), io.StringIO()
    write_text(data, text)
    write_markdown(data, md)
    assert "\x1b" not in text.getvalue() and "evil?[31m|x*" in text.getvalue()
    assert "\x1b" not in md.getvalue() and "evil?\\[31m\\|x\\*" in md.getvalue()
