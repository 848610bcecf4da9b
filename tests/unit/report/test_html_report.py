"""The HTML page: self-contained, escaped, deterministic, with the sections a reviewer needs."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import re

import pytest
from mlsubmit.checker.systems.descriptions import summarize

from mlsubmit.core.codes import finding
from mlsubmit.report import html as html_report
from mlsubmit.report import html_charts, html_findings
from mlsubmit.report.compare import compare
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
    assert '<div class="pair">' not in resnet and "no results" not in resnet  # no empty panels
    assert "division not closed or open" in resnet and resnet.count("<svg") == 1  # PCL's "close" gets its own chart
    assert "a$b$c \\frac{1}{2} x_{1}^" in page  # the id as text in the SVG, not rendered as TeX


def test_findings_table_is_filterable(data: ReportData) -> None:
    page = html_report.render(data)
    assert '<tr data-severity="error" data-family="RULE">' in page
    assert '<tr data-severity="error" data-family="TREE">' in page
    families = re.search(r'<select id="f-family">(.*?)</select>', page)
    assert families is not None and re.findall(r'value="(\w*)"', families.group(1)) == ["", "RULE", "TREE"]
    assert "r/<wbr>result_0.txt:3" in page  # a path may wrap at its separators


def test_findings_are_capped(data: ReportData, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(html_findings, "MAX_FINDING_ROWS", 1)
    page = html_report.render(data)
    assert page.count("data-count=") == 1 and "1 more in 1 group(s); run <code>mlsubmit check</code>" in page


def test_findings_are_grouped_as_the_text_report_groups_them() -> None:
    # Nebius v5.1: 99 SYS043 findings with one message each per system were 99 rows, each with its long path
    many = [finding("SYS043", f"org/results/sys_n{n}/{b}/result_{i}.txt", "status disagrees", line=153)
            for n in (1, 2) for b in ("bert", "ssd") for i in range(10)]  # fmt: skip
    data = ReportData(ruleset="5.1.0", findings=[*many, finding("TREE013", "org/benchmarks/bert", "no code")],
                      paths=["org"])  # fmt: skip
    page = html_report.render(data)
    table = page[page.index('<table id="findings">') :]
    assert table.count("data-count=") == 2
    assert '<td class="num" data-count="40">40\u00d7</td>' in table  # count first
    pattern = "org/<wbr>results/<wbr>{sys_n1,sys_n2}/<wbr>{bert,ssd}/<wbr>result_*.txt:153"
    assert f"<summary><code>{pattern}</code></summary>" in table
    assert table.count("<li><code>") == 40  # every place, one click away
    assert table.count("hint: ") == 2
    assert "showing <span id=\"f-shown\">41</span> of 41 in 2 group(s)" in page


def test_consequences_follow_their_cause_with_one_hint() -> None:
    log = "org/results/s/bert/result_0.txt"
    data = ReportData(ruleset="1.0.0", paths=["org"], findings=[
        finding("RULE001", log, "no run_stop", line=None), finding("LOG004", log, "record is not valid JSON", line=90,
                                                          case="last-record"),
        finding("RULE002", log, "no eval_accuracy", line=None)])  # fmt: skip
    table = html_report.render(data)
    table = table[table.index('<table id="findings">') :]
    cause = table.index('<tr class="cause">')
    assert table.index(">LOG004<") < cause < table.index(">RULE001<") < table.index(">RULE002<")
    assert "the log looks truncated at line 90" in table
    assert table.count("fix the cause above first") == 1  # once for RULE001 and RULE002; their own hints not shown


def test_price_estimate_is_labelled_only_when_priced(data: ReportData) -> None:
    data.comparison = compare(data.rows, time_basis="olympic", baseline=None, currency="USD")
    page = html_report.render(data)
    assert '<span class="estimate">Estimate</span>' in page and "perf_per_price_estimate" in page
    unpriced = ReportData(ruleset="1.1.0", rows=[row("pod64", "closed")])
    assert "perf_per_price" not in html_report.render(unpriced)


def test_system_descriptions_listed(data: ReportData) -> None:
    page = html_report.render(data)
    section = page[page.index('<h2 id="systems">') :]
    assert "accelerators (total)</td><td>16" in section
    assert "systems/<wbr>broken.json: not readable" in section


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


def test_time_axis_is_logarithmic_past_ten_times() -> None:
    """Open BERT at 5.9 minutes beside a 1,197-minute TPU run (v1.1): a log axis, so the short bar shows."""
    wide = [row("pod128", "open", minutes=(5.8, 5.9, 6.0)), row("tpu", "open", minutes=(1190, 1197, 1200))]
    svg = html_charts.chart_svg(wide, "t")
    assert "time to train (minutes, log scale)" in svg and ">1,000<" in svg  # plain tick labels, not 10³
    narrow = [row("pod16", "open", minutes=(26, 27, 28)), row("pod64", "open", minutes=(8, 8.2, 8.4))]
    assert "log scale" not in html_charts.chart_svg(narrow, "t")  # 3.3x: linear


def test_rings_are_drawn_over_dots() -> None:
    """A run the olympic mean drops is a ring drawn after (over) the kept runs' dots, and larger than them."""
    svg = html_charts.chart_svg([row("s", "open", minutes=(10, 10, 10, 10))], "t")
    ring, dot = 'style="fill-opacity: 0; stroke: #c2410c', 'style="fill: #1f3b5c'
    assert svg.count(ring) == 2 and svg.count(dot) == 2  # four runs at the same time: two dropped, two kept
    assert svg.rindex(dot) < svg.index(ring)  # SVG paints in document order


def test_one_division_gets_the_page_width_and_no_empty_panel() -> None:
    page = html_report.render(ReportData(ruleset="1.1.0", rows=[row("pod16", "closed")]))
    charts = page[page.index('<h2 id="charts">') : page.index('<h2 id="runs">')]
    assert "no results" not in charts and '<div class="pair">' not in charts
    assert "(no open results)" not in charts and "<h3>closed</h3>" in charts  # no empty mention under each chart
    width = re.search(r'<svg[^>]*width="([\d.]+)pt"', charts)
    assert width is not None and float(width.group(1)) == html_charts.WIDE_WIDTH * 72


def test_paths_are_relative_to_the_tree_and_wrap_at_separators(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = tmp_path / "round"
    tree.mkdir()
    path = f"{tree}/Graphcore/results/ipu-pod16/bert/result_0.txt"
    data = ReportData(ruleset="1.1.0", findings=[finding("RULE001", path, "x", line=3)],
                      paths=[f"{tree}/Graphcore", f"{tree}/NVIDIA"])  # fmt: skip
    page = html_report.render(data)
    assert "<code>Graphcore/<wbr>results/<wbr>ipu-pod16/<wbr>bert/<wbr>result_0.txt:3</code>" in page
    assert str(tmp_path) not in page[page.index('<table id="findings">') :]
    assert html_report.relative_to([str(tree)]) == str(tree)  # one tree: relative to it
    assert html_report.shown_path("/elsewhere/x.txt", str(tree)) == "/elsewhere/x.txt"


def test_per_dollar_section_draws_hostile_ids_as_text() -> None:
    price = Price(100000, "USD", "list", "s", baseline=True)
    rows = [row("<b>$x^2$</b>", "closed", price=price), row("pod16", "closed", minutes=(4, 5, 6), price=price)]
    data = ReportData(ruleset="1.1.0", rows=rows)
    data.comparison = compare(rows, time_basis="olympic", baseline="<b>$x^2$</b>", currency="USD")
    page = html_report.render(data)
    section = page[page.index('<h2 id="per-dollar">') : page.index('<h2 id="charts">')]
    assert "<b>" not in section and section.count("&lt;b&gt;$x^2$&lt;/b&gt;") >= 2  # the chart label and the list
    assert "2.00x" in section  # pod16: twice as fast for the same price


def test_control_and_bidi_characters_are_inert_in_text_and_charts() -> None:
    """A right-to-left override, an ANSI escape or a NUL from the tree shows as an escape, in tables and charts."""
    sneaky = "pod\u202etxt.exe\x1b[31m\x00"
    data = ReportData(ruleset="1.1.0", rows=[row(sneaky, "closed")],
                      findings=[finding("RULE001", "r/result_0.txt", f"bad {sneaky}", line=3)])  # fmt: skip
    page = html_report.render(data)
    for raw in ("\u202e", "\x1b", "\x00"):
        assert raw not in page
    assert page.count("pod\\u202etxt.exe\\x1b[31m\\x00") >= 3  # the results table, the chart label, the finding


def test_results_table_names_units_and_colours_the_rcp_verdict() -> None:
    failed = row("pod64", "closed", minutes=(3, 4, 5))
    failed = ResultRow(dataclasses.replace(failed.score, rcp=RcpOutcome("Fail")), None, None)
    passed = ResultRow(dataclasses.replace(row("pod16", "closed").score, rcp=RcpOutcome("Pass")), None, None)
    data = ReportData(ruleset="1.1.0", rows=[failed, passed])
    page = html_report.render(data)
    results = page[page.index('<h2 id="results">') : page.index('<h2 id="charts">')]
    assert "<th>minutes (RCP-scaled)</th>" in results and "<th>RCP check</th>" in results
    assert '<td class="fail">Fail</td>' in results and '<td class="pass">Pass</td>' in results
    assert "perf_per_price" not in results and "_<wbr>" not in results.split("<tbody>")[0]  # no machine names
    charts = page[page.index('<h2 id="charts">') : page.index('<h2 id="runs">')]
    assert charts.count("pod64 (RCP fail)") == 1 and "pod16 (RCP fail)" not in charts
    assert "RCP fail</text>" in charts or " RCP fail" in charts  # the score label says it on the bar too


def test_close_runs_are_spread_apart_not_a_blob() -> None:
    """Ten runs within a minute of each other get ten different heights on their row."""
    svg = html_charts.chart_svg([row("s", "open", minutes=tuple(30 + i / 10 for i in range(10)))], "t")
    heights = set(re.findall(r'<use xlink:href="#[^"]+" x="[\d.]+" y="([\d.]+)"', svg))
    assert len(heights) >= 10, heights  # (tick marks add one or two; unspread, the runs would share one)
