"""The wheel's packages, found in the tree rather than listed by hand (issue 23: a hand-written list left out
checker/rcp/, and every installed `mlsubmit check` stopped with exit 3). Everything else is in pyproject.toml.

Four folders install as one import package (the package-dir table in pyproject.toml); setuptools' own
`packages.find` cannot put a prefix on what it finds under checker/, so each folder is searched here and its
subfolders named under its import name. Data-only folders (codes/, tables/) are found as namespace packages, so
their files ship as package data without a warning.
"""

from __future__ import annotations

from setuptools import find_namespace_packages, setup

ROOTS = {"mlsubmit": "mlsubmit", "mlsubmit.checker": "checker", "mlsubmit.submission": "submission",
         "mlsubmit.schemas": "schemas"}  # fmt: skip


def packages() -> list[str]:
    found = set(ROOTS)
    for name, folder in ROOTS.items():
        found |= {f"{name}.{sub}" for sub in find_namespace_packages(where=folder, exclude=["*__pycache__*"])}
    return sorted(found)


setup(packages=packages())
