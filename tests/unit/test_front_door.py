"""checker/__init__.py, the checker's front door: its names, imported from their rooms only when first used."""

from __future__ import annotations

import subprocess
import sys

import mlsubmit.checker as door
import pytest


def test_every_public_name_resolves_to_its_rooms_object() -> None:
    import importlib

    names = door._public()
    assert len(names) >= 40 and "run_check" in names and "benchmarks" in names
    for name, (module, attribute) in names.items():
        room = importlib.import_module(module)
        assert getattr(door, name) is (getattr(room, attribute) if attribute else room), name


def test_importing_the_door_loads_no_room() -> None:
    code = ("import sys, mlsubmit.checker; "
            "print([m for m in sys.modules if m.startswith('mlsubmit.checker.')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_name_the_door_does_not_have_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        door.nothing_here  # noqa: B018
    # a room itself is still reachable as a submodule import
    from mlsubmit.checker import rcp

    assert rcp.__name__ == "mlsubmit.checker.rcp"
