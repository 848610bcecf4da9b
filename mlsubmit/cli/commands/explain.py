"""mlsubmit explain [CODE]: what a finding code means and how to fix it."""

from __future__ import annotations

import argparse
import sys
import textwrap

from mlsubmit.core.codes import CodeInfo, catalogue
from mlsubmit.core.errors import UsageError
from mlsubmit.core.support.names import did_you_mean

# Statements about scope that belong with the codes (shown by `mlsubmit explain` with no code).
NOTES: list[str] = [
    "Rule files: RULE findings come from the compliance rules mlperf-logging ships for the chosen ruleset, run by "
    "mlsubmit's own engine (whitelisted Python subset; nothing else is executed).",
    "Hyperparameter table: HP findings apply the closed-division hyperparameter table of every training round, "
    "1.0 to 6.1 (rulesets 1.0.0 to 6.1.0; TRX.Y §Hyperparameters with its \"Deprecated benchmarks "
    "hyperparameters\" table and the GPT3, Llama 3.1 405b and DeepSeek-V3-671B batch size -> learning rate side "
    "tables), to closed logs, and to any log with `mlsubmit advise`. Each round has one alias table from the "
    "policy's names to the logs' (dlrmv2 -> dlrm_dcnv2, flux.1 -> flux1, ssd -> retinanet and gnn -> rgat from "
    "5.0, opt_weight_decay -> opt_adamw_weight_decay for llama2_70b_lora, sequence_length -> "
    "max_sequence_length, ...). Round 6.1 has no training_rules.adoc of its own here: its table is the 6.0 table "
    "less llama31_405b and dlrm_dcnv2, which the 6.1 rules retired (training_policies PR #590), plus the "
    "hyperparameter rows mlperf-logging 4.1.68's compliance_checker/training_6.1.0 rule files check for dlrmv4 "
    "(the rules' dlrm_v4_hstu) and qwen35_397b_grpo, each citing the rule file and line. Where the letter of a "
    "row and the reference code or the results the review accepted differ (gpt3 and llama31_405b step formulas, "
    "end learning rate, learning rates below the side table), a value that follows the accepted reading is "
    "HP009, a warning citing its sources, and a value outside every reading stays HP001. A value that a rule "
    "file and a table row both refuse is reported once, as the rule file's finding naming the row. HP003 says a "
    "ruleset has no table; no ruleset mlperf-logging ships triggers it. Values the rules fix to the reference "
    "implementation without listing them in the table (for example BERT max_predictions_per_seq 76) are out of "
    "scope, as are ** rows, which are not logged (label smoothing, truncated-normal initialisation), and rows "
    "whose key no log carries (dropout, lora_dropout).",
    "Advice: `mlsubmit advise` gives, for closed and open runs (open ones as closed), the RCP the runs are "
    "measured against (HP006), each hyperparameter that differs from it (HP007) and the predicted RCP verdict "
    "(HP008; an error with --fail-on rcp when it is a fail); an open run that nothing in its log keeps out of "
    "closed gets HP010.",
]


def _wrap(text: str, indent: str = "  ") -> str:
    # a path or URL is never broken: it stays one word a reader can copy
    return textwrap.fill(text, width=100, initial_indent=indent, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False)


def _hanging(line: str) -> str:
    """A line of the severity in force, wrapped under its own indent (and under a list item's text)."""
    body = line.lstrip(" ")
    lead = "  " + " " * (len(line) - len(body))
    return textwrap.fill(body, width=100, initial_indent=lead, subsequent_indent=lead + "  ",
                         break_long_words=False, break_on_hyphens=False)


def code_listing(infos: list[CodeInfo]) -> str:
    """One code a line in fixed columns (code, severity, title), long titles wrapped under the title column."""
    code_w = max((len(i.code) for i in infos), default=0)
    sev_w = max((len(i.severity.value) for i in infos), default=0)
    indent = " " * (code_w + sev_w + 4)
    lines = [textwrap.fill(f"{i.code:<{code_w}}  {i.severity.value:<{sev_w}}  {i.title}", width=100,
                           subsequent_indent=indent, break_on_hyphens=False) for i in infos]  # fmt: skip
    return "".join(line + "\n" for line in lines)


def _in_force(args: argparse.Namespace, info: CodeInfo) -> list[str]:
    # the checker only for the severity in force: `explain` alone never loads it (start-up)
    from mlsubmit.checker import policy_for
    from mlsubmit.cli.commands.check import flags_of

    policy, config = policy_for([], flags_of(args))
    lines = policy.describe(info.code, info.severity)
    return lines if config is None else [*lines, f"project configuration read: {config}"]


def run(args: argparse.Namespace) -> int:
    codes = catalogue()
    out = sys.stdout
    if not args.code:
        out.write(code_listing(list(codes.values())))
        out.write("\n" + "\n".join(_wrap(n, "") for n in NOTES) + "\n")
        return 0
    wanted = args.code.upper()
    if wanted in codes:
        info = codes[wanted]
        out.write(f"{info.code} ({info.severity.value}): {info.title}\n\n{_wrap(info.explanation)}\n\n")
        out.write(f"How to fix:\n{_wrap(info.hint)}\n")
        for ref in info.references:
            out.write(f"\nSee: {ref}\n")
        out.write("\nSeverity in force:\n" + "".join(_hanging(line) + "\n" for line in _in_force(args, info)))
        return 0
    family = [i for i in codes.values() if i.family == wanted]
    if family:
        out.write(code_listing(family))
        return 0
    near = _nearest(wanted, list(codes))
    raise UsageError(f"no finding code {args.code!r}{near} (`mlsubmit explain` lists them all)")


def _nearest(wanted: str, codes: list[str]) -> str:
    """A did-you-mean for a mistyped code: a number with a digit short or long (HP08, RULE0005) is read with the
    family's width first; otherwise the closest spelling."""
    family = wanted.rstrip("0123456789")
    digits = wanted[len(family) :]
    widths = {len(c) - len(family) for c in codes if c.rstrip("0123456789") == family}
    if digits and len(widths) == 1:
        padded = f"{family}{int(digits):0{widths.pop()}d}"
        if padded in codes:
            return f'; did you mean "{padded}"?'
    return did_you_mean(wanted, codes, cutoff=0.7)
