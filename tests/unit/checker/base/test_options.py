"""CheckOptions and Profile: what each profile runs is written in one place (read through the engine's registry),
and a profile name still works."""

from __future__ import annotations

from typing import Any

import pytest
from mlsubmit.checker.base.contract import STAGES, Check
from mlsubmit.checker.base.options import CheckOptions, Profile
from mlsubmit.checker.engine.checks import plan, stage
from mlsubmit.checker.policy.severity import in_force


def _names(checks: list[Check[Any]]) -> list[str]:
    return [c.name for c in checks]


def test_the_full_profile_runs_rules_and_the_hp_table_then_systems_and_the_tree_checks() -> None:
    assert CheckOptions(ruleset="1.0.0").profile is Profile.FULL
    full = plan(Profile.FULL.value)
    assert _names(stage(full, "log")) == ["read", "rules", "hyperparameters", "result-file"]
    assert _names(stage(full, "prepare")) == ["systems", "layout", "power", "convergence-rcp", "implementations",
                                              "hygiene"]
    assert _names(stage(full, "code")) == ["hygiene"]
    assert _names(stage(full, "org")) == ["systems", "layout", "results-folders", "power", "init-time", "config-names",
                                          "seeds", "eval-cadence", "convergence-rcp", "implementations", "hygiene"]
    assert full.run_errors == "folder" and full.note_alone


def test_the_reference_profile_runs_only_what_the_package_checker_runs() -> None:
    ref = plan(CheckOptions(ruleset="1.0.0", profile=Profile.REFERENCE).profile.value)
    assert _names(stage(ref, "log")) == ["read", "rules"]
    assert _names(stage(ref, "prepare")) == ["reference-tree"]
    assert _names(stage(ref, "org")) == ["reference-tree"]
    assert stage(ref, "code") == []
    assert not ref.runs("hyperparameters") and ref.run_errors == "folder" and not ref.levels()


def test_every_check_of_a_profile_loads_its_function() -> None:
    for profile in Profile:
        for name in STAGES:
            for check in stage(plan(profile.value), name):
                run = check.function()
                assert callable(run.start) and callable(run.finish) if name == "log" else callable(run)


@pytest.mark.parametrize("name", ["full", "reference"])
def test_a_profile_name_is_turned_into_the_profile_and_keys_the_cache_by_its_log_checks(name: str) -> None:
    options = CheckOptions(ruleset="1.0.0", profile=name)  # type: ignore[arg-type]
    assert options.profile is Profile(name) and options.profile == name
    assert in_force(options).profile == name
    assert plan(options.profile.value).key() == plan(Profile(name).value).key()


def test_an_unknown_profile_is_refused() -> None:
    with pytest.raises(ValueError, match="nosuch"):
        CheckOptions(ruleset="1.0.0", profile="nosuch")  # type: ignore[arg-type]


def test_no_module_but_options_tests_a_profile_name() -> None:
    """What a profile means is data in Profile's plan; nobody else compares its name."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[4]
    name_test = re.compile(r"""[!=]=\s*["'](full|reference)["']""")  # (sysinfo has profiles of its own)
    offenders = [f"{p.relative_to(root)}:{n}" for folder in ("checker", "mlsubmit", "submission")
                 for p in sorted((root / folder).rglob("*.py")) if p.name != "options.py"
                 for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if name_test.search(line)]
    assert offenders == []
