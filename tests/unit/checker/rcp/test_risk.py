"""Run planning (issue 48): a closed set's chance of an RCP fail once its N runs are in, on sets written with
mllog whose answer is known in closed form; the seed; the CI option; RCP strictness against rcp_viewer --bootstrap.

The sets are BERT raw job output of ruleset 1.1.0 at global batch size 448: the check interpolates between
bert_ref_256 and bert_ref_3072, so the fastest allowed mean is 2,410,606.13 samples and the RCP mean 2,563,897.68.
Each run converges at its 4th eval, written as 4 x `scale` samples.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import pytest
from fixtures import demo
from fixtures.synth import RunSpec, render
from mlsubmit.checker import read_log
from mlsubmit.checker.logs.facts import extract
from mlsubmit.checker.rcp import planning, risk
from mlsubmit.checker.upstream.rcp_adapted import window

from mlsubmit.cli import main

RULESET, SYSTEM = "1.1.0", "ipu-pod16-POPART-closed"
FASTEST = window(RULESET, "bert", 448).fastest  # type: ignore[union-attr]


def write_set(folder: Path, scales: list[float], *, failed: tuple[int, ...] = ()) -> list[Path]:
    """One raw run per scale, a day apart; each converges at 4 x scale samples (or not, for `failed`)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i, scale in enumerate(scales):
        path = folder / f"job-{i:02d}.out"
        path.write_text(_run(i, round(scale), i not in failed), encoding="utf-8")
        out.append(path)
    return out


@functools.cache
def _run(i: int, scale: int, converge: bool) -> str:
    """MLLOG lines only (raw job output costs more to write and read), each run written once for the file."""
    spec = RunSpec(benchmark="bert", ruleset=RULESET, platform=SYSTEM, seed=100 + i, converge=converge,
                   start_ms=1_634_000_000_000 + i * 86_400_000, minutes=20.0 + i % 3)
    return demo._EPOCH_FIELD.sub(lambda m: f"{m.group(1)}{int(m.group(2)) * scale}", render(spec))


def assess(paths: list[Path], **kw: object) -> risk.Risk:
    facts = [extract(read_log(p, str(p))) for p in paths]
    found, _ = planning.assess_facts("bert", RULESET, facts)
    if kw:
        runs, batch = planning.runs_of(facts, RULESET)
        found = risk.assess(runs, planning.window_for(RULESET, "bert", batch), "bert", **kw)  # type: ignore[arg-type]
    assert found is not None
    return found


def test_runs_far_from_the_window_are_near_certain_but_never_certain(tmp_path: Path) -> None:
    """Identical runs say little about the runs to come (issue 55): the benchmark's published spread stands in
    for the spread k runs cannot show. Far above the window nearly nothing fails; far below nearly everything, but
    the chance is shown as "> 99.9 %", never "100 %", as the runs in hand do not decide it yet."""
    far_pass = assess(write_set(tmp_path / "a", [660_000] * 6))  # 2.64M: above the RCP mean
    assert far_pass.model == risk.MODEL and far_pass.p_fail < 0.01 and not far_pass.certain
    far_fail = assess(write_set(tmp_path / "b", [500_000] * 6))  # 2.0M: 17 % below the fastest allowed
    assert far_fail.p_fail > 0.99 and far_fail.p_insufficient < 0.01 and not far_fail.certain
    assert "P(RCP fail) > 99.9 %" in far_fail.words("samples") and "100" not in far_fail.words("samples")
    few = assess(write_set(tmp_path / "c", [FASTEST / 8] * 3))
    assert few.p_fail > 0.99 and not few.certain
    assert assess(write_set(tmp_path / "d", [FASTEST / 2] * 3)).p_fail < 0.01


def test_a_set_at_the_fastest_allowed_mean_is_a_coin_toss_leaning_to_pass(tmp_path: Path) -> None:
    """At the fastest allowed mean the set's own runs say one half; the published sets' margin above the window
    (the prior on where a set's centre sits) leans the draws towards a pass, and the calibration map (published
    sets sit just above their line far more often than below it) leans the chance shown further."""
    two = assess(write_set(tmp_path / "a", [FASTEST / 4] * 2))
    spread = [FASTEST / 4 * (1 + d) for d in (-0.03, 0.011, -0.017, 0.03, 0.017, -0.011)]  # symmetric about it
    six = assess(write_set(tmp_path / "b", spread))
    for found in (two, six):
        assert found.p_model is not None and 0.2 < found.p_model < 0.5 and 0.0 < found.p_normalised < 1.0
        assert found.p_fail == pytest.approx(risk.calibration()(found.p_model)) and 0.05 < found.p_fail < found.p_model


def test_the_calibration_map_is_monotone_and_leaves_the_ends_and_certainty_alone(tmp_path: Path) -> None:
    """The table's map (logit p -> a + b logit p) keeps the order of chances, keeps 0-1 % and 99-100 % where
    they are within a band, and is not applied to a verdict the runs in hand decide; the identity map gives the
    draws' own chance."""
    cal = risk.calibration()
    chances = [0.0, 0.001, 0.01, 0.05, 0.2, 0.5, 0.8, 0.95, 0.999, 1.0]
    mapped = [cal(p) for p in chances]
    assert mapped == sorted(mapped) and all(0.0 <= q <= 1.0 for q in mapped)
    assert mapped[1] < 0.01 and mapped[-2] > 0.99
    assert risk.IDENTITY(0.37) == 0.37 and risk.Calibration(0.0, 1.0)(0.2) == 0.2
    paths = write_set(tmp_path / "a", [FASTEST / 4 * (1 + d) for d in (0.02, -0.01, 0.0)])
    assert assess(paths, calibrate=risk.IDENTITY).p_fail == assess(paths).p_model
    certain = assess(write_set(tmp_path / "b", [660_000] * 8, failed=(2, 5)))
    assert certain.p_fail == certain.p_model == 1.0


def test_runs_that_do_not_converge_update_the_benchmarks_beta_prior(tmp_path: Path) -> None:
    """8 runs, one did not converge: a run's chance of not converging is Beta(alpha + 1, beta + 7), and one more
    of the 2 to come is one too many: P = 1 - E[(1-p)^2] = 1 - b(b+1)/((a+b)(a+b+1)), within Monte-Carlo error."""
    paths = write_set(tmp_path / "a", [660_000] * 8, failed=(5,))
    found = assess(paths, calibrate=risk.IDENTITY)  # the draws' own chance
    shown = assess(paths)
    assert shown.p_model == found.p_fail and shown.p_fail == pytest.approx(risk.calibration()(found.p_fail))
    assert shown.p_insufficient / shown.p_fail == pytest.approx(found.p_insufficient / found.p_fail)
    prior = risk.prior_for("bert")
    a, b = prior.alpha + 1, prior.beta + 7
    expected = 1 - b * (b + 1) / ((a + b) * (a + b + 1))
    assert abs(found.p_insufficient - expected) < 4 * math.sqrt(expected * (1 - expected) / risk.DRAWS)
    assert found.p_fail == pytest.approx(found.p_insufficient, abs=0.002) and not found.certain
    two = assess(write_set(tmp_path / "b", [660_000] * 8, failed=(2, 5)))  # already more than the one tolerated
    assert two.p_fail == 1.0 and two.p_insufficient == 1.0 and two.certain
    assert "P(RCP fail) 100.0 %; certain from the runs in hand" in two.words("samples")


def test_the_seed_is_fixed_shown_and_reproducible(tmp_path: Path) -> None:
    paths = write_set(tmp_path / "a", [FASTEST / 4 * (1 + d) for d in (0.02, -0.01, 0.0)])
    first, again = assess(paths), assess(paths)
    assert first == again and first.seed == risk.SEED and f"10,000 draws of model {risk.MODEL}" in first.words("x")
    assert f"seed {risk.SEED}" in first.words("x")
    other = assess(paths, seed=7)
    assert other != first and abs(other.p_fail - first.p_fail) < 0.05


def _check(*argv: object) -> int:
    return main(["check", "--ruleset", RULESET, "--color", "never", *map(str, argv)])


def test_ci_fails_on_the_risk_above_the_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    risky = tmp_path / "risky"
    write_set(risky, [FASTEST / 4] * 3)  # about one half
    assert _check(risky) == 0 and "info RUN009" in capsys.readouterr().out
    assert _check("--fail-on", "rcp-risk=0.05", risky) == 1
    assert "error RUN009" in capsys.readouterr().out
    assert _check("--fail-on", "rcp-risk=0.9", risky) == 0
    safe = tmp_path / "safe"
    write_set(safe, [660_000] * 6)
    assert _check("--fail-on", "rcp-risk=0.05", safe) == 0
    capsys.readouterr()
    assert _check("--fail-on", "rcp-risk=5%", safe) == 2 and "between 0 and 1" in capsys.readouterr().err
    (tmp_path / "mlsubmit.toml").write_text('[check]\nfail-on = { rcp-risk = 0.05 }\n', encoding="utf-8")
    assert _check(risky) == 1  # the project's policy
    assert _check("--fail-on", "rcp-risk=1", risky) == 0  # the command line over it


def test_a_tree_folder_short_of_its_runs_gets_its_risk(tmp_path: Path) -> None:
    from fixtures.treefix import build_org, resnet_runs
    from mlsubmit.checker.engine.pipeline import CheckOptions, run_check

    org = build_org(tmp_path / "org", {("ipu-pod16-POPART-closed", "resnet"): resnet_runs([35, 36, 35])})
    found = [f for f in run_check([str(org)], CheckOptions(ruleset="1.0.0", jobs=1)).report.all_findings()
             if f.code == "RUN009"]
    assert len(found) == 1 and "with 2 more run(s)" in found[0].message and risk.MODEL in found[0].message
    assert found[0].risk is not None and (found[0].risk["runs"], found[0].risk["required"]) == (3, 5)


def test_more_runs_than_n_say_what_the_median_window_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    write_set(tmp_path / "runs", [660_000] * 12)
    _check(tmp_path / "runs")
    out = capsys.readouterr().out
    assert "all 10 runs are in: RCP fail 0.0 %" in out
    assert "with 12 runs the median-window rule scores" in out and "where the first 10 would score" in out


# --- how strict an RCP is: rcp_viewer.py --bootstrap ------------------------------------------------------------

# mlcommons/logging's mlperf_logging/rcp_checker/visualization_scripts/rcp_viewer.py at 4bd6c8c (May 2026), run
# with the installed mlperf-logging 4.1.68: `rcp_viewer.py BENCH --version R --bootstrap GBS --seed 0`. Our
# vectorised draw takes the generator's numbers in the same order, so at seed 0 all 53 measured records of 6.0 and
# 6.1 gave the script's P(score < min) exactly (docs/runs.md); the test asks for Monte-Carlo agreement only.
UPSTREAM = [  # (ruleset, benchmark, batch size, its max_speedup, its P(score < min) at seed 0)
    ("6.0.0", "llama31_8b", 32, 1.0299965952657717, 0.0277),
    ("6.0.0", "dlrm_dcnv2", 160000, 1.0283383022124588, 0.0392),
    ("6.1.0", "flux1", 512, 1.0156238727526143, 0.0277),
    ("6.1.0", "gpt_oss_20b", 32, 1.0243339974540289, 0.0272),
    ("6.1.0", "llama2_70b_lora", 16, 1.0801087714179227, 0.0002),
    ("6.1.0", "dlrmv4", 8192, 1.0417860984264717, 0.0051),
]


@pytest.mark.parametrize(("ruleset", "bench", "batch", "speedup", "p_up"), UPSTREAM)
def test_strictness_agrees_with_rcp_viewer(ruleset: str, bench: str, batch: int, speedup: float, p_up: float
                                           ) -> None:
    from mlsubmit.checker.upstream.rcp_adapted import checker

    (row,) = planning.strictness_rows(ruleset, bench, batch)
    assert row.max_speedup == pytest.approx(speedup, rel=1e-12)
    runs = int(checker(ruleset, bench).submission_runs)
    ours = risk.strictness(row.name, _record(ruleset, bench, batch), runs, seed=0).p_below
    error = math.sqrt(2 * max(p_up, 1e-3) * (1 - p_up) / risk.DRAWS)  # two independent estimates
    assert abs(ours - p_up) < 4 * error


def _record(ruleset: str, bench: str, batch: int) -> dict[str, object]:
    from mlsubmit.checker.upstream.rcp_adapted import checker

    found: dict[str, object] = checker(ruleset, bench)._find_rcp(batch, "full_rcps")
    return found


def test_the_bootstrap_trims_ceil_ten_percent() -> None:
    """Identical reference runs give one mean; 3 runs trim 1 from each end (ceil(0.3)), as upstream does."""
    assert set(risk.bootstrap([5.0] * 4, 10, draws=50).tolist()) == {5.0}
    assert risk.bootstrap([1.0, 2.0, 3.0], 3, draws=2000).max() == 3.0
    with pytest.raises(ValueError):
        risk.bootstrap([1.0], 2)


def test_advise_strictness_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["advise", "--ruleset", "6.0.0", "--strictness", "llama31_8b:32"]) == 0
    out = capsys.readouterr().out
    assert "info HP011 batch size 32: llama31_8b_ref_32 (" in out and "max speedup 1.0300" in out and "seed 48" in out
    assert main(["advise", "--ruleset", "6.0.0", "--strictness", "llama31_8b:33"]) == 2
    assert main(["advise", "--ruleset", "6.0.0", "--strictness", "resnet"]) == 2
    assert main(["advise", "--strictness", "llama31_8b"]) == 2  # the round must be named


def test_runs_show_gives_the_risk_in_text_json_and_a_histogram(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A ledger of 8 runs, one that did not converge: runs show says the chance in words, in JSON and draws the
    final score's histogram with every bar's count written, the charts with axes, legend and values."""
    import json

    db = tmp_path / "ledger.db"
    write_set(tmp_path / "runs", [660_000] * 8, failed=(5,))
    _check("--ledger", db, tmp_path / "runs")
    capsys.readouterr()
    assert main(["runs", "show", "--ledger", str(db)]) == 0
    shown_text = capsys.readouterr().out
    assert "  risk: with 2 more run(s): P(RCP fail) 0." in shown_text and "the draws' own 2." in shown_text
    assert main(["runs", "show", "--ledger", str(db), "--format", "json"]) == 0
    (shown,) = json.loads(capsys.readouterr().out)["sets"]
    assert shown["risk"]["model"] == risk.MODEL and shown["risk"]["seed"] == risk.SEED
    assert shown["risk"]["runs"] == 8 and shown["risk"]["required"] == 10 and shown["risk"]["certain"] is False
    assert abs(shown["risk"]["p_model"] - 0.028) < 0.01 and shown["risk"]["p_fail"] < shown["risk"]["p_model"]
    assert sum(bar["count"] for bar in shown["risk"]["histogram"]) > 0
    page_path = tmp_path / "runs.html"
    assert main(["runs", "show", "--ledger", str(db), "--format", "html", "-o", str(page_path)]) == 0
    page = page_path.read_text(encoding="utf-8")
    assert "final score once 10 runs are in: P(RCP fail) 0." in page and ">median " in page
    assert "run, in start order" in page and "did not converge" in page and "fastest allowed 2.411e6" in page
    assert ">2.64e6</text>" in page  # each run's value written beside its point


def test_the_median_window_is_shaded_and_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "ledger.db"
    write_set(tmp_path / "runs", [660_000] * 12)
    _check("--ledger", db, tmp_path / "runs")
    page_path = tmp_path / "runs.html"
    assert main(["runs", "show", "--ledger", str(db), "--format", "html", "-o", str(page_path)]) == 0
    page = page_path.read_text(encoding="utf-8")
    assert "median window: runs 1..10 (scored)" in page and 'fill-opacity="0.45"' in page
    assert "all 10 runs are in" in page
