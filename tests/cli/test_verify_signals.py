"""`verify` sent SIGTERM twice, or SIGINT twice, leaves nothing in $TMPDIR (issue 49: the second SIGTERM interrupted
the removal and left 66,000 decrypted files): the first signal comes once the archive is unpacked, the second while
the scratch folder is being removed."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TWICE = """
import os, shutil, signal, sys
from mlsubmit.submission import archive
first = getattr(signal, sys.argv.pop(1))
real_unpack, real_rmtree = archive.unpack, shutil.rmtree
def unpacked(tarball, dest, display):
    done = real_unpack(tarball, dest, display)
    os.kill(os.getpid(), first)
    return done
def removing(path, *args, **kwargs):
    os.kill(os.getpid(), first)  # the second signal, as the removal starts
    return real_rmtree(path, *args, **kwargs)
archive.unpack, shutil.rmtree = unpacked, removing
from mlsubmit.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize(("name", "code"), [("SIGTERM", 128 + signal.SIGTERM), ("SIGINT", 130)])
def test_a_second_signal_leaves_no_unpacked_file(tmp_path: Path, name: str, code: int) -> None:
    archive = tmp_path / "mlperf_submission_Org.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for i in range(300):
            info = tarfile.TarInfo(f"Org/results/x/bert/note_{i}.txt")
            info.size = 6
            tar.addfile(info, io.BytesIO(b"secret"))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(scratch)}
    done = subprocess.run([sys.executable, "-c", TWICE, name, "verify", "--ruleset", "1.0.0", str(archive)], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == code, done.stderr
    assert list(scratch.iterdir()) == []
