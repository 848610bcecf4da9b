"""Did-you-mean for what a user types: finding codes, options, --baseline systems; one suggestion each."""

from __future__ import annotations

import pytest

from mlsubmit.report.compare import unknown_baseline


@pytest.mark.parametrize(
    ("typed", "meant"), [("HP08", "HP008"), ("hp8", "HP008"), ("RULE0005", "RULE005"), ("RUEL005", "RULE005")]
)
def test_explain_suggests_the_code(run_cli, typed: str, meant: str) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run_cli("explain", typed)
    assert code == 2
    assert f'did you mean "{meant}"?' in err
    assert err.count("did you mean") == 1


def test_explain_without_a_near_code_says_none(run_cli) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run_cli("explain", "QQQ123")
    assert code == 2 and "did you mean" not in err and "lists them all" in err


@pytest.mark.parametrize(("typed", "meant"), [("--rulset", "--ruleset"), ("--strcit", "--strict"),
                                              ("--formt=json", "--format")])  # fmt: skip
def test_a_mistyped_option_gets_one_suggestion(run_cli, typed: str, meant: str) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run_cli("check", typed, "1.0.0", "x.txt")
    assert code == 2
    assert f'did you mean "{meant}"?' in err and err.count("did you mean") == 1


def test_an_abbreviated_option_is_refused(run_cli) -> None:  # type: ignore[no-untyped-def]
    # --str would be --strict today and something else once an option starting so is added
    code, _, err = run_cli("check", "--ruleset", "1.0.0", "--str", "x.txt")
    assert code == 2 and "unrecognized arguments: --str" in err


def test_baseline_suggests_one_system() -> None:
    from types import SimpleNamespace

    rows = [SimpleNamespace(score=SimpleNamespace(system=s), system=None)
            for s in ("ipu-pod16-closed", "ipu-pod64-closed", "ipu-pod16-open")]  # fmt: skip
    message = unknown_baseline(rows, "ipu-pod16-clsoed")  # type: ignore[arg-type]
    assert message is not None
    assert message.endswith('; did you mean "ipu-pod16-closed"?')
