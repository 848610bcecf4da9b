"""Hygiene scan: each planted file gives its code at its path; clean look-alikes give nothing; nothing is written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import tree_digest
from mlsubmit.checker.hygiene.scan import SIZE_LIMIT, scan

AWS_KEY = "AKIA" + "IOSFODNN7REALKEY"  # split so this file does not itself look like a credential
PRIVATE_KEY = "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3x\n-----END RSA PRIVATE KEY-----\n"


def codes(findings: list) -> list[tuple[str, str]]:
    return sorted((f.code, f.path) for f in findings)


def write(path: Path, data: str | bytes = "x\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


def core_dump() -> bytes:
    """An ELF header of type ET_CORE (4), little-endian: what the kernel writes for a crashed process."""
    return b"\x7fELF\x02\x01\x01" + b"\x00" * 9 + (4).to_bytes(2, "little") + b"\x00" * 46


def test_clean_tree_has_no_findings(tmp_path: Path) -> None:
    write(tmp_path / "benchmarks/bert/implementations/ipu/run_and_time.sh", "python train.py --seed $RANDOM\n")
    write(tmp_path / "benchmarks/bert/implementations/ipu/README.md", "# BERT\n")
    write(tmp_path / "benchmarks/bert/implementations/ipu/core/model.py", "import torch\n")  # a folder named core
    write(tmp_path / "benchmarks/bert/implementations/ipu/core.txt", "core notes\n")
    write(tmp_path / "systems/pod16.json", "{}\n")
    os.symlink("README.md", tmp_path / "benchmarks/bert/implementations/ipu/README_link.md")  # inside: fine
    assert scan(tmp_path, "org") == []


@pytest.mark.parametrize(
    "rel",
    [
        "systems/.ipu-pod16-POPART.json.swp",  # Graphcore v1.0's committed vim swap file
        "benchmarks/bert/train.py~",
        "benchmarks/bert/.DS_Store",
        "benchmarks/bert/model.pyc",
        "benchmarks/bert/patch.orig",
        "benchmarks/bert/old.bak",
    ],
)
def test_junk_files(tmp_path: Path, rel: str) -> None:
    write(tmp_path / rel)
    assert codes(scan(tmp_path, "org")) == [("TREE040", f"org/{rel}")]


def test_pycache_folder_is_reported_once_and_not_entered(tmp_path: Path) -> None:
    write(tmp_path / "benchmarks/bert/__pycache__/model.cpython-311.pyc")
    assert codes(scan(tmp_path, "org")) == [("TREE040", "org/benchmarks/bert/__pycache__")]


def test_core_dump_is_junk_but_a_text_file_named_core_is_not(tmp_path: Path) -> None:
    write(tmp_path / "benchmarks/bert/core.12345", core_dump())
    write(tmp_path / "benchmarks/ssd/core", "not a dump\n")
    assert codes(scan(tmp_path, "org")) == [("TREE040", "org/benchmarks/bert/core.12345")]


@pytest.mark.parametrize("rel", ["benchmarks/bert/run and time.sh", "benchmarks/.hidden_dir/x.py", "results/.notes"])
def test_git_unfriendly_names(tmp_path: Path, rel: str) -> None:
    write(tmp_path / rel)
    found = codes(scan(tmp_path, "org"))
    flagged = rel if " " in rel.split("/")[-1] or rel.split("/")[-1].startswith(".") else "/".join(rel.split("/")[:-1])
    assert found == [("TREE041", f"org/{flagged}")]


def test_file_over_50_mb(tmp_path: Path) -> None:
    big = tmp_path / "results/sys/bert/huge.bin"
    big.parent.mkdir(parents=True)
    with open(big, "wb") as fh:  # sparse: costs no disk space
        fh.truncate(SIZE_LIMIT + 1)
    with open(tmp_path / "results/sys/bert/edge.bin", "wb") as fh:
        fh.truncate(SIZE_LIMIT)  # exactly 50 MB is allowed, as the reference counts
    assert codes(scan(tmp_path, "org")) == [("TREE042", "org/results/sys/bert/huge.bin")]


def sparse(path: Path, size: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:  # sparse: costs no disk space, made at once
        fh.truncate(size)
    return path


MIB = 1024 * 1024


@pytest.mark.parametrize(("ruleset", "size", "want"), [
    ("6.1.0", 70 * MIB, [("TREE061", "warning")]),  # TR6.1 "Result files": allowed; the repo checker still says 50
    ("6.1.0", 100 * MIB, [("TREE061", "warning")]),  # exactly 100 MiB is allowed
    ("6.1.0", 100 * MIB + 1, [("TREE042", "error")]),
    ("6.1.0", 50 * MIB, []),
    ("6.0.0", 70 * MIB, [("TREE042", "error")]),  # before 6.1: the 50 MiB of every file
    ("1.1.0", 50 * MIB + 1, [("TREE042", "error")]),
])  # fmt: skip
def test_a_result_files_size_limit_is_the_rounds(tmp_path: Path, ruleset: str, size: int,
                                                 want: list[tuple[str, str]]) -> None:  # fmt: skip
    sparse(tmp_path / "results/sys/llama2_70b_lora/result_0.txt", size)
    found = scan(tmp_path, "org", ruleset=ruleset)
    assert [(f.code, f.severity.value) for f in found] == want
    for f in found:
        assert f"round {ruleset[:3]}" in f.message
        assert ("100 MiB" in f.message) is (ruleset == "6.1.0")


def test_only_result_files_get_the_61_limit(tmp_path: Path) -> None:
    sparse(tmp_path / "results/sys/llama2_70b_lora/notes.txt", 70 * MIB)
    sparse(tmp_path / "benchmarks/llama2_70b_lora/implementations/x/weights.bin", 70 * MIB)
    found = scan(tmp_path, "org", ruleset="6.1.0")
    assert sorted((f.code, f.path) for f in found) == [
        ("TREE042", "org/benchmarks/llama2_70b_lora/implementations/x/weights.bin"),
        ("TREE042", "org/results/sys/llama2_70b_lora/notes.txt")]


def test_broken_symlink_and_link_leaving_the_tree(tmp_path: Path) -> None:
    tree = tmp_path / "org"
    write(tree / "benchmarks/bert/README.md")
    write(tmp_path / "outside.txt")
    os.symlink("missing.sh", tree / "benchmarks/bert/run_and_time.sh")
    os.symlink("../../../outside.txt", tree / "benchmarks/bert/data.txt")
    os.symlink("/etc/hostname", tree / "benchmarks/bert/host")
    assert codes(scan(tree, "org")) == [
        ("TREE043", "org/benchmarks/bert/run_and_time.sh"),
        ("TREE044", "org/benchmarks/bert/data.txt"),
        ("TREE044", "org/benchmarks/bert/host"),
    ]


def test_secrets_in_code_with_lines(tmp_path: Path) -> None:
    write(tmp_path / "benchmarks/bert/run_and_time.sh", f"#!/bin/bash\nexport AWS_ACCESS_KEY_ID={AWS_KEY}\n")
    write(tmp_path / "benchmarks/bert/deploy_key", PRIVATE_KEY)
    write(tmp_path / "benchmarks/bert/config.py", 'db_password = "s3cr3t-Passw0rd"\n')
    found = sorted((f.code, f.path, f.line) for f in scan(tmp_path, "org"))
    assert found == [
        ("TREE045", "org/benchmarks/bert/config.py", 1),
        ("TREE045", "org/benchmarks/bert/deploy_key", 1),
        ("TREE045", "org/benchmarks/bert/run_and_time.sh", 2),
    ]
    messages = " ".join(f.message for f in scan(tmp_path, "org"))
    assert AWS_KEY not in messages and "s3cr3t" not in messages  # a finding never repeats the secret


def test_secret_scan_can_be_limited_to_code_folders(tmp_path: Path) -> None:
    write(tmp_path / "results/sys/bert/notes.sh", f"export AWS_ACCESS_KEY_ID={AWS_KEY}\n")
    assert scan(tmp_path, "org", secrets_under=("benchmarks",)) == []
    assert [f.code for f in scan(tmp_path, "org")] == ["TREE045"]


def test_binary_files_are_not_scanned_for_secrets(tmp_path: Path) -> None:
    write(tmp_path / "benchmarks/bert/weights.bin", b"\x00\x01" + PRIVATE_KEY.encode())
    assert scan(tmp_path, "org") == []


def test_scan_is_read_only(tmp_path: Path) -> None:
    write(tmp_path / "systems/.pod.json.swp")
    write(tmp_path / "benchmarks/bert/run.sh", f"K={AWS_KEY}\n")
    os.symlink("nowhere", tmp_path / "benchmarks/bert/link")
    before = tree_digest(tmp_path)
    assert scan(tmp_path, "org")
    assert tree_digest(tmp_path) == before


def test_missing_root_gives_nothing(tmp_path: Path) -> None:
    assert scan(tmp_path / "absent", "absent") == []


def test_special_files_are_reported_and_never_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "benchmarks/bert/core"  # named like a core dump, and a FIFO: opening it would block
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    os.mkfifo(tmp_path / "benchmarks/bert/run.sh")
    assert codes(scan(tmp_path, "org")) == [
        ("TREE040", "org/benchmarks/bert/core"),
        ("TREE040", "org/benchmarks/bert/run.sh"),
    ]


def test_secrets_in_files_that_are_not_utf8(tmp_path: Path) -> None:
    """detect-secrets skips such files; the built-in patterns still catch the usual shapes."""
    write(tmp_path / "benchmarks/bert/run.sh", b'export KEY=' + AWS_KEY.encode() + b"\n\xff\xfe latin-1 junk\n")
    assert [(f.code, f.line) for f in scan(tmp_path, "org")] == [("TREE045", 1)]


def test_the_round_file_at_the_root_is_mlsubmits_own_but_elsewhere_a_hidden_name(tmp_path: Path) -> None:
    write(tmp_path / ".mlsubmit-round", "6.0\n")
    assert codes(scan(tmp_path, "org")) == []
    write(tmp_path / "results/.mlsubmit-round", "6.0\n")
    assert codes(scan(tmp_path, "org")) == [("TREE041", "org/results/.mlsubmit-round")]
