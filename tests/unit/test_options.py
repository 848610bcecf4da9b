"""CheckOptions and Profile: what each profile runs is written in one place, and a profile name still works."""

from __future__ import annotations

import pytest
from mlsubmit.checker.run.cache import context_key
from mlsubmit.checker.run.options import CheckOptions, Profile


def _names(functions: list[object]) -> list[str]:
    return [f"{f.__module__.removeprefix('mlsubmit.checker.')}:{f.__name__}" for f in functions]  # type: ignore[attr-defined]


def test_the_full_profile_runs_rules_and_the_hp_table_then_systems_and_tree() -> None:
    full = CheckOptions(ruleset="1.0.0").profile
    assert full is Profile.FULL
    assert _names(full.log_checks()) == ["rules.engine:check_log", "hyperparameters.apply:check_log",
                                          "tree.resultfile:check_log"]
    assert _names(full.preparations()) == ["systems.agreement:prepare_org", "tree.check:prepare_org"]
    assert _names(full.org_checks()) == ["systems.agreement:check_org", "tree.check:check_org"]


def test_the_reference_profile_runs_only_what_the_package_checker_runs() -> None:
    ref = CheckOptions(ruleset="1.0.0", profile=Profile.REFERENCE)
    assert _names(ref.profile.log_checks(hyperparameters=ref.hp_table)) == ["rules.engine:check_log"]
    assert _names(ref.profile.preparations()) == ["tree.check:prepare_org"]
    assert _names(ref.profile.org_checks()) == ["tree.check:check_org"]
    assert not ref.hp_table and ref.profile.plan.demote_run_errors


def test_turning_the_hp_table_off_drops_its_log_check() -> None:
    options = CheckOptions(ruleset="1.0.0", hyperparameters=False)
    assert not options.hp_table
    names = _names(options.profile.log_checks(hyperparameters=options.hp_table))
    assert names == ["rules.engine:check_log", "tree.resultfile:check_log"]


@pytest.mark.parametrize("name", ["full", "reference"])
def test_a_profile_name_is_turned_into_the_profile_and_keys_the_cache_as_before(name: str) -> None:
    options = CheckOptions(ruleset="1.0.0", profile=name)  # type: ignore[arg-type]
    assert options.profile is Profile(name) and options.profile == name
    assert context_key("1.0.0", options.profile, True) == context_key("1.0.0", name, True)


def test_an_unknown_profile_is_refused() -> None:
    with pytest.raises(ValueError, match="nosuch"):
        CheckOptions(ruleset="1.0.0", profile="nosuch")  # type: ignore[arg-type]


def test_no_module_but_options_tests_a_profile_name() -> None:
    """What a profile means is data in Profile's plan; nobody else compares its name."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    name_test = re.compile(r"""profile\s*[!=]=\s*["']|[!=]=\s*["'](full|reference)["']""")
    offenders = [f"{p.relative_to(root)}:{n}" for folder in ("checker", "mlsubmit", "submission")
                 for p in sorted((root / folder).rglob("*.py")) if p.name != "options.py"
                 for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if name_test.search(line)]
    assert offenders == []
