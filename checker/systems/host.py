"""A capture of the host this runs on, made by mlperf-sysinfo (the optional extra `mlsubmit[capture]`).

mlperf-sysinfo reads the team's config (its `training` profile: submitter, availability, cooling, framework ...),
probes the machine through the mlc-scripts automation and writes its capture. Here it writes into a temporary folder;
only the bytes of that file come back, to be read like any capture given with --from (capture.py). mlperf-sysinfo's
own pre-flight check runs first and is not skipped; its refusals are exit 2 with its message.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from mlsubmit.checker.systems.jsonfile import MAX_BYTES

from mlsubmit.core.errors import FatalError
from mlsubmit.core.support.safe_io import read_bounded

# mlsubmit is not on the package index: the extra is installed from a clone (or a built wheel), or its one package
# beside mlsubmit (pyproject.toml's `capture` extra)
INSTALL = "pip install '/path/to/mlsubmit-clone[capture]', or pip install 'mlperf-sysinfo>=1.0.0a12,<1.1'"


def _sysinfo() -> Any:
    try:
        import mlperf_sysinfo  # the optional extra; absent from a plain install
    except ImportError as exc:
        raise FatalError(f"capturing this host needs mlperf-sysinfo ({INSTALL}), or give a capture made "
                         f"elsewhere with --from FILE ({exc})") from None  # fmt: skip
    return mlperf_sysinfo


def capture_here(config_path: Path, allow_partial: bool = False) -> tuple[bytes, str]:
    """Run mlperf-sysinfo's capture with the config at `config_path`; the file's bytes and mlperf-sysinfo's
    version. Its errors (config, pre-flight, collection) are FatalError (exit 2)."""
    sysinfo = _sysinfo()
    try:
        config = sysinfo.load_config(config_path)
    except sysinfo.SysinfoError as exc:
        raise FatalError(f"--sysinfo-config {config_path}: {exc}") from None
    if config.profile != "training":
        raise FatalError(f"--sysinfo-config {config_path}: profile is {config.profile!r}; a training system "
                         "description needs `profile: training`")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="mlsubmit-capture-") as tmp:
        output = config.output.model_copy(update={"dir": Path(tmp), "file": "capture.json"})
        config = config.model_copy(update={"output": output})
        try:
            result = sysinfo.capture(config, allow_partial=allow_partial)
        except sysinfo.SysinfoError as exc:
            raise FatalError(f"mlperf-sysinfo capture refused: {exc} (`mlperf-sysinfo check -c {config_path}` "
                             "lists what it needs)") from None  # fmt: skip
        try:
            raw = read_bounded(Path(result.output_path), MAX_BYTES + 1)
        except OSError as exc:
            raise FatalError(f"cannot read mlperf-sysinfo's capture: {exc.strerror or exc}") from None
    return raw, str(getattr(sysinfo, "__version__", "unknown"))
