"""The code scan is never less thorough than detect-secrets: the same secrets, file for file, line for line.

Differential: plain detect-secrets (SecretsCollection.scan_file, the same plugins) against checker/hygiene/secrets.py on
every file the tree check hands to the secret scan, over the corpus' implementation code and a generated tree
with one planted secret of every detector kind. Also the pre-filter's assumptions, checked against re itself, and
the hygiene cache (content-hashed, faults are misses).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

import pytest
from fixtures.project_tools import load_tool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mlsubmit.checker.hygiene import prefilter as secretfilter
from mlsubmit.checker.hygiene import scan as hygiene
from mlsubmit.checker.hygiene import secrets as codescan
from mlsubmit.checker.hygiene.scan import SECRET_PLUGINS

ROUNDS = ("training_results_v4.0", "training_results_v5.0", "training_results_v5.1")


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("round")
    return out, load_tool("gen_round").write_round(out, scale=0.01, seed=7, runs=1)


def _scanned_files(roots: list[Path]) -> list[Path]:
    """The files the tree check gives the secret scan: regular, not junk, at most 2 MB, UTF-8 without a NUL in
    the first 8 KB (what hygiene.find_secrets sends to detect-secrets)."""
    entries = [e for root in roots for e in hygiene._secret_candidates(hygiene._walk(root), ("",))]
    return [e.path for e in entries if hygiene._read_kind(e.path)[0] == "text"]


# What of a file's path detect-secrets' filters read, beside its bytes: is_non_text_file and the allowlist its
# extension, is_lock_file its name, is_swagger_file the whole path ("swagger" anywhere), is_invalid_file whether it
# is a file; its transformers and the keyword plugin read the extension. A filter added by a later version may read
# more: then `_plain` must scan every path again.
_PATH_READERS = frozenset({
    "detect_secrets.filters.allowlist.is_line_allowlisted", "detect_secrets.filters.common.is_invalid_file",
    "detect_secrets.filters.heuristic.is_non_text_file", "detect_secrets.filters.heuristic.is_lock_file",
    "detect_secrets.filters.heuristic.is_swagger_file"})
_SECRET_ONLY = frozenset({  # filters given the secret and its line, never the path
    "detect_secrets.filters.heuristic.is_sequential_string", "detect_secrets.filters.heuristic.is_potential_uuid",
    "detect_secrets.filters.heuristic.is_likely_id_string", "detect_secrets.filters.heuristic.is_templated_secret",
    "detect_secrets.filters.heuristic.is_prefixed_with_dollar_sign",
    "detect_secrets.filters.heuristic.is_indirect_reference",
    "detect_secrets.filters.heuristic.is_not_alphanumeric_string"})


def _same_answer(path: Path) -> tuple[bytes, str, bool]:
    """Files with equal keys get the same answer from detect-secrets: same bytes, same name, same swagger test."""
    return hashlib.sha256(path.read_bytes()).digest(), path.name, "swagger" in str(path)


def _plain(paths: list[Path]) -> dict[str, list[tuple[int, str]]]:
    """Plain detect-secrets on every distinct file (`_same_answer`: 21% of the corpus code are copies of another
    file of the same name); each copy is given its original's answer."""
    from detect_secrets import SecretsCollection
    from detect_secrets.settings import get_settings, transient_settings

    first: dict[tuple[bytes, str, bool], Path] = {}
    original = {path: first.setdefault(_same_answer(path), path) for path in paths}
    collection = SecretsCollection()
    with transient_settings(codescan.settings(SECRET_PLUGINS)):
        assert set(get_settings().filters) == _PATH_READERS | _SECRET_ONLY  # the copies' answers hold
        for path in first.values():
            collection.scan_file(str(path))
    found = {name: sorted({(int(s.line_number), str(s.type)) for s in hits})
             for name, hits in collection.data.items() if hits}  # fmt: skip
    return {str(path): found[str(orig)] for path, orig in original.items() if str(orig) in found}


def _ours(paths: list[Path], **kw: Any) -> dict[str, list[tuple[int, str]]]:
    jobs = [codescan.Job(str(p), hygiene._read_kind(p)[1]) for p in paths]
    out: dict[str, list[tuple[int, str]]] = {}
    for name, line, kind in codescan.scan_files(jobs, SECRET_PLUGINS, **kw):
        out.setdefault(name, []).append((line, kind))
    return {k: sorted(set(v)) for k, v in out.items()}


def _compare(plain: dict[str, list[tuple[int, str]]], ours: dict[str, list[tuple[int, str]]]) -> tuple[int, int]:
    """(missed, new): secrets plain detect-secrets reports that we do not, and the other way round."""
    missed = sum(len(set(v) - set(ours.get(k, []))) for k, v in plain.items())
    new = sum(len(set(v) - set(plain.get(k, []))) for k, v in ours.items())
    return missed, new


def test_generated_tree_same_secrets_and_every_planted_kind(generated: tuple[Path, dict[str, Any]]) -> None:
    out, summary = generated
    paths = _scanned_files([out])
    plain, ours = _plain(paths), _ours(paths, workers=2)
    assert _compare(plain, ours) == (0, 0)
    found = {(os.path.relpath(name, out), kind) for name, hits in ours.items() for _, kind in hits}
    planted = {(path, kind) for path, kind in summary["planted"]}
    assert planted <= found, planted - found  # 0 missed, of every kind
    assert len({kind for _, kind in planted}) == 24  # one per plugin used
    assert not any(name.endswith("allowed.py") for name in ours)  # detect-secrets' allowlist comment holds


@pytest.mark.corpus
@pytest.mark.slow
def test_corpus_code_same_secrets_as_detect_secrets(corpus: Path) -> None:
    roots = sorted(p for r in ROUNDS for p in (corpus / r).glob("*/benchmarks"))
    if not roots:
        pytest.skip("no corpus tree with implementation code (v4.0-v5.1)")
    paths = _scanned_files(roots)
    assert len(paths) > 1000
    assert _compare(_plain(paths), _ours(paths)) == (0, 0)


def test_yaml_ini_and_eager_config_lines_are_scanned_as_detect_secrets_does(tmp_path: Path) -> None:
    files = {
        "a.yaml": "db:\n  password: \"hunter2hunter2\"\n  token: !!binary aGVsbG8=\n",
        "b.ini": "[s]\nsecret = 0123456789abcdefXYZ\n  continued = x\n",
        "c.env": "PASSWORD=sw0rdfish99\nURL=https://u:pw9x8y7z@h.example\n",
        "d.py": "x = 1\n# pragma: allowlist nextline secret\npassword = 'not-reported-1'\n",
        "e.txt": "İ ı ſ K: aPI_KEY = \"x7Hq2LmP\"\n",  # non-ASCII case folds of ASCII letters
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    paths = sorted(tmp_path.iterdir())
    assert _compare(_plain(paths), _ours(paths)) == (0, 0)


_INI_PARTS = ["[s]", "[global]", "a = b", "a: b", "a=", "  more", "\t", "# note", "; note", "x", ":", "=", "[", "\n"]


@given(st.lists(st.sampled_from(_INI_PARTS), max_size=14).map("".join), st.booleans())
@settings(max_examples=500, deadline=None)
def test_the_config_transformers_are_skipped_only_where_their_parser_fails(text: str, header: bool) -> None:
    """The first-error parser says "unreadable" exactly where detect-secrets' own parser raises a
    configparser error (the transformer's ParsingError), with and without its [global] header."""
    import configparser

    from detect_secrets.transformers.config import IniFileParser

    try:
        IniFileParser(io.StringIO(text), add_header=header)
        fails = False
    except configparser.Error:
        fails = True
    assert codescan._ini_readable(text, header=header) is not fails


# --- the hyperscan gate: a relaxed pattern accepts whatever its pattern accepts ---------------------------------


def _gate_patterns() -> list[re.Pattern[str]]:
    with codescan.scanning(SECRET_PLUGINS):
        return list(secretfilter._every_pattern(SECRET_PLUGINS))


@pytest.mark.parametrize("index", range(len(_gate_patterns())))
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_the_gate_lets_through_every_text_a_pattern_matches(index: int, data: st.DataObject) -> None:
    """Texts drawn to match a plugin pattern (ASCII, with anything around the match): the gate reports the
    pattern, so the pre-filter runs it there."""
    pytest.importorskip("hyperscan", reason="the gate needs hyperscan (a dependency on Linux x86-64 only)")
    with codescan.scanning(SECRET_PLUGINS):
        gate = secretfilter.gate(SECRET_PLUGINS)
    assert gate is not None and index in gate.gated  # every pattern of the plugins we use is gated
    rx = _gate_patterns()[index]
    text = data.draw(st.from_regex(rx, alphabet=st.characters(max_codepoint=127)))
    assert rx.search(text)
    assert index in (gate.possible(text) or set())


def test_the_gate_passes_over_what_no_pattern_matches_and_leaves_non_ascii_to_re() -> None:
    pytest.importorskip("hyperscan", reason="the gate needs hyperscan (a dependency on Linux x86-64 only)")
    with codescan.scanning(SECRET_PLUGINS):
        gate = secretfilter.gate(SECRET_PLUGINS)
    assert gate is not None
    assert gate.possible("import os\nprint(os.getcwd())\n") == set()
    assert gate.possible("caf\u00e9 = 1\n") is None  # every pattern runs on a non-ASCII text


def test_a_damaged_or_foreign_gate_copy_is_compiled_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("hyperscan", reason="the gate needs hyperscan (a dependency on Linux x86-64 only)")
    from mlsubmit.checker.hygiene import gate as secretgate

    assert secretgate._load(["not base64 of a database", [0]]) is None
    assert secretgate._load({"rcp_data": {}}) is None  # another derived copy's shape
    monkeypatch.setenv("MLSUBMIT_DATA_CACHE", str(tmp_path))
    patterns = tuple(_gate_patterns()[:3])
    first = secretgate.build(patterns)
    (copy,) = tmp_path.glob("secretgate-*.json")
    copy.write_text(copy.read_text().replace('"', "'", 3))  # damaged: not read, compiled again
    again = secretgate.build(patterns)
    assert first is not None and again is not None and again.gated == first.gated == frozenset(range(3))


def test_without_hyperscan_the_same_candidates(monkeypatch: pytest.MonkeyPatch,
                                               generated: tuple[Path, dict[str, Any]]) -> None:  # fmt: skip
    out, _ = generated
    paths = _scanned_files([out])[:400]
    with_gate = _ours(paths)
    monkeypatch.setattr(secretfilter, "gate", lambda plugins: None)
    assert _ours(paths) == with_gate


# --- the pre-filter's assumptions, checked against re -------------------------------------------------------


def test_every_plugin_has_a_complete_prefilter() -> None:
    for name in ("x.py", "x.yaml", "x.go", "x.c", "x.cpp", "x.ini", "x.txt", "Makefile"):
        probes = secretfilter.plugin_probes(SECRET_PLUGINS, name)
        assert probes is not None and len(probes) > 40


def test_fold_agrees_with_re_ignorecase_over_all_of_unicode() -> None:
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    folded = secretfilter.ascii_folded(every)
    assert len(folded) == len(every)
    for code in range(128):
        ch = chr(code)
        matching = re.findall("(?i)" + re.escape(ch), every)
        assert all(secretfilter.ascii_folded(m) == ch.lower() for m in matching), ch
    changed_to_ascii = {c for c, f in zip(every, folded, strict=True) if ord(c) > 127 and f.isascii()}
    assert changed_to_ascii == {chr(c) for c in secretfilter.FOLD_EXTRA}


def _walk(items: Any) -> Iterator[tuple[Any, Any]]:
    for op, av in items:
        yield op, av
        if op in (sre.SUBPATTERN,):
            yield from _walk(av[3])
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            yield from _walk(av[2])
        elif op is sre.BRANCH:
            for branch in av[1]:
                yield from _walk(branch)
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            yield from _walk(av[1])
        elif op is sre.ATOMIC_GROUP:
            yield from _walk(av)


def _may_match_newline(item: tuple[Any, Any]) -> bool:
    op, av = item
    if op is sre.LITERAL:
        return bool(av == 10)
    if op is sre.NOT_LITERAL:
        return bool(av != 10)
    if op is sre.IN:
        pattern = "[" + "".join(_class_part(p) for p in av) + "]"
        return re.fullmatch(pattern, "\n") is not None
    return True  # anything else: assume it may


def _class_part(part: tuple[Any, Any]) -> str:
    op, av = part
    if op is sre.NEGATE:
        return "^"
    if op is sre.LITERAL:
        return re.escape(chr(av))
    if op is sre.RANGE:
        return re.escape(chr(av[0])) + "-" + re.escape(chr(av[1]))
    names = {sre.CATEGORY_WORD: r"\w", sre.CATEGORY_NOT_WORD: r"\W", sre.CATEGORY_DIGIT: r"\d",
             sre.CATEGORY_NOT_DIGIT: r"\D", sre.CATEGORY_SPACE: r"\s", sre.CATEGORY_NOT_SPACE: r"\S"}  # fmt: skip
    return names[av]


def test_patterns_hold_on_joined_lines() -> None:
    """Searching lines joined with "\\n" never misses a match of a lone line: no \\A or \\Z, and no negative
    lookaround that "\\n" could trip."""
    probes = secretfilter.plugin_probes(SECRET_PLUGINS, "x.py")
    assert probes is not None
    for probe in probes:
        tree = sre_parse.parse(probe.rx.pattern, probe.rx.flags).data
        for op, av in _walk(tree):
            assert not (op is sre.AT and av in (sre.AT_BEGINNING_STRING, sre.AT_END_STRING)), probe.rx.pattern
            if op is sre.ASSERT_NOT:
                body = av[1].data if hasattr(av[1], "data") else av[1]
                assert body and not _may_match_newline(body[0]), probe.rx.pattern


# --- the hygiene cache --------------------------------------------------------------------------------------


def test_warm_scan_comes_from_the_cache_and_faults_are_misses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.unit.checker.base.test_cache_faults import FAULTS

    code = tmp_path / "code"
    code.mkdir()
    (code / "a.py").write_text('GH = "ghp_' + "Ab1" * 12 + '"\n', encoding="utf-8")
    (code / "b.py").write_text('x = 1\n', encoding="utf-8")
    cache = tmp_path / "cache"
    paths = sorted(code.iterdir())
    cold = _ours(paths, cache_dir=cache, pack="tree-a")
    assert cold and cold == _ours(paths)
    _ours(paths[1:], cache_dir=cache, pack="tree-b")  # another tree's entry, to plant under tree-a's name

    def boom(*_a: object) -> None:
        raise AssertionError("scanned although cached")

    with monkeypatch.context() as m:
        m.setattr(codescan, "scan_file", boom)
        assert _ours(paths, cache_dir=cache, pack="tree-a") == cold
    entry_a = codescan._pack_entry(cache, "tree-a", SECRET_PLUGINS)[0]
    entry_b = codescan._pack_entry(cache, "tree-b", SECRET_PLUGINS)[0]
    for fault, plant in FAULTS.items():
        plant(entry_a, entry_b)
        assert _ours(paths, cache_dir=cache, pack="tree-a") == cold, fault
    (code / "b.py").write_text('PW = "sk_live_' + "Zx9" * 8 + '"\n', encoding="utf-8")  # new content: new key
    assert _ours(paths, cache_dir=cache, pack="tree-a") == _ours(paths) != cold


def test_changed_since_limits_the_secret_scan_to_changed_files(tmp_path: Path) -> None:
    (tmp_path / "benchmarks").mkdir()
    for name in ("old.py", "new.py"):
        (tmp_path / "benchmarks" / name).write_text('GH = "ghp_' + "Qw7" * 12 + '"\n', encoding="utf-8")
    every = hygiene.scan(tmp_path, "org", secrets_under=("benchmarks",))
    assert sorted(f.path for f in every if f.code == "TREE045") == ["org/benchmarks/new.py", "org/benchmarks/old.py"]
    changed = frozenset({os.path.realpath(tmp_path / "benchmarks" / "new.py")})
    some = hygiene.scan(tmp_path, "org", secrets_under=("benchmarks",), changed=changed)
    assert [f.path for f in some if f.code == "TREE045"] == ["org/benchmarks/new.py"]


def test_summary_is_json(generated: tuple[Path, dict[str, Any]]) -> None:
    _out, summary = generated
    assert json.loads(json.dumps(summary))["files"] > 100


def test_the_progress_bar_counts_the_code_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import contextlib

    seen: list[tuple[int, str]] = []
    done: list[int] = []

    @contextlib.contextmanager
    def recording(total: int, label: str) -> Iterator[Any]:
        seen.append((total, label))
        yield lambda: done.append(1)

    for name in ("a.py", "b.sh", "c.yaml"):
        (tmp_path / name).write_text("x = 1\n", encoding="utf-8")
    _ours(sorted(tmp_path.iterdir()), progress=recording)
    assert seen == [(3, "scanning code for secrets")] and len(done) == 3
