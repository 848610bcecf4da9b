"""The HTML report in a real browser: Debian's chromium, headless, with a fresh profile and no network services.

It must load with no console message at all (a script error, a blocked load or a Content-Security-Policy violation
would each print one), render a screenshot that is not blank, run its filter script, and stay inert when the tree
holds hostile names. `make test-browser` installs chromium and runs this file; without chromium it is skipped.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from fixtures.synth_org import runs, system, write_org

pytestmark = pytest.mark.browser

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
CONSOLE = re.compile(r':CONSOLE[:(][^\]]*\] "(?P<message>.*)"')
RULESET = "1.1.0"
HOSTILE = "evil<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def chromium() -> str:
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        pytest.skip("Debian's chromium is not installed; `make test-browser` installs it (apt-get install chromium)")
    return binary


def browse(binary: str, url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory(prefix="mlsubmit-chromium-") as profile:
        cmd = [binary, *FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *extra, url]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)


def console_messages(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [m.group("message") for m in CONSOLE.finditer(proc.stderr)]


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of a tree with closed and open results, findings, and a hostile system id and framework."""
    from mlsubmit.cli import main

    root = tmp_path_factory.mktemp("browser")
    org = write_org(
        root / "Graphcore",
        {
            "ipu-pod16-closed": system(),
            "ipu-pod16-open": system(division="open"),
            HOSTILE: system(division="open", framework="<script>alert(2)</script>", system_name="IPU-POD64",
                            accelerators_per_node="64"),
        },
        {
            ("ipu-pod16-closed", "bert"): runs([30.5, 31, 29, 33, 30, 31.5, 32, 29.5, 30.25, 34], ruleset=RULESET),
            ("ipu-pod16-open", "bert"): runs([25, 26, 24, 27, 25.5, 26.5, 24.5, 25.25, 26.25, 28], ruleset=RULESET,
                                             division="open"),
            (HOSTILE, "bert"): runs([9.0, 9.5, 9.2, 9.1, 9.3, 9.4, 9.6, 9.05, 9.15, 9.25], ruleset=RULESET,
                                    division="open"),
        },
    )  # fmt: skip
    out = root / "report.html"
    assert main(["report", "--ruleset", RULESET, str(org), "--html", str(out), "--output", str(root / "t.txt")]) in (
        0,
        1,
    )
    return out


def test_loads_without_console_messages_and_renders(chromium: str, page: Path, tmp_path: Path) -> None:
    from PIL import Image

    shot = tmp_path / "report.png"
    proc = browse(chromium, page.as_uri(), "--window-size=1280,1800", f"--screenshot={shot}")
    assert shot.is_file(), proc.stderr[-2000:]
    assert console_messages(proc) == []
    with Image.open(shot) as image:
        rgb = image.convert("RGB")
        assert rgb.size == (1280, 1800)
        colours = rgb.getcolors(maxcolors=1280 * 1800) or []
    non_white = sum(count for count, colour in colours if sum(colour) < 720)
    assert non_white > 0.03 * 1280 * 1800  # tables, bars and text, not a blank page
    assert len(colours) > 50  # anti-aliased text and several colours: something was drawn


def test_the_console_check_is_not_vacuous(chromium: str, tmp_path: Path) -> None:
    """Under the report's own Content-Security-Policy, a page that tries the network is caught."""
    from mlsubmit.report.html import _csp

    bad = tmp_path / "bad.html"
    bad.write_text(f'<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="{_csp()}">'
                   '<title>t</title></head><body><img src="https://example.invalid/x.png" alt=""></body></html>',
                   encoding="utf-8")  # fmt: skip
    messages = console_messages(browse(chromium, bad.as_uri(), "--dump-dom"))
    assert any("Content Security Policy" in m for m in messages), messages


def test_filter_script_runs_and_reads_the_url_hash(chromium: str, page: Path) -> None:
    proc = browse(chromium, page.as_uri() + "#severity=warning", "--dump-dom")
    assert console_messages(proc) == []
    dom = proc.stdout
    assert 'data-filters="ready"' in dom  # the script ran to its end
    rows = re.findall(r'<tr data-severity="(\w+)" data-family="(\w+)"( hidden="")?><td [^>]*data-count="(\d+)"', dom)
    assert rows, "the page has no findings rows"
    assert all((sev == "warning") == (hidden == "") for sev, _fam, hidden, _n in rows)
    hints = re.findall(r'<tr class="hint[^"]*" data-severity="(\w+)" data-family="\w+"( hidden="")?>', dom)
    assert hints and all((sev == "warning") == (hidden == "") for sev, hidden in hints)
    shown = re.search(r'<span id="f-shown">(\d+)</span>', dom)
    assert shown is not None and int(shown.group(1)) == sum(int(n) for sev, _, _, n in rows if sev == "warning")


def test_hostile_names_stay_text(chromium: str, page: Path) -> None:
    proc = browse(chromium, page.as_uri(), "--dump-dom")
    assert console_messages(proc) == []
    dom = proc.stdout
    assert "<img" not in dom and "<script>alert" not in dom
    assert "evil&lt;img src=x onerror=alert(1)&gt;" in dom


def keep_screenshot(shot: Path) -> None:
    """MLSUBMIT_SCREENSHOTS=DIR keeps the screenshots, for a person to look at."""
    import os

    folder = os.environ.get("MLSUBMIT_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(folder) / shot.name)


def assert_drawn(shot: Path, size: tuple[int, int]) -> None:
    from PIL import Image

    with Image.open(shot) as image:
        rgb = image.convert("RGB")
        assert rgb.size == size
        colours = rgb.getcolors(maxcolors=size[0] * size[1]) or []
    assert sum(count for count, colour in colours if sum(colour) < 720) > 0.03 * size[0] * size[1]


def screenshot(chromium: str, page: Path, shot: Path, size: tuple[int, int]) -> None:
    """The page shot at `size` (kept with MLSUBMIT_SCREENSHOTS): loaded without console messages, and drawn."""
    proc = browse(chromium, page.as_uri(), f"--window-size={size[0]},{size[1]}", f"--screenshot={shot}")
    assert shot.is_file(), proc.stderr[-2000:]
    keep_screenshot(shot)
    assert console_messages(proc) == []
    assert_drawn(shot, size)


def test_per_dollar_page(chromium: str, tmp_path: Path) -> None:
    """Issue #16: Graphcore against a DGX A100 priced by its description, with the comparison chart."""
    from fixtures.per_dollar_round import build_round

    from mlsubmit.cli import main

    root = build_round(tmp_path / "round")
    page = tmp_path / "per-dollar.html"
    prices = Path(__file__).resolve().parents[2] / "prices.toml"
    argv = ["report", "--ruleset", RULESET, "--prices", str(prices), "--html", str(page), "-o",
            str(tmp_path / "t.txt"), str(root / "Graphcore"), str(root / "NVIDIA")]  # fmt: skip
    assert main(argv) in (0, 1)
    screenshot(chromium, page, tmp_path / "per-dollar.png", (1280, 1800))
    dom = browse(chromium, page.as_uri(), "--dump-dom").stdout
    section = dom[dom.index('<h2 id="per-dollar">') : dom.index('<h2 id="charts">')]
    assert section.count("<svg") == 2 and "1.26x" in section and "no price" in section
    for width in (1280, 1920):  # issue 27: the priced results table fits without a horizontal scroll bar
        assert overflow(chromium, page, tmp_path, width) == 0


MEASURE = """<script>document.body.dataset.overflow = String(Math.max(0,
  document.documentElement.scrollWidth - document.documentElement.clientWidth,
  ...Array.from(document.querySelectorAll(".scroll"), (e) => e.scrollWidth - e.clientWidth)));</script>"""


def overflow(binary: str, page: Path, tmp_path: Path, width: int) -> int:
    """How many pixels the page, or its results table, is wider than a `width`-pixel window.

    A copy of the page with a measuring script appended; its Content-Security-Policy (which rightly forbids that
    script) is left out of the copy only.
    """
    text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page.read_text(encoding="utf-8"))
    probe = tmp_path / f"measure-{width}.html"
    probe.write_text(text.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    dom = browse(binary, probe.as_uri(), f"--window-size={width},1000", "--dump-dom").stdout
    found = re.search(r'data-overflow="(\d+)"', dom)
    assert found is not None, dom[-2000:]
    return int(found.group(1))


@pytest.mark.corpus
def test_v1_1_round_page(chromium: str, corpus: Path, tmp_path: Path) -> None:
    """Issue #18: the v1.1 round (open BERT 5.9 to 1,197 minutes) loads cleanly with a log time axis."""
    from mlsubmit.cli import main

    tree = corpus / "training_results_v1.1"
    if not tree.is_dir():
        pytest.skip(f"{tree} is not in the corpus")
    page = tmp_path / "v1.1.html"
    assert main(["report", "--ruleset", "1.1.0", "--html", str(page), "-o", str(tmp_path / "t.txt"), str(tree)]) in (
        0,
        1,
    )
    screenshot(chromium, page, tmp_path / "v1.1-charts.png", (1280, 3000))
    text = page.read_text(encoding="utf-8")
    assert "time to train (minutes, log scale)" in text and str(tree) not in text[text.index('id="findings"') :]


def test_a_cause_heading_hides_with_its_consequences(chromium: str, tmp_path: Path) -> None:
    from mlsubmit.core.codes import finding
    from mlsubmit.report.data import ReportData
    from mlsubmit.report.html import render

    log = "org/results/s/bert/result_0.txt"
    page = tmp_path / "causes.html"
    page.write_text(render(ReportData(ruleset="1.0.0", paths=["org"], findings=[
        finding("LOG004", log, "record is not valid JSON", line=90), finding("RULE001", log, "no run_stop"),
        finding("SYS019", "org/systems/s.json", "field missing", line=1)])), encoding="utf-8")  # fmt: skip
    shown = browse(chromium, page.as_uri() + "#family=RULE", "--dump-dom")
    hidden = browse(chromium, page.as_uri() + "#family=SYS", "--dump-dom")
    assert console_messages(shown) == [] and console_messages(hidden) == []
    assert '<tr class="cause"><td' in shown.stdout  # RULE001 is shown, so is the heading naming its cause
    assert '<tr class="cause" hidden=""><td' in hidden.stdout
