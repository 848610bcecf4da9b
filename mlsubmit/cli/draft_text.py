"""`mlsubmit rounds draft`'s words: the draft as YAML in the curated tables' layout (one flow mapping per rule),
its validation against our table schema, what changed since the round drafted from, and the comparison with a
curated table. Every line for a person (the summary, the comparison, the draft's comments) quotes the document's
cells and names as `inert` text: a cell holding an escape sequence shows it, it does not reach the terminal."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from mlsubmit.checker.hyperparameters.draft import SCHEMA, Draft
from mlsubmit.checker.hyperparameters.draft_compare import compare
from mlsubmit.core.errors import UsageError
from mlsubmit.core.support.atomic import write_text
from mlsubmit.core.support.display_escape import inert


def _flow(value: Any) -> str:
    return str(yaml.safe_dump(value, default_flow_style=True, width=1 << 20, sort_keys=False)).strip()


def render(made: Draft, document: str, previous: str) -> str:
    """The draft as a table file; the unread rows as comments where a person writes them."""
    table = made.table
    comments = [f"# DRAFT of the closed-division hyperparameter table of round {table['round']}, written by "
                f"`mlsubmit rounds draft` from {document} with --from {previous}.",
                "# Review every row against the rules before it goes to checker/tables/ (the checker never reads a "
                "draft).",
                f"# Rows carried from round {previous} (same text): {len(made.carried)}; read from their constraint "
                f"text: {len(made.read)}; unread, left for a person: {len(made.unread)}."]
    comments.extend(f"#   UNREAD L{r.line} {r.model} {r.name}{r.marks}: {' '.join(r.constraint.split())}"
                    for r in made.unread)
    out = [inert(line) for line in comments]  # a file name's newline would end the comment and start YAML
    out.extend(f"{key}: {_flow(table[key])}"
               for key in ("round", "rulesets", "source", "tolerance", "benchmark_aliases", "aliases"))
    out.append("benchmarks:")
    for bench, part in table["benchmarks"].items():
        out.append(f"  {bench}:\n    rules:")
        out.extend(f"      - {_flow(rule)}" for rule in part["rules"])
    return "\n".join(out) + "\n"


def schema_problems(table: dict[str, Any]) -> list[str]:
    """What our table schema refuses in the draft (a benchmark name it does not list, say), one line each."""
    # jsonschema only when a draft is validated (start-up)
    from mlsubmit.core.support.schema_loader import errors, load_schema, pointer

    return [f"{pointer(e) or '/'}: {e.message}" for e in errors(table, load_schema(SCHEMA))]


def write(path: Path, text: str) -> None:
    try:
        write_text(path, text)
    except OSError as exc:
        raise UsageError(f"--output {path}: cannot write it: {exc.strerror or exc}") from None


def summary(made: Draft, round_: str, previous: str, before: Path | None, output: Path,
            problems: list[str], looked: Sequence[Path] = ()) -> str:
    rows = len(made.carried) + len(made.read) + len(made.unread)
    lines = [f"round {round_} drafted from round {previous} into {output}: {rows} rows, {len(made.carried)} carried "
             f"(same text as round {previous}), {len(made.read)} read from their text, {len(made.unread)} unread"]
    if before is None:
        where = f" (looked for {' and '.join(str(p) for p in looked)})" if looked else ""
        lines.append(f"  no copy of round {previous}'s rules was found{where}: no row could be carried; give "
                     "--from-text FILE")
    lines.append(f"  benchmarks added: {', '.join(made.added) or 'none'}; removed: {', '.join(made.removed) or 'none'}")
    lines.extend(f"  changed L{row.line} {row.model} {row.name}{row.marks}: {' '.join(row.constraint.split())} "
                 f"(round {previous}: {was})" for row, was in made.changed)
    lines.extend(f"  unread L{r.line} {r.model} {r.name}{r.marks}: {' '.join(r.constraint.split())}"
                 for r in made.unread)
    lines.extend(f"  schema: {p}" for p in problems)
    return _shown(lines)


def _shown(lines: list[str]) -> str:
    """Lines for the terminal, each inert."""
    return "".join(inert(line) + "\n" for line in lines)


def comparison(made: Draft, curated: Any) -> str:
    """The draft against `curated` (our table of the same round; None when there is none)."""
    if curated is None:
        return "no curated table of this round to compare with\n"
    f = compare(made, curated)
    lines = [f"against the curated table of round {f.round}: {f.equal} of {f.curated} curated rows reproduced "
             f"exactly ({f.share:.1%}); {len(f.different)} different, {len(f.missing)} not drafted"]
    lines.extend(f"  different {d}" for d in f.different)
    lines.extend(f"  not drafted {m}" for m in f.missing)
    return _shown(lines)
