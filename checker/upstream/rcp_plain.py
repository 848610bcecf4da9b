"""mlperf-logging's RCP module as it is: its own numpy and scipy, reading files itself.

Used instead of the adapted copy (rcp.py) when the installed module does not fit the adapter (rcp_fit.py) or an
adapted run fails where this one does not. It is shown the same logs, the lines kept while they were read, written
as files into a temporary folder for each call; with `set_scaling` on, its one write (scaling.json) goes to that
folder too, never into the tree under check (with it off, the module deletes `/scaling.json` instead). Its log
messages are held back while it runs: the verdict is reported as a finding.
"""

from __future__ import annotations

import importlib.util
import logging
import posixpath
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from mlsubmit.checker.upstream import installed


def real_module() -> ModuleType:
    """A fresh copy of the module, loaded from its file unchanged: what other code in this process does to the
    imported module (a test adding a run count, say) does not reach it, as it does not reach the adapted copy."""
    origin = installed.rcp_module_file()
    private = importlib.util.spec_from_file_location("mlsubmit.checker.upstream._rcp_as_is", origin)
    assert private is not None and private.loader is not None
    module = importlib.util.module_from_spec(private)
    private.loader.exec_module(module)
    return module


@contextmanager
def _quiet() -> Iterator[None]:
    before = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(before)


@contextmanager
def _on_disk(files: Mapping[str, str], wanted: str) -> Iterator[str]:
    """`wanted` (a served file or folder) as a real path: the served files at or under it, in a fresh folder."""
    with tempfile.TemporaryDirectory(prefix="mlsubmit-rcp-") as tmp:
        root = Path(tmp)
        for name, text in files.items():
            if name == wanted or name.startswith(wanted.rstrip("/") + "/"):
                dest = root / name.lstrip("/")
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_text(text, encoding="latin-1", newline="")
        yield str(root / wanted.lstrip("/"))


class Plain:
    """The functions of the reference's module the RCP check calls, run by the module itself on `files()`."""

    def __init__(self, module: ModuleType, files: Any) -> None:
        self.module = module
        self.files = files  # () -> the served files (path -> text), as rcp_adapted.as_logs_on_disk holds them
        self.submission_runs = module.submission_runs
        self.TOKEN = module.TOKEN

    def read_submission_file(self, result_file: str, ruleset: str, use_train_samples: bool) -> Any:
        with _on_disk(self.files(), result_file) as path, _quiet():
            return self.module.read_submission_file(path, ruleset, use_train_samples)

    def check_directory(self, folder: str, usage: str, ruleset: str, verbose: bool, train_samples: bool,
                        **options: Any) -> Any:  # fmt: skip
        options["set_scaling"] = True  # its scaling.json goes to the temporary folder
        with _on_disk(self.files(), posixpath.normpath(folder)) as path, _quiet():
            Path(path).mkdir(parents=True, exist_ok=True)  # a folder with no run is the module's to judge
            return self.module.check_directory(path, usage, ruleset, verbose, train_samples, **options)
