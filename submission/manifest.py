"""manifest.json: every file of the tree with its hash and size, and where each result and implementation came from.

The manifest holds no time stamps and no absolute paths, so two builds from the same inputs give the same bytes
and nothing about the builder's machine leaks into a submission.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath
from typing import Any

from mlsubmit import __version__
from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding
from mlsubmit.core.support import jsontext
from mlsubmit.core.support.safe_io import sha256_file
from mlsubmit.core.support.schema_loader import errors as schema_errors
from mlsubmit.core.support.schema_loader import load_schema, pointer

NAME = "manifest.json"
FORMAT = "mlsubmit-manifest/1"
DECIMALS = 6  # minutes to a few microseconds: enough for any score, and no 29.400000000000002 from float sums

def tree_files(root: Path, top: str) -> list[dict[str, Any]]:
    """Path ('/'-separated, starting with `top`), sha256 and size of every regular file under root/top."""
    out: list[dict[str, Any]] = []
    for dirpath, dirnames, filenames in os.walk(root / top):
        dirnames.sort()
        for name in filenames:
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            out.append({"path": rel, "sha256": sha256_file(full), "size": full.stat().st_size})
    return sorted(out, key=lambda f: f["path"])


def new_manifest(org: str, ruleset: str) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "tool": {"name": "mlsubmit", "version": __version__},
        "org": org,
        "ruleset": ruleset,
        "files": [],
        "results": [],
        "selections": [],
        "implementations": [],
    }


def floats_rounded(value: Any) -> Any:
    """`value` with every float rounded to DECIMALS places (integers, strings and the shape kept)."""
    if isinstance(value, float):
        return round(value, DECIMALS)
    if isinstance(value, dict):
        return {key: floats_rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [floats_rounded(item) for item in value]
    return value


def dumps(manifest: dict[str, Any]) -> bytes:
    text = json.dumps(floats_rounded(manifest), indent=2, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")


def validation_errors(data: Any) -> list[str]:
    return [f"{pointer(e) or '/'}: {e.message}" for e in schema_errors(data, load_schema("manifest.schema.json"))]


def write(root: Path, manifest: dict[str, Any]) -> Path:
    problems = validation_errors(manifest)
    if problems:  # the builder made it: a mismatch is a bug in mlsubmit, not in the user's input
        raise ValueError("manifest does not match manifest.schema.json: " + "; ".join(problems[:5]))
    path = root / NAME
    path.write_bytes(dumps(manifest))
    return path


def load(path: Path, display: str) -> tuple[dict[str, Any] | None, list[Finding]]:
    """Read a manifest from an unpacked archive; problems are findings (an archive is untrusted input)."""
    try:
        data = jsontext.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError) as exc:
        return None, [finding("PKG046", display, f"manifest cannot be read: {exc}")]
    problems = validation_errors(data)
    if problems:
        return None, [finding("PKG046", display, f"manifest does not match its schema: {p}") for p in problems[:10]]
    return data, []


def compare(root: Path, manifest: dict[str, Any], display: str) -> list[Finding]:
    """Files missing from the tree, files the manifest does not list, and files whose bytes differ."""
    listed = {f["path"]: f for f in manifest["files"]}
    actual = {f["path"]: f for f in tree_files(root, manifest["org"])} if (root / manifest["org"]).is_dir() else {}
    out: list[Finding] = []
    out.extend(
        finding("PKG045", path, f"listed in {display} but missing from the archive")
        for path in sorted(listed.keys() - actual.keys())
    )
    out.extend(
        finding("PKG045", path, f"in the archive but not listed in {display}")
        for path in sorted(actual.keys() - listed.keys())
    )
    for path in sorted(listed.keys() & actual.keys()):
        want, got = listed[path], actual[path]
        if (want["sha256"], want["size"]) != (got["sha256"], got["size"]):
            out.append(
                finding("PKG045", path, f"differs from {display}: sha256 {got['sha256'][:16]}... size {got['size']}, "
                        f"expected {want['sha256'][:16]}... size {want['size']}")
            )
    return out


def unlisted_entry(out: Path, org: str, listed: set[str]) -> str | None:
    """A link, a FIFO or device, or a folder that holds no file the manifest lists (an empty folder), under the
    previous build's organisation folder: the manifest compares files only, and replacing the build would delete
    these."""
    wanted = {parent.as_posix() for p in listed for parent in PurePosixPath(p).parents}
    if (out / org).is_symlink():
        return org
    for dirpath, dirnames, filenames in os.walk(out / org):
        for name in sorted(dirnames + filenames):
            full = Path(dirpath) / name
            rel = full.relative_to(out).as_posix()
            if (name in dirnames and rel not in wanted) or full.is_symlink() or not (full.is_dir() or full.is_file()):
                return rel  # a FIFO or device too: hashing it would block
    return None
