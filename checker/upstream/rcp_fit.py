"""Whether the installed mlperf-logging's RCP module is one the adapter in rcp.py was made for.

The adapter gives the reference's module stand-ins for `glob`, `logging`, `re`, `numpy` and `scipy.stats` that hold
only the calls the tested releases make, and overrides four methods of its RCP_Checker. A release newer than the
tested range, or one that calls one more function of those modules, renames what is overridden or looks for a new
word in a log line, would fail the adapted run on every folder. `misfits` names each such difference from the
module's source, read with `ast` (nothing in it is run); with any, the RCP check runs the module as it is.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from mlsubmit.checker.logs.rcp_lines import TRIGGERS

# The oldest and the newest mlperf-logging the adapter is tested with: `make test-compat` runs the differential
# tests with the first, `make test` with the second (pyproject.toml's pin for the dev venv).
OLDEST = (4, 1, 30)
NEWEST = (4, 1, 68)

# module the reference imports -> the functions of it the stand-ins provide, each with the keywords it takes.
# numpy's stand-in hands any other name to numpy itself, so only its own two functions are held to a shape.
_PROVIDED: dict[str, dict[str, frozenset[str]]] = {
    "glob": {"glob": frozenset({"recursive"})},
    "logging": {name: frozenset() for name in ("info", "warning", "error")},
    "re": {"sub": frozenset({"count", "flags"})},
    "scipy.stats": {"ttest_ind_from_stats": frozenset({"equal_var"})},
}
_NUMPY_OWN = {"mean": 1, "interp": 3}  # npstats' functions -> how many positional arguments they take
# Code the adapter never runs: the command-line entry point configures logging for itself.
_NOT_RUN = frozenset({"main", "get_parser"})

# What the adapter reaches in the module: names, RCP_Checker's methods it overrides with their parameters, and
# attributes of a checker it reads.
_NAMES = ("TOKEN", "submission_runs", "read_submission_file", "check_directory", "RCP_Checker")
_FUNCTIONS = {
    "read_submission_file": ("result_file", "ruleset", "use_train_samples"),
    "compute_rcp_stats": ("self",),
    "_set_results_scaling": ("self", "scale_factor", "results_dir"),
    "_reset_results_scaling": ("self", "results_dir"),
    "_eval_submission_record": ("self", "rcp_record", "subm_epochs", "results_dir"),
}
_DIRECTORY_KEYWORDS = ("rcp_pass", "rcp_bypass", "set_scaling")
_CHECKER_ATTRIBUTES = ("ruleset", "benchmark", "submission_runs", "rcp_data", "pruned_rcp_data")


def version_tuple(version: str) -> tuple[int, ...] | None:
    try:
        return tuple(int(part) for part in version.split(".")[:3])
    except ValueError:  # a local or pre-release build: not one we tested
        return None


def misfits(source: str, version: str) -> list[str]:
    """Why the adapter cannot run this module (empty: it can)."""
    found = []
    parsed = version_tuple(version)
    if parsed is None or not OLDEST <= parsed <= NEWEST:
        found.append(f"mlperf-logging {version} is outside the tested range {_dotted(OLDEST)}-{_dotted(NEWEST)}")
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [*found, f"its RCP module does not parse: {exc}"]
    found += _missing_names(tree) + list(_unprovided_calls(tree))
    found += [f"its reader looks for {word!r}, which the kept lines leave out" for word in sorted(reader_words(tree))
              if word.encode() not in TRIGGERS]  # fmt: skip
    return found


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


def _defs(tree: ast.AST) -> dict[str, ast.FunctionDef]:
    return {node.name: node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}


def _missing_names(tree: ast.Module) -> list[str]:
    top = {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}
    top |= {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    found = [f"it has no {name}" for name in _NAMES if name not in top]
    defs = _defs(tree)
    for name, params in _FUNCTIONS.items():
        got = tuple(a.arg for a in defs[name].args.args) if name in defs else None
        if got != params:
            found.append(f"{name} takes {got}, not {params}")
    directory = defs.get("check_directory")
    if directory is not None:
        keywords = {a.arg for a in directory.args.args}
        found += [f"check_directory takes no {k}" for k in _DIRECTORY_KEYWORDS if k not in keywords]
    assigned = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
                and isinstance(n.value, ast.Name) and n.value.id == "self"}  # fmt: skip
    found += [f"RCP_Checker sets no {a}" for a in _CHECKER_ATTRIBUTES if a not in assigned]
    return found


def _aliases(tree: ast.Module) -> tuple[dict[str, str], list[str]]:
    """Names bound to the modules the adapter replaces (`import numpy as np` -> np: numpy), and the imports it
    cannot replace (`from glob import glob` binds the function itself)."""
    names: dict[str, str] = {}
    refused = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:  # `import scipy.stats` binds `scipy`
                bound = alias.asname or alias.name.split(".")[0]
                names[bound] = alias.name if alias.asname else bound
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in {*_PROVIDED, "numpy", "scipy"}:
            refused.append(f"it imports from {node.module} directly")
    return names, refused


def _called(node: ast.Call, names: dict[str, str]) -> tuple[str, str] | None:
    """(module, function) of a call like `np.mean(...)` or `scipy.stats.ttest_ind_from_stats(...)`."""
    func = node.func
    if not isinstance(func, ast.Attribute):
        return None
    owner = func.value
    if isinstance(owner, ast.Name) and owner.id in names:
        return names[owner.id], func.attr
    if isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name) and owner.value.id in names:
        return f"{names[owner.value.id]}.{owner.attr}", func.attr
    return None


def _unprovided_calls(tree: ast.Module) -> Iterator[str]:
    names, refused = _aliases(tree)
    yield from refused
    for top in tree.body:
        if (isinstance(top, ast.FunctionDef) and top.name in _NOT_RUN) or isinstance(top, ast.If):
            continue  # main() and `if __name__ == "__main__"`: the adapter never runs them
        for node in ast.walk(top):
            called = _called(node, names) if isinstance(node, ast.Call) else None
            if called is None or not isinstance(node, ast.Call):
                continue
            problem = _call_problem(node, *called)
            if problem:
                yield f"line {node.lineno}: {problem}"


def _call_problem(node: ast.Call, module: str, function: str) -> str | None:
    keywords = {k.arg for k in node.keywords}
    if module == "numpy":
        arity = _NUMPY_OWN.get(function)
        if arity is not None and (len(node.args) != arity or keywords):
            return f"numpy.{function} called with a shape the stand-in does not take"
        return None
    provided = _PROVIDED.get(module)
    if provided is None:
        return None  # a module the adapter leaves alone (os, json, ...)
    if function not in provided:
        return f"{module}.{function} is not provided by the adapter"
    if not keywords <= provided[function]:
        return f"{module}.{function} called with {sorted(k for k in keywords if k)}"
    return None


def reader_words(tree: ast.Module) -> set[str]:
    """Every literal read_submission_file looks for in a line (`"word" in str`)."""
    reader = _defs(tree).get("read_submission_file")
    words = set()
    for node in ast.walk(reader) if reader is not None else ():
        if (isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) and isinstance(node.ops[0], ast.In)
                and isinstance(node.left.value, str) and isinstance(node.comparators[0], ast.Name)):
            words.add(node.left.value)
    return words
