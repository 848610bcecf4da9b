"""Run mlperf-logging's own compliance checker over many logs in one process (for differential tests and bench).

Prints one JSON line per log: {"path", "ok", "crash"}. `ok` is what `python -m mlperf_logging.compliance_checker
--usage training --ruleset R FILE` would exit with (0 -> true); a traceback counts as a failure, as its exit 1 does.
This runs the reference's eval-based engine: use it only on trusted files (the corpus, test fixtures).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys


def check_one(path: str, ruleset: str) -> dict[str, object]:
    from mlperf_logging.compliance_checker import mlp_compliance

    mlp_compliance.enqueued_configs.clear()  # a crash leaves the module-global queue dirty
    checker = mlp_compliance.make_checker("training", ruleset, False, False)
    config = f"training_{ruleset}/common.yaml"
    try:
        ok = bool(checker.check_file(path, config))
        return {"path": path, "ok": ok, "crash": None}
    except Exception as exc:  # the reference crashes on several inputs; that is exit 1 for its users
        return {"path": path, "ok": False, "crash": f"{type(exc).__name__}: {exc}"[:200]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ruleset", required=True)
    parser.add_argument("files", nargs="*")
    parser.add_argument("--stdin", action="store_true", help="read 'ruleset<TAB>path' lines from stdin")
    parser.add_argument("--package-checker-imports", action="store_true",
                        help="import mlperf_logging.package_checker first, as a package checker process does")
    args = parser.parse_args(argv)
    logging.disable(logging.CRITICAL)
    if args.package_checker_imports:
        import mlperf_logging.package_checker.package_checker  # noqa: F401 - its imports (numpy, scipy) are the cost
    jobs = [(args.ruleset, f) for f in args.files]
    if args.stdin:
        jobs += [tuple(line.rstrip("\n").split("\t", 1)) for line in sys.stdin if line.strip()]
    for ruleset, path in jobs:
        print(json.dumps(check_one(path, ruleset)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
