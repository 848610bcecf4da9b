"""The example files per finding code (tests/examples/README in docs/architecture.md): each negative file is reported
with its code at the line or JSON pointer index.yaml names, each positive file is not; the committed files are
what make_examples.py writes; and every code of the catalogue is either shown by a pair of files or listed in
not_file_shaped.yaml with the tests that hold it.

The command runs in this process through `mlsubmit.cli.main`, the checks of one command and options in one call
(`check --jobs 1`: no worker pool), so the whole module takes a few seconds.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from mlsubmit.cli import main

TESTS = Path(__file__).resolve().parents[1]
HERE = TESTS / "examples"  # the example files and their writer; this test lives in the cli tier
# read at collection (the parameters come from it): libyaml's safe loader when PyYAML has it, ten times the speed
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
INDEX: dict[str, dict[str, Any]] = yaml.load((HERE / "index.yaml").read_text(encoding="utf-8"), Loader=_LOADER)
NOT_SHAPED: dict[str, dict[str, Any]] = yaml.load((HERE / "not_file_shaped.yaml").read_text(encoding="utf-8"),
                                                  Loader=_LOADER)
SIDES = ("negative", "positive")


@contextlib.contextmanager
def _in_examples() -> Iterator[None]:
    """Paths in index.yaml (and in a waiver file) are relative to this folder."""
    before = os.getcwd()
    os.chdir(HERE)
    try:
        yield
    finally:
        os.chdir(before)


def _argv(entry: dict[str, Any], file: str) -> list[str]:
    argv = [a.replace("{file}", file) for a in entry["argv"]]
    return argv if "{file}" in entry["argv"] else [*argv, file]


def _run(argv: list[str], out: Path) -> list[dict[str, Any]]:
    """Every finding of one command (those of each file and those of the run), read from its JSON report; `{tmp}`
    is a new folder beside the report (where `systems capture` writes)."""
    tmp = out.parent / f"tmp-{len(list(out.parent.iterdir()))}"
    argv = [a.replace("{tmp}", str(tmp)) for a in argv]
    extra = ["--jobs", "1"] if argv[0] == "check" else []
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main([argv[0], *extra, *argv[1:], "--format", "json", "--output", str(out)])
    assert code in (0, 1), (argv, code)
    report = json.loads(out.read_text(encoding="utf-8"))
    return [*report["findings"], *(f for file in report["files"] for f in file["findings"])]


def _batches() -> dict[tuple[str, ...], list[str]]:
    """The files of each `check` command given as argv + file, run in one call; any other command, alone."""
    batches: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for entry in INDEX.values():
        for side in SIDES:
            file = entry[side]["file"]
            if entry["argv"][0] == "check" and "{file}" not in entry["argv"]:
                batches[tuple(entry["argv"])].append(file)
            else:
                batches[tuple(_argv(entry, file))].append(file)
    return batches


@pytest.fixture(scope="module")
def found(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """The findings reported on each example file (by its path under tests/examples/)."""
    out = tmp_path_factory.mktemp("examples") / "report.json"
    by_file: dict[str, list[dict[str, Any]]] = {}
    with _in_examples():
        for argv, files in _batches().items():
            batch = list(argv) if files[0] in argv else [*argv, *files]
            findings = _run(batch, out)
            for file in files:
                by_file[file] = [f for f in findings if f["path"] == file]
    return by_file


CASES = [pytest.param(code, side, id=f"{code}-{side}") for code in INDEX for side in SIDES]


@pytest.mark.parametrize(("code", "side"), CASES)
def test_example(found: dict[str, list[dict[str, Any]]], code: str, side: str) -> None:
    entry = INDEX[code]
    where = entry[side]
    mine = [f for f in found[where["file"]] if f["code"] == code]
    if side == "positive":
        assert mine == [], f"{where['file']}: {code} reported, {entry['shows']!r} should be absent"
        return
    key = "pointer" if "pointer" in where else "line"
    at = [f.get(key) for f in mine]
    assert where[key] in at, f"{where['file']}: {code} expected at {key} {where[key]!r}, reported at {at}"


def test_index_and_list_follow_their_schemas() -> None:
    for data, schema in ((INDEX, "index.schema.json"), (NOT_SHAPED, "not_file_shaped.schema.json")):
        jsonschema.Draft202012Validator(json.loads((HERE / schema).read_text(encoding="utf-8"))).validate(data)


def _catalogue() -> set[str]:
    """Every code `mlsubmit explain` lists."""
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        assert main(["explain"]) == 0
    return {m.group(1) for m in re.finditer(r"^([A-Z]+[0-9]{3})\s", text.getvalue(), re.MULTILINE)}


def test_every_code_is_shown_or_listed_exactly_once() -> None:
    codes = _catalogue()
    assert len(codes) > 150
    assert set(INDEX) & set(NOT_SHAPED) == set()
    assert set(INDEX) | set(NOT_SHAPED) == codes, {
        "neither shown nor listed": sorted(codes - set(INDEX) - set(NOT_SHAPED)),
        "not in the catalogue": sorted((set(INDEX) | set(NOT_SHAPED)) - codes)}


def test_every_file_is_in_the_index_and_named_for_its_code() -> None:
    named = {entry[side]["file"]: code for code, entry in INDEX.items() for side in SIDES}
    on_disk = {str(p.relative_to(HERE)) for side in SIDES for p in (HERE / side).rglob("*") if p.is_file()}
    assert on_disk == set(named)
    for file, code in named.items():
        named_for = Path(file).parts[1]  # the file, or the folder of a result_0.txt
        assert named_for.startswith(f"{code}-") or named_for.split(".")[0] == code, file
    for entry in INDEX.values():
        assert entry["negative"]["file"].split("/", 1)[1] == entry["positive"]["file"].split("/", 1)[1]


def test_listed_codes_name_tests_that_hold_them() -> None:
    """The test files named for a code that has no example exist (wherever tests/ keeps them) and mention it."""
    files: dict[str, list[Path]] = defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        if path != Path(__file__).resolve():
            files[path.name].append(path)
    for code, listed in NOT_SHAPED.items():
        for name in listed["tests"]:
            assert files[name], f"{code}: {name} not found under tests/"
            texts = [p.read_text(encoding="utf-8") for p in files[name]]
            assert any(code in t for t in texts), f"{code}: {name} does not mention it"


def test_committed_files_are_what_the_generator_writes() -> None:
    sys.path[:0] = [p for p in (str(HERE), str(TESTS)) if p not in sys.path]
    import make_examples

    assert make_examples.stale() == [], "run tests/examples/make_examples.py and commit its output"
