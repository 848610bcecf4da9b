"""Every package the product imports is one it declares: a dependency in pyproject.toml, or an extra's, imported
only by the module the extra is for.

The installed-wheel tests run the plain install's commands in a venv that also holds the capture extra
(tests/fixtures/installed.py): an undeclared import that the extra's dependencies happen to bring (pydantic,
filelock, requests...) would pass there and fail for a user without the extra. This test finds it in the source.
"""

from __future__ import annotations

import re
import sys
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[3]
PRODUCT = ("mlsubmit", "checker", "submission", "schemas")  # the folders the wheel installs as mlsubmit
# an extra's package -> the only product modules that may import it (each catches the ImportError)
EXTRAS = {"mlperf_sysinfo": {"checker/systems/host.py"}, "openpyxl": {"mlsubmit/report/summary_files.py"},
          "psycopg": {"checker/base/ledger_pg.py"}}


# `from a.b import c` -> a; `import a.b as c, d` -> "a.b as c, d". A line, not a syntax tree: parsing the product
# costs 20 times more (1.3 s here) and finds the same names; a docstring line that reads as an import adds a name
# to look up, never hides one.
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+([A-Za-z_]\w*)[\w.]*[ \t]+import\b|import[ \t]+([^#\n]+))", re.MULTILINE)


@cache
def _imports() -> dict[str, frozenset[str]]:
    """Top-level name of every absolute import in the product -> the files importing it."""
    found: dict[str, set[str]] = {}
    for folder in PRODUCT:
        for path in (ROOT / folder).rglob("*.py"):
            for module, names in _IMPORT.findall(path.read_text(encoding="utf-8")):
                for name in [module] if module else [part.split()[0] for part in names.split(",") if part.strip()]:
                    found.setdefault(name.split(".")[0], set()).add(path.relative_to(ROOT).as_posix())
    return {name: frozenset(files) for name, files in found.items()}


def _declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {canonicalize_name(Requirement(spec).name) for spec in project["dependencies"]}


def test_every_third_party_import_is_a_declared_dependency() -> None:
    own = {"mlsubmit", *PRODUCT}
    provided = packages_distributions()  # the test venv's: every declared dependency is installed there
    declared = _declared()
    undeclared = {}
    for name, files in _imports().items():
        if name in own or name in sys.stdlib_module_names or name == "__future__":
            continue
        if name in EXTRAS:
            assert files <= EXTRAS[name], f"{name} (an extra's) imported by {sorted(files - EXTRAS[name])}"
            continue
        # a dependency for another Python than this one (tomli) is not installed: its name is the import's
        dists = {canonicalize_name(d) for d in provided.get(name, [name])}
        if not dists & declared:
            undeclared[name] = sorted(files)
    assert undeclared == {}, f"imported but not in pyproject.toml's dependencies: {undeclared}"


def test_the_check_sees_a_product_import() -> None:
    found = _imports()
    assert "checker/systems/host.py" in found["mlperf_sysinfo"]
    assert "yaml" in found and "git" in found and "re2" in found
