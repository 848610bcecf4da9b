"""Property-based tests for the other untrusted inputs: system descriptions, package configs and archives.

System files: any bytes give findings (catalogued code, the file's path, a line inside it), never an exception.
Package configs: any bytes either load or end with FatalError (exit 2), and a loaded config never names a place
outside `out`. Archives: `mlsubmit verify` of any bytes or any tar exits 0, 1 or 2, never 3, and writes nothing
outside its temporary folder, which is gone afterwards.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from mlsubmit.checker.systems.descriptions import check_system_file
from mlsubmit.checker.systems.jsonfile import parse_json
from mlsubmit.submission.package_config import load_config

from mlsubmit.cli import main
from mlsubmit.core.codes import catalogue
from mlsubmit.core.errors import FatalError

FUZZ = settings(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)


def examples(n: int) -> int:
    """Examples per property; MLSUBMIT_FUZZ_SCALE=10 runs ten times as many."""
    return max(1, int(n * float(os.environ.get("MLSUBMIT_FUZZ_SCALE", "1"))))


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="mlsubmit-fuzz-") as tmp:
        yield Path(tmp)


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


# --- system descriptions -----------------------------------------------------------------------------------------

SYSTEM: dict[str, Any] = {
    "submitter": "Graphcore", "division": "closed", "status": "onprem", "system_name": "IPU-POD16",
    "number_of_nodes": "1", "host_processors_per_node": "2", "host_processor_model_name": "AMD EPYC 7742",
    "host_processor_core_count": "64", "host_memory_capacity": "512 GB", "host_storage_type": "NVMe",
    "host_storage_capacity": "4 TB", "host_networking": "100 GbE", "accelerators_per_node": "16",
    "accelerator_model_name": "Graphcore IPU GC200", "accelerator_host_interconnect": "RoCE",
    "accelerator_frequency": "1.33 GHz", "accelerator_on-chip_memories": "900 MB",
    "accelerator_memory_configuration": "DDR4", "accelerator_memory_capacity": "32 GB",
    "accelerator_interconnect": "IPU-Link", "framework": "PopART", "operating_system": "Ubuntu 18.04",
}  # fmt: skip
ODD_VALUES: tuple[Any, ...] = (
    "", "TODO", "N/A", "-", " ", 0, -1, 16, 2**70, 10**400, 1.5, float("nan"), float("inf"), None, True, [], {},
    ["16"], {"a": {"b": [1]}}, "IPU-POD64", "IPU-POD16", "banana", "close", "AMD EPYC 7742", "\x00", "\ud800", "é",
    "0x10", "1e3", "16 ", "+16",
)
DEEP_JSON = b"[" * 10_000 + b"]" * 10_000


@st.composite
def system_documents(draw: st.DrawFn) -> bytes:
    doc: dict[str, Any] = dict(SYSTEM)
    for _ in range(draw(st.integers(0, 6))):
        key = draw(st.sampled_from([*SYSTEM, "hw_notes", "extra", "", "accelerators_per_node "]))
        op = draw(st.sampled_from(["set", "drop"]))
        if op == "drop":
            doc.pop(key, None)
        else:
            doc[key] = draw(st.sampled_from(ODD_VALUES) | st.text(max_size=12) | st.integers())
    text = json.dumps(doc, indent=draw(st.sampled_from([None, 2])), ensure_ascii=draw(st.booleans()))
    raw = text.encode("utf-8", "surrogatepass")
    mutation = draw(st.sampled_from(["none", "none", "cut", "dupkey", "bytes", "bom", "nul", "latin1", "deep"]))
    if mutation == "cut":
        raw = raw[: draw(st.integers(0, len(raw)))]
    elif mutation == "dupkey":
        raw = raw.replace(b'"division"', b'"division": "open", "division"', 1)
    elif mutation == "bytes":
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at] + draw(st.binary(min_size=1, max_size=8)) + raw[at:]
    elif mutation == "bom":
        raw = b"\xef\xbb\xbf" + raw
    elif mutation == "nul":
        raw = raw.replace(b",", b",\x00", 1)
    elif mutation == "latin1":
        raw = raw.replace(b"Graphcore", "Graphcöre".encode("latin-1"), 1)
    elif mutation == "deep":
        raw = raw[:-1] + b', "hw_notes": ' + DEEP_JSON + b"}"
    return raw


@settings(FUZZ, max_examples=examples(400))
@given(raw=st.binary(max_size=300) | system_documents(), ruleset=st.sampled_from(["1.0.0", "1.1.0", "2.1.0", "4.1.0"]))
def test_system_validator_never_raises(scratch: Path, raw: bytes, ruleset: str) -> None:
    path = scratch / "ipu-pod16-POPART-closed.json"
    path.write_bytes(raw)
    doc, findings = check_system_file(path, "systems/x.json", ruleset)
    event("decoded" if doc.decoded else "not decoded")
    lines = raw.count(b"\n") + 1
    codes = catalogue()
    for f in findings:
        assert f.code in codes, f
        assert f.path == "systems/x.json", f
        if f.line is not None:
            assert 1 <= f.line <= lines, (f, lines)
        if f.pointer is not None:
            assert f.pointer == "" or f.pointer.startswith("/"), f


@settings(FUZZ, max_examples=examples(150))
@given(raw=st.binary(max_size=200) | system_documents())
def test_check_of_a_system_file_exits_0_or_1(scratch: Path, raw: bytes) -> None:
    path = scratch / "systems" / "ipu-pod16-POPART-closed.json"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(raw)
    code, out, err = _run(["check", "--ruleset", "1.0.0", "--format", "json", str(path)])
    assert code in (0, 1), err
    assert "internal error" not in err
    json.loads(out)


@pytest.mark.parametrize("magic", [b"\xfd7zXZ\x00", b"PK\x03\x04", b"\x1f\x8b\x08\x00"])
def test_a_system_file_that_starts_like_an_archive_is_a_finding_not_a_usage_error(tmp_path: Path,
                                                                                  magic: bytes) -> None:
    # found by the property test above: a .json given on its own is a system description whatever its bytes
    path = tmp_path / "systems" / "ipu-pod16-POPART-closed.json"
    path.parent.mkdir()
    path.write_bytes(magic + b"{}")
    code, out, err = _run(["check", "--ruleset", "1.0.0", "--format", "json", str(path)])
    assert code == 1, err
    assert [f["code"] for f in json.loads(out)["files"][0]["findings"]] in (["SYS002"], ["SYS003"])


def test_a_system_file_nested_10000_deep_is_a_finding() -> None:
    doc = parse_json(b'{"hw_notes": ' + DEEP_JSON + b"}", "x.json")
    assert [f.code for f in doc.findings] == ["SYS003"]


# --- package configs ---------------------------------------------------------------------------------------------

VALID_NAMES = ("Graphcore", "ipu-pod16", "bert", "popart", "ok-1.0", "a+b", "x" * 128)
NAMES = (*VALID_NAMES, *VALID_NAMES, "..", "../x", "/abs", "a/b", ".hidden", "", "x" * 200, "C:\\x", "a\x00b", "é",
         "~", "a..b", "-rf")


def _toml_string(s: str) -> str:
    return json.dumps(s)  # a JSON string is a valid TOML basic string for the characters we draw


HOSTILE_PATHS = ("..", "../x", "/abs", "a/../../b", "", "/", "systems", "a\x00b", "C:\\x")


@st.composite
def package_configs(draw: st.DrawFn) -> bytes:
    """A config valid in every field but (usually) one, so both the refusals and the loaded configs get exercised."""
    hostile = draw(st.sampled_from(["none", "none", "any", "org", "ruleset", "out", "systems", "system", "benchmark",
                                    "logs", "select", "path", "name", "cut"]))

    def pick(field: str, good: st.SearchStrategy[str], bad: st.SearchStrategy[str]) -> str:
        chosen = bad if hostile in (field, "any") else good
        return _toml_string(draw(chosen))

    names_bad = st.sampled_from(NAMES) | st.text(max_size=10)
    lines = [f"org = {pick('org', st.sampled_from(VALID_NAMES), names_bad)}"]
    rulesets_bad = st.sampled_from(["9.9.9", "", "1.1", "-1"])
    lines.append(f"ruleset = {pick('ruleset', st.sampled_from(['1.0.0', '1.1.0']), rulesets_bad)}")
    lines.append(f"out = {pick('out', st.sampled_from(['build/out', 'out', 'a/b/c']), st.sampled_from(HOSTILE_PATHS))}")
    if draw(st.booleans()) or hostile == "systems":
        lines.append(f"systems = {pick('systems', st.just('systems'), st.sampled_from(HOSTILE_PATHS))}")
    for _ in range(draw(st.integers(1, 3))):
        lines.append("[[results]]")
        lines.append(f"system = {pick('system', st.sampled_from(VALID_NAMES), names_bad)}")
        lines.append(f"benchmark = {pick('benchmark', st.sampled_from(['bert', 'resnet']), names_bad)}")
        logs = draw(st.lists(st.sampled_from(["runs/*", "runs/a.out", "../../*", "/etc/passwd", "**/*"]), min_size=1,
                             max_size=3))
        if hostile in ("logs", "any"):
            logs = draw(st.sampled_from([[], [""], ["a\x00b"], logs]))
        lines.append(f"logs = [{', '.join(_toml_string(x) for x in logs)}]")
        if draw(st.booleans()) or hostile == "select":
            lines.append(f"select = {pick('select', st.sampled_from(['all', 'median-window']), st.just('best'))}")
        if draw(st.booleans()) or hostile in ("path", "name"):
            # "." is the documented default (the repository's top), accepted: see the test after this strategy
            path = pick("path", st.sampled_from([".", "bert", "bert/popart", "a b"]), st.sampled_from(HOSTILE_PATHS))
            lines.append(f"implementation = {{ repo = {_toml_string('repo')}, rev = {_toml_string('v1')}, "
                         f"path = {path}, name = {pick('name', st.sampled_from(VALID_NAMES), names_bad)} }}")
    raw = ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
    if hostile == "cut":
        raw = raw[: draw(st.integers(0, len(raw)))]
    return raw


def test_an_implementation_path_of_dot_is_accepted(tmp_path: Path) -> None:
    config = tmp_path / "package.toml"
    config.write_text('org = "Graphcore"\nruleset = "1.1.0"\nout = "build/out"\n\n[[results]]\nsystem = "s"\n'
                      'benchmark = "bert"\nlogs = ["runs/*"]\n'
                      'implementation = { repo = "repo", rev = "v1", path = ".", name = "popart" }\n')
    cfg = load_config(config)
    assert cfg.results[0].implementation is not None
    assert cfg.results[0].implementation.path == "."


def _inside(child: Path, parent: Path) -> bool:
    return os.path.normpath(child).startswith(os.path.normpath(parent) + os.sep)


@settings(FUZZ, max_examples=examples(400))
@given(raw=st.binary(max_size=200) | package_configs())
def test_package_config_loader_raises_only_fatal_errors(scratch: Path, raw: bytes) -> None:
    path = scratch / "cfg" / "package.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(raw)
    try:
        cfg = load_config(path)
    except FatalError as exc:
        assert str(exc)
        event("refused with FatalError (exit 2)")
        return
    event("loaded")
    # Loaded: every name the build joins below `out` stays below it.
    for entry in cfg.results:
        for dest in (cfg.out / cfg.org / "results" / entry.system / entry.benchmark,
                     cfg.out / cfg.org / "systems" / f"{entry.system}.json"):
            assert _inside(dest, cfg.out), dest
        if entry.implementation is not None:
            impl = cfg.out / cfg.org / "benchmarks" / entry.benchmark / "implementations" / entry.implementation.name
            assert _inside(impl, cfg.out), impl
            assert not Path(entry.implementation.path).is_absolute()
            assert ".." not in Path(entry.implementation.path).parts


# --- archives for verify -----------------------------------------------------------------------------------------

MEMBER_NAMES = (
    "Graphcore/results/s/bert/result_0.txt", "Graphcore/systems/s.json", "manifest.json", "../x", "/abs",
    "Graphcore/../../x", "Graphcore", "./Graphcore/a", "Graphcore//b", "a\\..\\b", "é/ü", "Graphcore/" + "d" * 200,
)
TYPES = (tarfile.REGTYPE, tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.CHRTYPE,
         tarfile.FIFOTYPE)
MANIFESTS = (b"{}", b"not json", b'{"ruleset": "1.0.0", "files": {}}', b'{"ruleset": 1, "files": [1]}',
             b'{"format": 1, "ruleset": "1.0.0", "files": [{"path": "../x", "sha256": "0", "size": -1}]}')


@st.composite
def archives(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["tar", "tar", "tar", "bytes", "gzip-bytes", "salted"]))
    if kind == "bytes":
        return draw(st.binary(max_size=200))
    if kind == "gzip-bytes":
        import gzip

        return gzip.compress(draw(st.binary(max_size=200)), mtime=0)[: draw(st.sampled_from([4, 10, 1000]))]
    if kind == "salted":
        return b"Salted__" + draw(st.binary(max_size=64))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for _ in range(draw(st.integers(0, 5))):
            name = draw(st.sampled_from(MEMBER_NAMES))
            info = tarfile.TarInfo(name)
            info.type = draw(st.sampled_from(TYPES))
            info.mode = draw(st.sampled_from([0o644, 0o777, 0o4755, 0o000]))
            data = b""
            if info.type == tarfile.REGTYPE:
                data = draw(st.sampled_from(MANIFESTS)) if name == "manifest.json" else draw(st.binary(max_size=64))
            info.size = len(data)
            if info.type in (tarfile.SYMTYPE, tarfile.LNKTYPE):
                info.linkname = draw(st.sampled_from(["/etc/passwd", "../../x", "Graphcore", "manifest.json"]))
            tar.addfile(info, io.BytesIO(data) if data else None)
    raw = buf.getvalue()
    if draw(st.integers(0, 4)) == 0:
        cut = draw(st.integers(0, len(raw)))
        raw = raw[:cut]  # cut off mid-way
    return raw


@contextlib.contextmanager
def private_tmpdir() -> Iterator[Path]:
    """A fresh temporary folder for verify's unpack: it must be empty again when verify returns."""
    with tempfile.TemporaryDirectory(prefix="mlsubmit-fuzz-tmp-") as tmp:
        old = tempfile.tempdir
        tempfile.tempdir = tmp
        try:
            yield Path(tmp)
        finally:
            tempfile.tempdir = old


@settings(FUZZ, max_examples=examples(300))
@given(raw=archives(), with_sums=st.booleans())
def test_verify_never_crashes_and_leaves_nothing(scratch: Path, raw: bytes, with_sums: bool) -> None:
    box = scratch / "inbox"
    box.mkdir(exist_ok=True)
    for old in box.iterdir():
        old.unlink()
    archive = box / "Graphcore.tar.gz"
    archive.write_bytes(raw)
    if with_sums:
        (box / "Graphcore.tar.gz.sha256").write_text(f"{hashlib.sha256(raw).hexdigest()}  Graphcore.tar.gz\n")
    with private_tmpdir() as verify_tmp:
        code, out, err = _run(["verify", "--ruleset", "1.0.0", "--format", "json", str(archive)])
        leftovers = list(verify_tmp.iterdir())
    assert code in (0, 1, 2), err
    assert "internal error" not in err
    event(f"exit {code}")
    if code in (0, 1):
        json.loads(out)
    assert sorted(p.name for p in box.iterdir()) == sorted(
        ["Graphcore.tar.gz", *(["Graphcore.tar.gz.sha256"] if with_sums else [])]
    )
    assert leftovers == []  # the refusing unpack cleaned up after itself
    assert not Path("/abs").exists()


def test_verify_of_a_gzip_header_cut_after_three_bytes_is_a_finding(tmp_path: Path) -> None:
    archive = tmp_path / "Graphcore.tar.gz"
    archive.write_bytes(b"\x1f\x8b\x08")  # the fuzzing found this one: tarfile raises TypeError on it
    code, out, err = _run(["verify", "--ruleset", "1.0.0", "--format", "json", str(archive)])
    assert code == 1, err
    assert "PKG044" in out


# --- whole organisation trees: hostile system file and hostile logs together ------------------------------------

_LOG_POOL: dict[str, bytes] = {}


def _log_pool() -> dict[str, bytes]:
    """A few run shapes written once with mllog: compliant, not converged, wrong division, other benchmark."""
    if not _LOG_POOL:
        from fixtures.synth import RunSpec, render

        for name, spec in {
            "ok": RunSpec(seed=1), "ok2": RunSpec(seed=2), "slow": RunSpec(seed=3, minutes=90.0),
            "diverged": RunSpec(seed=4, converge=False), "open": RunSpec(seed=5, division="open"),
            "resnet": RunSpec(benchmark="resnet", seed=6), "noseed": RunSpec(seed=None),
            "traversal": RunSpec(seed=7, division="../../../tmp/evil"),
        }.items():
            _LOG_POOL[name] = render(spec).encode()
    return _LOG_POOL


@st.composite
def org_logs(draw: st.DrawFn) -> bytes:
    raw = _log_pool()[draw(st.sampled_from(sorted(_log_pool())))]
    op = draw(st.sampled_from(["none", "none", "cut", "junk", "nan", "dup"]))
    if op == "cut":
        raw = raw[: draw(st.integers(0, len(raw)))]
    elif op == "junk":
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at] + draw(st.binary(max_size=16)) + raw[at:]
    elif op == "nan":
        raw = raw.replace(b'"value": 448', b'"value": NaN').replace(b'"value": 0.724', b'"value": 1e999')
    elif op == "dup":
        raw = raw.replace(b'"key": "seed"', b'"key": "seed", "key": "seed"')
    return raw


@settings(FUZZ, max_examples=examples(120))
@given(system=system_documents(), logs=st.lists(org_logs(), min_size=1, max_size=3),
       bench=st.sampled_from(["bert", "resnet", "dlrm", "nope", "..x"]),
       command=st.sampled_from(["check", "report", "advise"]), ruleset=st.sampled_from(["1.0.0", "1.1.0"]))
def test_whole_trees_with_hostile_files_never_crash(
    scratch: Path, system: bytes, logs: list[bytes], bench: str, command: str, ruleset: str
) -> None:
    import shutil

    org = scratch / "tree" / "Graphcore"
    shutil.rmtree(org.parent, ignore_errors=True)
    (org / "systems").mkdir(parents=True)
    (org / "systems" / "ipu-pod16-POPART-closed.json").write_bytes(system)
    folder = org / "results" / "ipu-pod16-POPART-closed" / bench
    folder.mkdir(parents=True)
    for i, raw in enumerate(logs):
        (folder / f"result_{i}.txt").write_bytes(raw)
    target = str(folder / "result_0.txt") if command == "advise" else str(org)
    code, out, err = _run([command, "--ruleset", ruleset, "--format", "json", target])
    assert code in (0, 1), err
    assert "internal error" not in err
    event(f"{command} exit {code}")
    json.loads(out)


def test_report_of_a_tree_with_a_deeply_nested_system_file_does_not_crash(tmp_path: Path) -> None:
    from fixtures.synth import write_run

    org = tmp_path / "Graphcore"
    (org / "systems").mkdir(parents=True)
    deep = b'{"division": "closed", "hw_notes": ' + DEEP_JSON + b"}"
    (org / "systems" / "ipu-pod16-POPART-closed.json").write_bytes(deep)
    write_run(org / "results" / "ipu-pod16-POPART-closed" / "bert" / "result_0.txt")
    code, _, err = _run(["report", "--ruleset", "1.0.0", "--format", "json", str(org)])
    assert code in (0, 1), err
