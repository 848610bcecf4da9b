"""Every shell example in README.md and docs/*.md that shows output is run here, and its output compared with
what the page shows, so a page cannot drift from the tool (issue 47).

The convention (docs/architecture.md, "Examples in the docs"): a fenced block with no language whose first line
starts with `$ ` is a terminal session. Each `$ ` line is a command (a trailing backslash continues it on the next
line; `# ...` after it is a comment); the lines up to the next `$ ` line are what it prints, stdout and stderr as a
terminal shows them. In the shown output a line that is only `…` or `...` stands for any number of lines, and `…`
inside a line for any text. A command that shows no output runs too. Every command's exit status is held: 0 or 1
(clean, or findings), unless the page shows its error (`mlsubmit: error: ...`) or an `echo $?` after it shows the
status; a usage error or a crash the page does not show fails here (issue 57: a CI line of docs/ci.md exited 2).

Commands run in-process (`mlsubmit ARGS` through main(argv); `echo $?` and `cat FILE` as a shell does) from a folder
laid out for their page (WORLDS): the demo's raw runs, the uploads/ folders of docs/ci.md and docs/waivers.md, a
copy of systems/ and examples/. Each page's folder is made once per session. Examples that need the network, the
chair's reference tools or minutes are in SKIPPED with the reason; one whose page names the corpus runs when it is
there.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import re
import shlex
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT, corpus_path
from fixtures.synth import RunSpec, write_run

from mlsubmit.cli import main

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
ANY = ("…", "...")


@dataclass(frozen=True)
class Example:
    doc: str  # README.md, docs/ci.md
    line: int  # of its `$ ` line
    command: str
    shown: tuple[str, ...]
    session: int  # the block it is in: `echo $?` reads the command before it in the same block

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"


def _sessions(text: str) -> Iterator[tuple[int, list[str]]]:
    """(first line number, lines) of each fenced block without a language that starts with `$ `."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```" and i + 1 < len(lines) and lines[i + 1].startswith("$ "):
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
            yield i + 2, lines[i + 1 : end]
            i = end
        i += 1


def examples(doc: Path, name: str | None = None) -> list[Example]:
    out: list[Example] = []
    name = name or doc.relative_to(ROOT).as_posix()
    for session, (first, lines) in enumerate(_sessions(doc.read_text(encoding="utf-8"))):
        n = 0
        while n < len(lines):
            start, command = first + n, lines[n][2:]
            while command.endswith("\\") and n + 1 < len(lines):
                n += 1
                command = command[:-1] + " " + lines[n].strip()
            n += 1
            shown = []
            while n < len(lines) and not lines[n].startswith("$ "):
                shown.append(lines[n].rstrip())
                n += 1
            while shown and not shown[-1]:
                shown.pop()
            out.append(Example(name, start, command, tuple(shown), session))
    return out


ALL = [e for doc in DOCS for e in examples(doc)]
SHOWING = [e for e in ALL if e.shown]

# Examples not run, by the start of their command, with why. Each must still match an example (checked below).
SKIPPED: dict[str, str] = {
    "mlsubmit check --ruleset 1.0.0 --format sarif uploads": "shows an excerpt (runs[0].results), not the output; "
    "the SARIF report is checked against the schema in tests/unit/formats and tests/install/test_ci_examples.py",
    "make check": "runs make and the repository's venv; tests/install/test_ci_examples.py runs the gate "
    "(tools/gate.py)",
    "git ls-remote https://example.invalid/mlsubmit.git": "needs a git host; tests/unit/project/test_release.py "
    "reads the pinned commit from this repository's history",
    "git -C mlsubmit rev-parse main": "needs a clone named mlsubmit; tests/unit/project/test_release.py reads the "
    "pinned commit from this repository's history",
    "mlsubmit verify build/demo/modern/": "the results chair's own flow with the reference tools on make demo's "
    "modern tree (about a minute); tests/differential/test_verify_official.py and test_official_flow.py run it",
    "mlsubmit verify ../shared/corpus/training_results_v4.0/Intel-HabanaLabs --official": "the reference package "
    "checker over a published tree (minutes); tests/differential/test_verify_official.py",
    "mlsubmit package package.toml --archive --encrypt": "packages the demo's implementation repository and "
    "encrypts it (tens of seconds); tests/cli/test_package.py and test_installed_wheel.py run the same",
    "cat build/submission/mlperf_submission_Graphcore.sha1": "differs on every run: the salt is random",
    "mlsubmit verify build/submission/mlperf_submission_Graphcore.tar.gz --passphrase-file": "needs the encrypted "
    "archive of the package example above (skipped)",
    "mlsubmit verify build/submission/Graphcore.tar.gz": "an older build with one flipped bit; "
    "tests/cli/test_package.py flips the bit",
    "mlsubmit report --ruleset 1.0.0 --prices prices.toml": "shows an excerpt (the per-dollar lines) of a report on "
    "two published trees; tests/cli/test_report_per_dollar.py",
}
# `echo $?` after a skipped command is skipped with it.


def _skip_reason(example: Example) -> str | None:
    for start, reason in SKIPPED.items():
        if example.command.startswith(start):
            return reason
    if example.command.strip() == "echo $?":
        before = [e for e in ALL if e.doc == example.doc and e.session == example.session and e.line < example.line]
        return _skip_reason(before[-1]) if before else "no command before it"
    return None


# --- the folders the pages' commands run in ---------------------------------------------------------------------


def _demo_runs(root: Path) -> None:
    saved = list(sys.path)  # tools/demo.py puts the repository and tests/ on the path when imported
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import demo  # tools/demo.py: the raw runs make demo writes, and nothing else of it
    finally:
        sys.path[:] = saved
    demo.write_runs(root / "build" / "demo")
    write_run(root / "build" / "demo-advise" / "ipu-pod16-open" / "resnet" / "result_0.txt",
              RunSpec(benchmark="resnet", ruleset="1.0.0", division="open", platform="ipu-pod16-TF1-open",
                      hyperparameters={"global_batch_size": 3264, "lars_opt_momentum": 0.95,
                                       "lars_opt_weight_decay": 3e-05}))  # as the Makefile's demo-advise  # fmt: skip


def _ci_uploads(root: Path) -> None:
    write_run(root / "uploads" / "result_0.txt", RunSpec(seed=1))
    write_run(root / "uploads" / "result_1.txt", RunSpec(seed=2, converge=False))


def _waiver_run(root: Path) -> None:
    write_run(root / "uploads" / "result_0.txt", RunSpec(benchmark="gpt_oss_20b", ruleset="6.0.0",
                                                         hyperparameters={"global_batch_size": 64,
                                                                          "opt_end_learning_rate": 1e-05}))  # fmt: skip


def _waiver_grant(root: Path) -> None:
    """The page's mlsubmit.toml, as it shows it, beside uploads/."""
    text = (ROOT / "docs" / "waivers.md").read_text(encoding="utf-8")
    toml = text[text.index("```toml\n[check]") + len("```toml\n") :]
    (root / "mlsubmit.toml").write_text(toml[: toml.index("```")], encoding="utf-8")


def _systems(root: Path) -> None:
    shutil.copytree(ROOT / "systems", root / "systems")
    shutil.copytree(ROOT / "examples", root / "examples")
    # the page's "copy of our POD16 file with five mistakes": the division, the count, the cores, two placeholders
    text = (ROOT / "systems" / "ipu-pod16-POPART-closed.json").read_text(encoding="utf-8")
    for right, wrong in (('"closed"', '"close"'), ('"accelerators_per_node": "16"', '"accelerators_per_node": "8"'),
                         ('"host_processor_core_count": "64"', '"host_processor_core_count": "32"'),
                         ('"cooling": "Air"', '"cooling": "TODO"'), ('"Ubuntu 18.04.3"', '"TBD"')):  # fmt: skip
        assert right in text, right
        text = text.replace(right, wrong)
    (root / "ipu-pod16-POPART-closed.json").write_text(text, encoding="utf-8")


def _corpus_link(root: Path) -> None:
    corpus = corpus_path()
    if corpus is not None:
        (root.parent / "shared").mkdir(exist_ok=True)
        with contextlib.suppress(FileExistsError):
            (root.parent / "shared" / "corpus").symlink_to(corpus)


@dataclass(frozen=True)
class World:
    make: tuple[Callable[[Path], None], ...]
    today: dt.date | None = None  # the day the page's output was taken (waiver expiry is judged on it)


DEMO = World((_demo_runs, _corpus_link))  # one folder for the pages that name the demo's files
WORLDS: dict[str, World] = {
    "README.md": DEMO,
    "docs/ci.md": World((_ci_uploads,)),
    "docs/hyperparameters.md": DEMO,
    "docs/open-bert-advice.md": DEMO,
    "docs/report.md": DEMO,
    "docs/systems.md": World((_systems,)),
    "docs/waivers.md": World((_waiver_run, _waiver_grant), today=dt.date(2026, 11, 25)),  # "Output from 2026-11-25"
    "docs/packaging.md": DEMO,
}
# An example that runs before its page's folder is complete, by the start of its command.
BEFORE: dict[tuple[str, str], World] = {
    ("docs/waivers.md", "mlsubmit check --ruleset 6.0.0 uploads"): World((_waiver_run,)),  # before the grant
}


def world_of(example: Example) -> World:
    for (doc, start), world in BEFORE.items():
        if example.doc == doc and example.command.startswith(start):
            return world
    return WORLDS[example.doc]


@pytest.fixture(scope="session")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Example], Path]:
    top = tmp_path_factory.mktemp("doc-examples")
    made: dict[World, Path] = {}

    def world(example: Example) -> Path:
        wanted = world_of(example)
        if wanted not in made:
            root = top / f"{re.sub(r'[^A-Za-z0-9]', '_', example.doc)}-{len(made)}" / "work"
            root.mkdir(parents=True)
            for make in wanted.make:
                make(root)
            made[wanted] = root
        return made[wanted]

    return world


# --- running a command and comparing its output -------------------------------------------------------------------


class _Shell:
    """`mlsubmit ...`, `echo $?` and `cat FILE`, as a terminal runs them; stdout and stderr in one stream."""

    def __init__(self) -> None:
        self.status = 0

    def run(self, command: str) -> str:
        argv = shlex.split(command, comments=True)
        stream = io.StringIO()
        with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
            if argv[0] == "mlsubmit":
                self.status = main(argv[1:])
            elif argv == ["echo", "$?"]:
                print(self.status)
            elif argv[0] == "cat":
                print(Path(argv[1]).read_text(encoding="utf-8"), end="")
            else:
                raise AssertionError(f"not a command this test runs: {command!r}; add it to SKIPPED with why")
        return stream.getvalue()


def _pattern(shown: tuple[str, ...]) -> re.Pattern[str]:
    parts = []
    for line in shown:
        if line.strip() in ANY:
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            pieces = re.split(r"…", line)
            parts.append("[^\n]*?".join(re.escape(p) for p in pieces) + r"[ \t]*\n")
    return re.compile("".join(parts), re.DOTALL)


def matches(shown: tuple[str, ...], output: str) -> bool:
    text = "".join(line.rstrip() + "\n" for line in output.splitlines())
    return _pattern(shown).fullmatch(text) is not None


@pytest.fixture
def fixed_today(monkeypatch: pytest.MonkeyPatch) -> Callable[[dt.date | None], None]:
    """Waiver expiry judged on the day a page's output was taken, not today (docs/waivers.md says which)."""

    def fix(day: dt.date | None) -> None:
        if day is None:
            return
        import mlsubmit.checker.policy.severity as policy  # the run's policy applies the waivers

        real = policy.waiver_pass
        monkeypatch.setattr(policy, "waiver_pass", lambda waivers, today=None, **kw: real(
            waivers, today=day, **kw))  # fmt: skip

    return fix


def _session(example: Example) -> list[Example]:
    """The commands of its block up to it: `echo $?` needs the status of the one before."""
    return [e for e in ALL if e.doc == example.doc and e.session == example.session and e.line <= example.line]


def _status_shown(example: Example) -> bool:
    """Whether the page shows how the command ended when it is a usage error or a crash: its error line, or an
    `echo $?` right after it."""
    after = [e for e in ALL if e.doc == example.doc and e.session == example.session and e.line > example.line]
    return any("mlsubmit: error:" in line for line in example.shown) or bool(
        after and after[0].command.strip() == "echo $?")


@pytest.mark.parametrize("example", ALL, ids=[e.id for e in ALL])
def test_the_example_prints_what_its_page_shows(example: Example, worlds: Callable[[Example], Path],
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 fixed_today: Callable[[dt.date | None], None]) -> None:  # fmt: skip
    reason = _skip_reason(example)
    if reason is not None:
        pytest.skip(reason)
    if "../shared/corpus" in example.command and corpus_path() is None:
        pytest.skip("the example reads the corpus, which is not here (MLSUBMIT_CORPUS)")
    assert example.doc in WORLDS, f"{example.id}: no folder is laid out for {example.doc} (WORLDS)"
    monkeypatch.chdir(worlds(example))
    for name in ("GITHUB_ACTIONS", "NO_COLOR", "MLSUBMIT_PROGRESS"):
        monkeypatch.delenv(name, raising=False)
    fixed_today(world_of(example).today)
    shell = _Shell()
    output = ""
    for step in _session(example):
        output = shell.run(step.command)
    if example.command.strip() != "echo $?":
        assert shell.status in (0, 1) or _status_shown(example), (
            f"{example.id}: `{example.command}` exited {shell.status}, which the page does not show:\n{output}")
    assert not example.shown or matches(example.shown, output), (
        f"{example.id}: `{example.command}` printed\n{output}\nbut the page shows\n" + "\n".join(example.shown))


def test_every_skip_names_an_example_and_every_page_is_parsed() -> None:
    for start in SKIPPED:
        assert any(e.command.startswith(start) for e in ALL), f"SKIPPED names no example: {start!r}"
    assert len(SHOWING) >= 20 and {"README.md", "docs/ci.md", "docs/waivers.md"} <= {e.doc for e in SHOWING}


@pytest.mark.parametrize(("shown", "output", "ok"), [
    (("a", "…", "z"), "a\nb\nc\nz\n", True),
    (("a", "...", "z"), "a\nz\n", True),
    (("…/result_0.txt: PASS",), "/x/y/result_0.txt: PASS\n", True),
    (("a", "z"), "a\nb\nz\n", False),
    (("a",), "a\nb\n", False),
])  # fmt: skip
def test_the_convention_of_shown_output(shown: tuple[str, ...], output: str, ok: bool) -> None:
    assert matches(shown, output) is ok


def test_a_page_is_read_into_its_examples(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("text\n\n```\n$ mlsubmit a \\\n    b   # why\nout 1\n\n$ echo $?\n1\n```\n\n```toml\n$ x\n```\n")
    found = [(e.line, e.command, e.shown) for e in examples(page, "page.md")]
    assert found == [(4, "mlsubmit a  b   # why", ("out 1",)), (8, "echo $?", ("1",))]
