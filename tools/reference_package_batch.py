"""Run mlperf-logging's package checker over many organisation trees in one process, each on a copy.

Prints one JSON line per tree: {"tree", "ruleset", "ok", "crash", "errors", "kinds"}. `ok` is the package checker's own
final verdict ("FOUND NO ERRORS" vs "FOUND ERRORS"; it exits 0 either way), `errors` the ERROR lines it logged
(`kinds`: how many of them are about system files, file counts, olympic tolerance, seeds, RCP),
`crash` the exception that stopped it (then there is no verdict). The checker writes scaling.json into the tree it
checks, so every tree is copied to a temporary folder first. It runs the reference's eval-based rule engine: use
it only on trusted trees (the corpus, test fixtures). From ruleset 2.0.0 the tree's own `package_checker_params`
gives the flags, as the verify script passes them (mlsubmit.checker.tree.params.script_arguments); an argument the
package checker refuses stops it, as it stops the verify script.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import shutil
import sys
import tempfile
import warnings
from pathlib import Path


class _Counter(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.errors: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.errors.append(record.getMessage()[:300])


# the package checker's options the verify script may pass, each to check_training_result_files' argument
_FLAGS = {"--rcp-bypass": "rcp_bypass", "--rcp_bypass": "rcp_bypass", "--seed-checker-bypass": "seed_checker_bypass",
          "--rcp-bert-train-samples": "train_samples", "--rcp_bert_train_samples": "train_samples"}


def verify_flags(tree: Path, ruleset: str) -> dict[str, bool]:
    """The flags the verify script passes for the tree's package_checker_params (2.0.0 and later); ValueError for
    an argument the package checker would refuse."""
    from mlsubmit.checker.tree import params

    flags = dict.fromkeys(set(_FLAGS.values()), False)
    if not params.applies(ruleset):
        return flags
    for arg in params.script_arguments(tree):
        if arg == "--":
            continue
        if arg not in _FLAGS:
            raise ValueError(f"unrecognized arguments: {arg}")
        flags[_FLAGS[arg]] = True
    return flags


def check_tree(tree: Path, ruleset: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="refpkg-") as tmp:
        copy = Path(tmp) / tree.name
        shutil.copytree(tree, copy, symlinks=True)
        return check_copy(copy, ruleset, shown=tree)


def check_copy(copy: Path, ruleset: str, shown: Path) -> dict[str, object]:
    """The package checker's verdict on `copy`, a copy it may write into (its RCP step leaves scaling.json there,
    as the summarizer that follows it in the verify script then reads); `shown` is the tree the copy was made of."""
    from mlperf_logging.compliance_checker import mlp_compliance
    from mlperf_logging.package_checker import package_checker as pc

    counter = _Counter()
    root = logging.getLogger()
    root.addHandler(counter)
    out: dict[str, object] = {"tree": str(shown), "ruleset": ruleset, "ok": None, "crash": None, "errors": 0}
    mlp_compliance.enqueued_configs.clear()  # a crash leaves the module-global queue dirty
    try:
        flags = verify_flags(copy, ruleset)
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            systems_ok = pc.check_systems(str(copy), "training", ruleset)
            results_ok = pc.check_training_result_files(str(copy), "training", ruleset, True, False,
                                                        flags["rcp_bypass"], flags["train_samples"],
                                                        flags["seed_checker_bypass"])  # fmt: skip
        out["ok"] = bool(systems_ok and results_ok)
    except Exception as exc:  # the reference crashes on several real trees; that is its verdict there
        out["crash"] = f"{type(exc).__name__}: {exc}"[:300]
    finally:
        root.removeHandler(counter)
    out["errors"] = len(counter.errors)
    out["error_lines"] = counter.errors[:20]
    out["kinds"] = {kind: sum(1 for e in counter.errors if pattern(e)) for kind, pattern in KINDS.items()}
    return out


# What each ERROR line is about; one line per failing folder (or system file) for each kind.
KINDS = {
    "system_file": lambda e: e.strip().startswith("System description checker failed for"),
    "count": lambda e: e.startswith("Incorrect number of files"),
    "olympic": lambda e: e.strip().endswith("files do not comply, directory cannot be accepted"),
    "seeds": lambda e: e == "Seed checker failed",
    "rcp": lambda e: e.startswith("RCP Test Failed"),
}


def quiet_logging() -> None:
    """The root logger at INFO with no handler of its own: the counter added per tree sees every ERROR line."""
    logging.getLogger().setLevel(logging.INFO)
    for handler in list(logging.getLogger().handlers):
        logging.getLogger().removeHandler(handler)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ruleset", help="ruleset for the trees given as arguments")
    parser.add_argument("trees", nargs="*", type=Path)
    parser.add_argument("--stdin", action="store_true", help="read 'ruleset<TAB>tree' lines from stdin")
    args = parser.parse_args(argv)
    quiet_logging()
    jobs = [(args.ruleset, t) for t in args.trees]
    if args.stdin:
        for line in sys.stdin:
            if line.strip():
                ruleset, tree = line.rstrip("\n").split("\t", 1)
                jobs.append((ruleset, Path(tree)))
    for ruleset, tree in jobs:
        print(json.dumps(check_tree(tree, ruleset)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
