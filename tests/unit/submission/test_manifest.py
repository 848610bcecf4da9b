"""manifest.json: schema'd, deterministic, and a faithful list of the tree's bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mlsubmit.submission import manifest as mf

from mlsubmit.core.support.schema_loader import load_schema


def tree(root: Path) -> Path:
    (root / "Org" / "systems").mkdir(parents=True)
    (root / "Org" / "systems" / "s.json").write_bytes(b"{}\n")
    (root / "Org" / "results" / "s" / "bert").mkdir(parents=True)
    (root / "Org" / "results" / "s" / "bert" / "result_0.txt").write_bytes(b":::MLLOG {}\n")
    return root


def test_schemas_are_valid_draft_2020_12() -> None:
    import jsonschema

    for name in ("manifest.schema.json", "package-config.schema.json"):
        jsonschema.Draft202012Validator.check_schema(load_schema(name))


def test_manifest_lists_every_file_sorted_with_hash_and_size(tmp_path: Path) -> None:
    root = tree(tmp_path)
    data = mf.new_manifest("Org", "1.1.0")
    data["files"] = mf.tree_files(root, "Org")
    assert [f["path"] for f in data["files"]] == ["Org/results/s/bert/result_0.txt", "Org/systems/s.json"]
    assert data["files"][1] == {
        "path": "Org/systems/s.json",
        "sha256": "ca3d163bab055381827226140568f3bef7eaac187cebd76878e0b63e9e442356",
        "size": 3,
    }
    path = mf.write(root, data)
    assert mf.load(path, "manifest.json") == (data, [])
    assert path.read_bytes() == mf.dumps(json.loads(path.read_bytes()))  # stable serialisation
    assert b"time" not in path.read_bytes()  # no time stamps: two builds give the same bytes


def test_compare_finds_missing_extra_and_changed_files(tmp_path: Path) -> None:
    root = tree(tmp_path)
    data = mf.new_manifest("Org", "1.1.0")
    data["files"] = mf.tree_files(root, "Org")
    assert mf.compare(root, data, "manifest.json") == []
    (root / "Org" / "systems" / "s.json").write_bytes(b"{ }\n")
    (root / "Org" / "extra.txt").write_bytes(b"x")
    (root / "Org" / "results" / "s" / "bert" / "result_0.txt").unlink()
    got = sorted((f.code, f.path, f.message.split(":")[0]) for f in mf.compare(root, data, "manifest.json"))
    assert got == [
        ("PKG045", "Org/extra.txt", "in the archive but not listed in manifest.json"),
        ("PKG045", "Org/results/s/bert/result_0.txt", "listed in manifest.json but missing from the archive"),
        ("PKG045", "Org/systems/s.json", "differs from manifest.json"),
    ]


@pytest.mark.parametrize(
    "content",
    [b"not json", b"\xff\xfe", b"[]", b'{"format": "mlsubmit-manifest/1"}', b"[" * 100_000],
)
def test_bad_manifests_are_findings(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "manifest.json"
    path.write_bytes(content)
    data, findings = mf.load(path, "a.tar.gz:manifest.json")
    assert data is None and findings and {f.code for f in findings} == {"PKG046"}


def test_manifest_paths_cannot_climb(tmp_path: Path) -> None:
    data = mf.new_manifest("Org", "1.1.0")
    data["files"] = [{"path": "Org/../../etc/passwd", "sha256": "0" * 64, "size": 1}]
    assert mf.validation_errors(data)
    with pytest.raises(ValueError, match="manifest does not match"):
        mf.write(tmp_path, data)


@pytest.mark.parametrize("org", ["../etc", "/etc", "a/b", ".hidden", ""])
def test_manifest_org_is_one_safe_name(org: str) -> None:
    data = mf.new_manifest("Org", "1.1.0")
    data["org"] = org
    assert mf.validation_errors(data)


def test_manifest_writes_minutes_rounded_and_stays_valid() -> None:
    """Issue 27: a float sum such as 29.400000000000002 is written 29.4; integers and the shape are kept."""
    manifest = mf.new_manifest("Graphcore", "1.1.0")
    manifest["results"] = [{"olympic_minutes": 9.8 * 3, "runs": [{"minutes": 1 / 3, "size": 7}]}]
    text = mf.dumps(manifest).decode("utf-8")
    assert "29.400000000000002" not in text and '"olympic_minutes": 29.4' in text
    assert '"minutes": 0.333333' in text and '"size": 7' in text
    assert mf.dumps(json.loads(text)) == text.encode("utf-8")  # stable when written again
