"""The whitelist: every shipped snippet compiles; anything else is refused before it can run."""

from __future__ import annotations

import pytest
from mlsubmit.checker.rules.files import RuleFile, available_rulesets, get_ruleset
from mlsubmit.checker.rules.safe_eval import Snippet, compile_snippet, namespace, run


def snippets(rules: RuleFile) -> list[Snippet]:
    """Every snippet of a rule file, in the order the file holds them."""
    out = [*rules.begin, *rules.end_pre, *rules.end_check]
    for key in rules.keys.values():
        out += [*key.pre, *key.check, *key.post, *key.first_check]
        if key.atleast_one:
            out.append(key.atleast_one)
    return out


def test_every_snippet_mlperf_logging_ships_is_accepted() -> None:
    total = 0
    for version in available_rulesets():
        ruleset = get_ruleset(version)
        for rules in (ruleset.file(name) for name in sorted(ruleset.names)):
            for snip in snippets(rules):
                total += 1
                assert snip.code is not None, (rules.name, snip.source, snip.refusal)
    assert total > 1300  # 1,417 in mlperf-logging 4.1.30 (rounds to 5.1.0), about 1,800 in 4.1.68


@pytest.mark.parametrize(
    "source",
    [
        "__import__('os').system('true')",
        "open('/etc/passwd').read()",
        "v.__class__",
        "(lambda: 1)()",
        "[x for x in v]",
        "getattr(v, 'x')",
        "type(v)",
        "eval('1')",
        "'{0.__class__}'.format(v)",
        "'{0[x]}'.format(v)",
        "v['value'].format(v)",
        "globals()",
        "sorted(v, key=len)",
        "s.__dict__",
        "import os",
        "from os import system",
        "from dataclasses import replace as r",
        "with open('x') as f: pass",
        "def f(): pass",
        "while True: pass",
        "del s['x']",
        "x = y",
        "s['a'] **= 2",
    ],
)
def test_refused_snippets_never_compile(source: str) -> None:
    mode = "exec" if any(w in source for w in ("import", "with", "def", "while", "del", "=")) else "eval"
    snip = compile_snippet(source, mode, origin="test")  # type: ignore[arg-type]
    assert snip.code is None
    assert snip.refusal


def _ns() -> dict[str, object]:
    return namespace({}, [], lambda name: None)


def test_accepted_snippets_run_with_only_whitelisted_builtins() -> None:
    ns = _ns()
    ns["v"] = {"value": [3, 1, 2], "metadata": {"epoch_num": 4}}
    check = compile_snippet("sorted(v['value']) == [1, 2, 3] and is_integer(math.log2(8))", "eval", origin="t")
    assert run(check, ns) is True
    code = compile_snippet("s['n'] = len(v['value'])\nfor x in v['value']:\n    s['n'] += x", "exec", origin="t")
    run(code, ns)
    assert ns["s"] == {"n": 9}
    assert compile_snippet("print('x')", "eval", origin="t").refusal == "unknown name(s): print"
    assert "print" not in ns["__builtins__"]  # type: ignore[operator]


def test_power_and_repetition_are_bounded() -> None:
    ns = _ns()
    ns["v"] = {"value": 10**6}
    with pytest.raises(OverflowError):
        run(compile_snippet("2 ** v['value']", "eval", origin="t"), ns)
    with pytest.raises(OverflowError):
        run(compile_snippet("'x' * v['value'] * 10", "eval", origin="t"), ns)
    assert run(compile_snippet("2 ** 10 * 3", "eval", origin="t"), ns) == 3072


def test_the_one_import_the_rules_use_is_a_safe_copy() -> None:
    from mlsubmit.checker.logs.reader import Record

    ns = _ns()
    rec = Record("eval_accuracy", {"value": 1, "metadata": {}}, 1.0, 3, 0)
    ns["loglines"] = [rec]
    code = compile_snippet(
        "from dataclasses import replace\nn = replace(loglines[0])\nn.key = 'agg'\nloglines.extend([n])",
        "exec",
        origin="t",
    )
    run(code, ns)
    assert [r.key for r in ns["loglines"]] == ["eval_accuracy", "agg"]  # type: ignore[attr-defined]
    assert rec.key == "eval_accuracy"
