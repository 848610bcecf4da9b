"""Where the installed mlperf-logging keeps the files we read, and which release it is.

Found with importlib's find_spec, so nothing of mlperf-logging is imported (its package imports numpy, scipy and
pandas) to learn a folder.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RCP_MODULE = "mlperf_logging.rcp_checker.rcp_checker"


@functools.cache
def package_folder() -> Path | None:
    """The mlperf_logging package's folder, or None when it is not installed."""
    spec = importlib.util.find_spec("mlperf_logging")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def rules_folder() -> Path | None:
    """compliance_checker/, which holds one training_X.Y.Z/ folder of rule files per round."""
    package = package_folder()
    return None if package is None else package / "compliance_checker"


def rcp_data_folder(ruleset: str) -> Path | None:
    """rcp_checker/training_<ruleset>/, which holds the rcps_<benchmark>.json files, if the release ships it."""
    package = package_folder()
    if package is None:
        return None
    folder = package / "rcp_checker" / f"training_{ruleset}"
    return folder if folder.is_dir() else None


def rcp_module_file() -> Path:
    """The RCP checker's source file (rcp_checker/rcp_checker.py)."""
    spec = importlib.util.find_spec(RCP_MODULE)
    if spec is None or spec.origin is None:
        raise ImportError("mlperf-logging's rcp_checker is not installed")
    return Path(spec.origin)


@functools.cache
def version() -> str:
    """The installed mlperf-logging's version, from the dist-info folder beside the package (importing
    importlib.metadata costs ~30 ms); "not installed" without the package, "unknown" for a copy without one."""
    package = package_folder()
    if package is None:
        return "not installed"
    prefix, suffix = "mlperf_logging-", ".dist-info"
    found = sorted(p.name for p in package.parent.glob(f"{prefix}*{suffix}"))
    if found:
        return found[0][len(prefix) : -len(suffix)]
    import importlib.metadata

    try:
        return importlib.metadata.version("mlperf-logging")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


@functools.cache
def private_id_words() -> tuple[str, ...]:
    """The 256 words the result summarizer spells a private id with (its `DEFAULT_WORDLIST`, humanhash's), read
    from its source as data: the module itself is never imported (pandas) and nothing of it is run."""
    package = package_folder()
    source = None if package is None else package / "result_summarizer" / "result_summarizer.py"
    if source is None or not source.is_file():
        raise ImportError("mlperf-logging's result_summarizer is not installed")
    tree = ast.parse(source.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "DEFAULT_WORDLIST"
                                                for t in node.targets):  # fmt: skip
            words = ast.literal_eval(node.value)
            if isinstance(words, tuple) and len(words) == 256 and all(isinstance(w, str) for w in words):
                return words
    raise ImportError("the installed result_summarizer has no 256-word DEFAULT_WORDLIST")


@dataclass(frozen=True)
class Meta:
    """benchmark_meta.py's training tables, read as data: the benchmarks of each round ("6.1" -> names) and the
    result files a folder of each benchmark holds."""

    allowed: dict[str, tuple[str, ...]]
    runs: dict[str, int]


@functools.cache
def benchmark_meta() -> Meta:
    """The installed release's `_ALL_ALLOWED_BENCHMARKS` and `_ALL_RESULT_FILE_COUNTS` for training, read from its
    source with ast (literals only: the module is never imported or run); empty when absent or not literal."""
    package = package_folder()
    source = None if package is None else package / "benchmark_meta.py"
    found: dict[str, Any] = {}
    try:
        tree = ast.parse(source.read_text(encoding="utf-8")) if source is not None and source.is_file() else None
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        tree = None
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                found[node.targets[0].id] = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
    return Meta(allowed=_training(found.get("_ALL_ALLOWED_BENCHMARKS"), _names),
                runs=_training(found.get("_ALL_RESULT_FILE_COUNTS"), _count))


def _names(value: Any) -> tuple[str, ...] | None:
    return tuple(dict.fromkeys(value)) if isinstance(value, list) and all(isinstance(v, str) for v in value) else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 10_000 else None


def _training(table: Any, keep: Any) -> dict[str, Any]:
    """The `training` part of one of benchmark_meta's tables, each value kept when `keep` accepts it."""
    part = table.get("training") if isinstance(table, dict) else None
    if not isinstance(part, dict):
        return {}
    return {k: v for k, v in ((k, keep(v)) for k, v in part.items() if isinstance(k, str)) if v is not None}
