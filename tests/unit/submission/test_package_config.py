"""The package config: schema validation, paths relative to the config file, names that cannot escape `out`."""

from __future__ import annotations

from pathlib import Path

import pytest
from mlsubmit.submission.package_config import load_config

from mlsubmit.core.errors import FatalError

GOOD = """
org = "Graphcore"
ruleset = "1.1.0"
out = "build/submission"

[[results]]
system = "ipu-pod16-POPART-closed"
benchmark = "bert"
logs = ["runs/*"]
implementation = { repo = "../code", rev = "v2.1", path = "bert/popart", name = "popart" }
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cfg" / "package.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_paths_are_relative_to_the_config_file(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, GOOD))
    base = tmp_path / "cfg"
    assert cfg.out == base / "build/submission"
    assert cfg.systems == base / "systems"  # the default
    impl = cfg.results[0].implementation
    assert impl is not None and impl.repo == base / "../code" and impl.repo_text == "../code"
    assert cfg.results[0].select == "all"


@pytest.mark.parametrize(
    ("change", "pointer"),
    [
        (('org = "Graphcore"', 'org = "../Graphcore"'), "/org"),
        (('org = "Graphcore"', 'org = "/etc"'), "/org"),
        (('org = "Graphcore"', 'org = ".hidden"'), "/org"),
        (('system = "ipu-pod16-POPART-closed"', 'system = "a/b"'), "/results/0/system"),
        (('benchmark = "bert"', 'benchmark = ".."'), "/results/0/benchmark"),
        (('name = "popart"', 'name = "x/../../y"'), "/results/0/implementation/name"),
        (('path = "bert/popart"', 'path = "../outside"'), "/results/0/implementation/path"),
        (('path = "bert/popart"', 'path = "/abs"'), "/results/0/implementation/path"),
        (('rev = "v2.1"', 'rev = "--upload-pack=x"'), "/results/0/implementation/rev"),
        (('ruleset = "1.1.0"', 'ruleset = "1.1"'), "/ruleset"),
        (('logs = ["runs/*"]', "logs = []"), "/results/0/logs"),
        (('out = "build/submission"', 'out = "x"\nextra = 1'), "/"),
        (('out = "build/submission"', 'out = "bu\\u0000ild"'), "/out"),
        (('logs = ["runs/*"]', 'logs = ["runs/\\n*"]'), "/results/0/logs/0"),
        (('repo = "../code"', 'repo = "../co\\u0000de"'), "/results/0/implementation/repo"),
        (('rev = "v2.1"', 'rev = "v2 --exec=x"'), "/results/0/implementation/rev"),
    ],
)
def test_schema_rejects_names_that_could_escape(tmp_path: Path, change: tuple[str, str], pointer: str) -> None:
    with pytest.raises(FatalError) as err:
        load_config(write(tmp_path, GOOD.replace(*change)))
    assert "package-config schema" in str(err.value)
    assert f"\n  {pointer}: " in str(err.value)


def test_bad_toml_and_missing_file_are_fatal(tmp_path: Path) -> None:
    with pytest.raises(FatalError, match="not valid TOML"):
        load_config(write(tmp_path, "org = "))
    with pytest.raises(FatalError, match="cannot read the config"):
        load_config(tmp_path / "absent.toml")
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b'org = "Gr\xe4phcore"\n')
    with pytest.raises(FatalError, match="not UTF-8"):
        load_config(bad)


def test_one_entry_per_system_and_benchmark(tmp_path: Path) -> None:
    twice = GOOD + GOOD[GOOD.index("[[results]]") :]
    with pytest.raises(FatalError, match="already packaged by /results/0"):
        load_config(write(tmp_path, twice))


def test_one_implementation_name_cannot_have_two_sources(tmp_path: Path) -> None:
    second = GOOD[GOOD.index("[[results]]") :].replace("pod16", "pod64").replace('rev = "v2.1"', 'rev = "v2.2"')
    with pytest.raises(FatalError, match="exported twice from different sources"):
        load_config(write(tmp_path, GOOD + second))
    same = GOOD[GOOD.index("[[results]]") :].replace("pod16", "pod64")
    assert len(load_config(write(tmp_path, GOOD + same)).results) == 2


@pytest.mark.parametrize("out", [".", "..", "../code/.."])
def test_out_must_not_contain_the_config_or_an_input(tmp_path: Path, out: str) -> None:
    with pytest.raises(FatalError, match="which the build would replace"):
        load_config(write(tmp_path, GOOD.replace('out = "build/submission"', f'out = "{out}"')))


def test_the_whole_repository_is_written_as_a_dot(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, GOOD.replace('path = "bert/popart"', 'path = "."')))
    impl = cfg.results[0].implementation
    assert impl is not None and impl.path == "."


@pytest.mark.parametrize("depth", [40, 5000])
def test_deeply_nested_toml_is_fatal_not_a_crash(tmp_path: Path, depth: int) -> None:
    cfg = tmp_path / "package.toml"
    cfg.write_text("a = " + "[" * depth + "]" * depth + "\n", encoding="utf-8")
    with pytest.raises(FatalError, match="nested too deeply"):
        load_config(cfg)


def test_checker_params_are_read_from_2_0_on(tmp_path: Path) -> None:
    flags = 'checker_params = ["rcp-bypass", "seed-checker-bypass"]'
    text = GOOD.replace('ruleset = "1.1.0"', f'ruleset = "2.0.0"\n{flags}')
    assert load_config(write(tmp_path, text)).checker_params == ("rcp-bypass", "seed-checker-bypass")
    assert load_config(write(tmp_path, GOOD)).checker_params == ()


def test_checker_params_before_2_0_are_refused(tmp_path: Path) -> None:
    with pytest.raises(FatalError, match=r"/checker_params: no verify script of ruleset 1\.1\.0 reads"):
        load_config(write(tmp_path, GOOD.replace('out = "', 'checker_params = ["rcp-bypass"]\nout = "')))


@pytest.mark.parametrize("flags", ['["rcp_bypass"]', '["rcp-bypass", "rcp-bypass"]', '"rcp-bypass"'])
def test_checker_params_schema(tmp_path: Path, flags: str) -> None:
    text = GOOD.replace('ruleset = "1.1.0"', f'ruleset = "6.1.0"\nchecker_params = {flags}')
    with pytest.raises(FatalError, match="\n  /checker_params"):
        load_config(write(tmp_path, text))


def test_counts_written_as_integral_floats_are_read_as_counts(tmp_path: Path) -> None:
    """Issue 49: `uploads = 2.0` passed the schema (JSON Schema's integers include 2.0), then range() raised."""
    text = GOOD.replace('org = "Graphcore"', 'org = "Graphcore"\nuploads = 2.0').replace(
        'benchmark = "bert"', 'benchmark = "bert"\nupload = 1.0')
    second = text[text.index("[[results]]"):].replace('"bert"', '"resnet"').replace("upload = 1.0", "upload = 2.0")
    cfg = load_config(write(tmp_path, text + second))
    assert cfg.uploads == 2 and type(cfg.uploads) is int
    assert [(e.upload, type(e.upload)) for e in cfg.results] == [(1, int), (2, int)]
