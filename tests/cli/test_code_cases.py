"""A failing and a passing case, through the command, for finding codes no example file can show and no other test
named: PKG011, PKG035, PKG036 (package), REP001 (report), REV036 (review since), TREE001 (check).

Each failing case asserts the code with its path and message; each passing case is the nearest input that does not
raise it. Runs, trees and repositories are written here (fixtures.demo, fixtures.synth_org, git plumbing)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from fixtures.synth import RunSpec
from fixtures.synth_org import runs, system, write_org
from mlsubmit.submission.export import safe_parts

Cli = Callable[..., tuple[int, str, str]]
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is needed to export the implementation")


def findings(out: str) -> list[dict[str, Any]]:
    """Every finding of a JSON report: those of the run and those of each file."""
    data = json.loads(out)
    return [*data["findings"], *(f for entry in data.get("files", []) for f in entry["findings"])]


def with_code(out: str, code: str) -> list[dict[str, Any]]:
    return [f for f in findings(out) if f["code"] == code]


def example(tmp_path: Path) -> Any:
    from fixtures.demo import write_example

    return write_example(tmp_path / "w", ROOT / "systems")


def package(run_cli: Cli, config: Path) -> str:
    code, out, err = run_cli("package", config, "--format", "json")
    assert code in (0, 1), err
    return out


# --- PKG011: a run without run_start (submission/run_selection.py) ------------------------------------------------


@needs_git
def test_pkg011_a_run_without_run_start(tmp_path: Path, run_cli: Cli) -> None:
    from fixtures.demo import raw_run

    ex = example(tmp_path)
    assert with_code(package(run_cli, ex.config), "PKG011") == []  # passing: every run has its run_start
    shutil.rmtree(ex.root / "build")
    job = ex.bert_runs[0]
    job.write_bytes(raw_run(RunSpec(benchmark="bert", ruleset="1.1.0", platform="IPU-POD16", seed=1000,
                                    start_ms=1_630_000_000_000, omit=("run_start",))))  # fmt: skip
    found = with_code(package(run_cli, ex.config), "PKG011")
    assert len(found) == 1, found
    assert found[0]["path"].endswith("runs/pod16-bert/job_00.out") and found[0]["severity"] == "warning"
    assert "no run_start record" in found[0]["message"]


# --- PKG035: an unsafe name in the exported git tree (submission/export.py) -----------------------------------


def _git(repo: Path, *argv: str, stdin: str | None = None) -> str:
    done = subprocess.run(["git", "-C", str(repo), *argv], input=stdin, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _tree_with(repo: Path, tree: str, parts: list[str], line: str) -> str:
    """A copy of `tree` with the entry `line` (mktree's format) added in the folder `parts` below it: git mktree
    takes names `git add` refuses, such as `..`."""
    entries = _git(repo, "ls-tree", tree).splitlines()
    if not parts:
        return _git(repo, "mktree", stdin="\n".join([*entries, line]) + "\n")
    out = []
    for entry in entries:
        meta, name = entry.split("\t", 1)
        if name == parts[0]:
            meta = meta.rsplit(" ", 1)[0] + " " + _tree_with(repo, meta.rsplit(" ", 1)[1], parts[1:], line)
        out.append(f"{meta}\t{name}")
    return _git(repo, "mktree", stdin="\n".join(out) + "\n")


def _retag(repo: Path, tree: str) -> None:
    env = ("-c", "user.name=t", "-c", "user.email=t@example.invalid")
    commit = _git(repo, *env, "commit-tree", tree, "-p", "HEAD", "-m", "crafted tree")
    _git(repo, "tag", "-f", "v1.0", commit)


@needs_git
@pytest.mark.parametrize("name", ["..", ".git"])
def test_pkg035_names_git_add_refuses_never_leave_the_folder(tmp_path: Path, run_cli: Cli, name: str) -> None:
    """A `..` or `.git` folder made with git plumbing: GitPython 3.2 refuses to read such a tree (exit 2, the
    revision named); an older GitPython hands it over, and the name check leaves it out (PKG035). Either way the
    file is written nowhere."""
    ex = example(tmp_path)
    blob = _git(ex.repo, "hash-object", "-w", "--stdin", stdin="escaped\n")
    inner = _git(ex.repo, "mktree", stdin=f"100644 blob {blob}\tescaped.txt\n")
    _retag(ex.repo, _tree_with(ex.repo, "HEAD^{tree}", ["bert", "popart"], f"040000 tree {inner}\t{name}"))
    code, out, err = run_cli("package", ex.config, "--format", "json")
    if code == 2:
        assert "git could not read revision 'v1.0'" in err and "Traceback" not in err
    else:
        found = with_code(out, "PKG035")
        assert [f["path"] for f in found] == [f"ipu-benchmarks/bert/popart/{name}/escaped.txt"], found
        assert f"unsafe name '{name}/escaped.txt' in the git tree; left out" in found[0]["message"]
    assert list(tmp_path.rglob("escaped.txt")) == []  # not beside the folder, not above it
    assert not safe_parts((name, "escaped.txt")) and safe_parts(("escaped.txt",))


@needs_git
@pytest.mark.parametrize(("name", "unsafe"), [("notes\tv2.txt", True), ("notes\\v2.txt", True),
                                              ("notes v2.txt", False)])  # fmt: skip
def test_pkg035_a_control_character_or_backslash_in_a_commit(tmp_path: Path, run_cli: Cli, name: str,
                                                              unsafe: bool) -> None:  # fmt: skip
    """`git add` takes a tab or a backslash in a name (only NUL and / are refused); a space is the passing case."""
    from fixtures.repo import commit_example

    ex = example(tmp_path)
    commit_example(ex.repo, {f"bert/popart/{name}": b"notes\n"}, "notes")
    _git(ex.repo, "tag", "-f", "v1.0")
    found = with_code(package(run_cli, ex.config), "PKG035")
    shipped = list((ex.root / "build").rglob("notes*v2.txt"))
    if unsafe:
        assert [f["path"] for f in found] == [f"ipu-benchmarks/bert/popart/{name}"] and shipped == [], found
        assert repr(name) in found[0]["message"]
    else:
        assert found == [] and [p.name for p in shipped] == [name]


# --- PKG036: no implementation for a benchmark (submission/build.py) ------------------------------------------


@needs_git
def test_pkg036_a_benchmark_without_an_implementation(tmp_path: Path, run_cli: Cli) -> None:
    ex = example(tmp_path)
    assert with_code(package(run_cli, ex.config), "PKG036") == []  # passing: both entries name one
    shutil.rmtree(ex.root / "build")
    text = ex.config.read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if 'path = "resnet/tf"' in x)
    ex.config.write_text(text.replace(line + "\n", ""), encoding="utf-8")
    found = with_code(package(run_cli, ex.config), "PKG036")
    assert [(f["path"], f["message"]) for f in found] == [
        (str(ex.config), "no implementation is given for benchmark 'resnet'")], found


# --- REP001: a prices.toml in the tree that cannot be used (mlsubmit/report/inputs.py) --------------------------


def _org(root: Path) -> Path:
    return write_org(root / "Graphcore", {"ipu-pod16-closed": system()},
                     {("ipu-pod16-closed", "bert"): runs([30.0, 31.0, 29.0, 33.0, 30.5], ruleset="1.1.0")})


def test_rep001_prices_toml_in_the_tree_that_cannot_be_used(tmp_path: Path, run_cli: Cli) -> None:
    """The report's JSON counts findings; the HTML page lists them, each with its code and place."""
    org = _org(tmp_path)
    prices, page = org / "prices.toml", tmp_path / "report.html"
    entry = 'price = 149995\nsource = "list price"\ndate = "2021-06"\n'  # the schema asks for all three
    prices.write_text(f'[systems."IPU-POD16"]\n{entry}', encoding="utf-8")
    code, out, err = run_cli("report", "--ruleset", "1.1.0", "--format", "json", "--html", page, org)
    assert code in (0, 1), err
    assert json.loads(out)["results"][0]["price"]["amount"] == 149995
    assert "REP001" not in page.read_text(encoding="utf-8")
    prices.write_text(f'[systems."IPU-POD16"\n{entry}', encoding="utf-8")  # the table's header unclosed
    code, out, err = run_cli("report", "--ruleset", "1.1.0", "--format", "json", "--html", page, org)
    assert code in (0, 1), err
    assert "price" not in json.loads(out)["results"][0]  # the report is written without the file's prices
    html = page.read_text(encoding="utf-8")
    row = html[html.index("<td>REP001</td>"):]
    row = row[:row.index("</tr>")]
    assert "cannot read prices: Expected" in row and "<code>prices.toml:1</code>" in row, row


# --- REV036: the closed hyperparameter rules changed between the rounds (checker/review/since.py) ----------------


@pytest.mark.parametrize(("benchmark", "changed"), [("rnnt", True), ("bert", False)])
def test_rev036_closed_rules_changed_between_rounds(tmp_path: Path, run_cli: Cli, benchmark: str,
                                                     changed: bool) -> None:  # fmt: skip
    """RNN-T's data_train_num_buckets row changed from 1.0 to 1.1; BERT's rows did not."""
    trees = {ruleset: write_org(tmp_path / ruleset / "Graphcore", {"pod16": system()},
                                {("pod16", benchmark): runs([20.0] * 3, ruleset=ruleset)})
             for ruleset in ("1.0.0", "1.1.0")}  # fmt: skip
    code, out, err = run_cli("review", "since", "--previous", trees["1.0.0"], "--current", trees["1.1.0"],
                             "--previous-ruleset", "1.0.0", "--ruleset", "1.1.0", "--format", "json")
    assert code == 0, err  # information, never a verdict
    found = with_code(out, "REV036")
    if not changed:
        assert found == []
        return
    assert [(f["path"], f["severity"]) for f in found] == [(str(trees["1.1.0"]), "info")], found
    assert found[0]["message"].startswith("rnnt: closed hyperparameter rules changed between 1.0 and 1.1: "
                                          "data_train_num_buckets: ")


# --- TREE001: an organisation folder without results/ (checker/tree) -------------------------------------------


def test_tree001_an_organisation_folder_without_results(tmp_path: Path, run_cli: Cli) -> None:
    org = _org(tmp_path)
    code, out, err = run_cli("check", "--ruleset", "1.1.0", "--jobs", "1", "--format", "json", tmp_path)
    assert with_code(out, "TREE001") == [], err  # passing: the same tree with its results/
    shutil.rmtree(org / "results")
    (org / "benchmarks" / "bert" / "implementations" / "popart").mkdir(parents=True)
    (org / "benchmarks" / "bert" / "implementations" / "popart" / "README.md").write_text("BERT\n")
    code, out, err = run_cli("check", "--ruleset", "1.1.0", "--jobs", "1", "--format", "json", tmp_path)
    found = with_code(out, "TREE001")
    assert code == 1 and [(f["path"], f["message"], f["severity"]) for f in found] == [
        (str(org), "no results/ folder", "error")], (found, err)
