"""Examples of the codes a single run log shows: reading it (LOG), mlperf-logging's rule files (RULE), a log checked
alone (POL001). Each negative is the passing closed BERT run of `closed_run` with one fault; its positive is the
same run without it."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from dataclasses import replace

from examplelog import MINUTE, START_MS, Example, Log, Raw, Record, closed_run

CHECK_1_0 = ["check", "--ruleset", "1.0.0"]


def pair(code: str, name: str, shows: str, fault: Callable[[Log], Log], argv: list[str] | None = None,
         run: Callable[[], Log] = closed_run) -> Example:
    """An example whose negative is `fault` applied to `run()` and whose positive is `run()` as it is."""
    negative = fault(run())
    return Example(code, name, shows, argv or CHECK_1_0, negative.render(), run().render(), line=negative.line())


def _mllog_line(record: dict[str, object]) -> bytes:
    """A record as mllog's line format carries it, for records mllog itself would never write."""
    return b":::MLLOG " + json.dumps(record).encode("utf-8")


def _seed_record(**changes: object) -> dict[str, object]:
    record: dict[str, object] = {"namespace": "", "time_ms": START_MS, "event_type": "POINT_IN_TIME",
                                 "key": "seed", "value": 42, "metadata": {"file": "make_examples.py", "lineno": 1}}
    record.update(changes)
    return {k: v for k, v in record.items() if v is not None}


def reading() -> list[Example]:
    seed = _mllog_line(_seed_record())
    cut = seed[: seed.index(b'"value"')]
    no_metadata = _mllog_line(_seed_record(metadata=None))
    text_time = _mllog_line(_seed_record(time_ms="at noon"))
    twice = seed.replace(b'"value": 42', b'"value": 42, "value": 7')
    return [
        pair("LOG002", "nul-bytes", "a line of NUL bytes (a core dump or a bad copy) among the records",
             lambda log: log.after("seed", Raw(b"step 12\x00\x00\x00\x00 loss 3.1"))),
        pair("LOG003", "latin-1", "job output in latin-1 (a stray 0xe9) between the records, not UTF-8",
             lambda log: log.after("seed", Raw(b"dataset cach\xe9 in /tmp"))),
        pair("LOG004", "cut-record", "the seed record cut off mid-way: the text after :::MLLOG is not JSON",
             lambda log: log.put(log.find("seed"), Raw(cut))),
        pair("LOG005", "no-metadata", "the seed record without its metadata field",
             lambda log: log.put(log.find("seed"), Raw(no_metadata))),
        pair("LOG006", "text-time", "the seed record's time_ms is text, not a number",
             lambda log: log.put(log.find("seed"), Raw(text_time))),
        pair("LOG007", "repeated-key", "the seed record's JSON object gives `value` twice",
             lambda log: log.put(log.find("seed"), Raw(twice))),
        pair("LOG008", "nan-accuracy", "an evaluation that logs NaN (the run diverged); mllog writes it as NaN",
             lambda log: log.insert(log.find("eval_accuracy"),
                                    Record("event", "eval_accuracy", float("nan"), {"epoch_num": 1},
                                           t=START_MS + 24 * MINUTE))),
        Example("LOG009", "job-output", "raw job output of a run that never reached mllog: no :::MLLOG record",
                ["check", "--ruleset", "1.0.0"], b"Starting training\nstep 1 loss 9.1\nstep 2 loss 8.7\n",
                b"Starting training\nstep 1 loss 9.1\n" + closed_run().render() + b"step 2 loss 8.7\n"),
        _long_line(),
        pair("LOG011", "stop-before-start", "run_stop stamped a minute before run_start (a clock or hand edit)",
             _stop_early),
    ]


def _long_line() -> Example:
    """A progress bar without a newline, then the seed record, on one line over the reader's 16 MiB limit, in
    gzip-compressed raw output (the reader expands it) so that the committed file stays small; mtime 0 keeps the
    compressed bytes the same on every run. 18 MiB, not just over 16: the reader reads 1 MiB at a time and finds
    a line too long only when no newline ends it in the chunk that takes it past 16 MiB."""
    seed = _mllog_line(_seed_record())
    negative = closed_run().put(closed_run().find("seed"), Raw(b"=" * (18 << 20) + b" " + seed))
    positive = closed_run().put(closed_run().find("seed"), Raw(b"=" * 64 + b" " + seed))
    return Example("LOG010", "long-line", "an 18 MiB progress bar and the seed record on one line of gzip-compressed "
                   "job output: the line is skipped, the record unread", CHECK_1_0,
                   gzip.compress(negative.render(), mtime=0), gzip.compress(positive.render(), mtime=0), ext="gz",
                   line=negative.line())


def _stop_early(log: Log) -> Log:
    stop = log.record("run_stop")
    stop.t = log.record("run_start").t - MINUTE
    log.mark = log.find("run_stop")
    return log


def _twice(org: str) -> Callable[[Log], Log]:
    """submission_org logged again before train_samples; the rules report the key at its first record."""

    def fault(log: Log) -> Log:
        log.insert(log.find("train_samples"), Record("event", "submission_org", org))
        log.mark = log.find("submission_org")
        return log

    return fault


def rules() -> list[Example]:
    out = [
        pair("RULE001", "status", "submission_status `available` is not one of 1.0.0's cloud, onprem, preview, "
             "research", lambda log: log.set("submission_status", "available")),
        pair("RULE002", "two-orgs", "submission_org (EXACTLY_ONE) logged twice with different values: reported "
             "at the first", _twice("Graphcore Ltd")),
        pair("RULE003", "same-org-twice", "submission_org logged twice with the same value: a warning, reported at "
             "the first", _twice("Graphcore")),
        pair("RULE004", "not-converged", "the only evaluation stays under BERT's 0.720 target",
             _not_converged),
        pair("RULE005", "tensor-missing", "RNN-T's END check: one of the 7 initialised tensors is not logged "
             "(reported without a line)", _drop_tensor, CHECK_1_0, lambda: closed_run("rnnt")),
        pair("RULE006", "text-count", "gradient_accumulation_steps is text: the rule's `v['value'] > 0` raises",
             lambda log: log.set("gradient_accumulation_steps", "one")),
        pair("RULE008", "division-unknown", "submission_division names no rule file: the rules would ask for "
             "training_1.0.0/close_common.yaml", lambda log: log.set("submission_division", "close")),
        pair("RULE010", "division-path", "submission_division names a path: the rules would load "
             "training_1.0.0/../closed_common.yaml", lambda log: log.set("submission_division", "../closed")),
        pair("RULE009", "unknown-benchmark", "submission_benchmark names no benchmark of ruleset 1.0.0",
             lambda log: log.set("submission_benchmark", "gpt3")),
        replace(pair("TREE049", "mllog-only", "a 6.1 result file of :::MLLOG records alone: 6.1 asks for the "
                     "framework's whole output (reported without a line)", _mllog_only, ["check", "--ruleset", "6.1.0"],
                     lambda: closed_run("llama31_8b", "6.1.0").after("init_start", Raw(b"[NeMo I] Experiments "
                                                                                       b"logged at /results"))),
                result_file=True),
        pair("POL001", "alone", "a run that missed its target, checked outside a tree: what its folder will "
             "make of it (reported without a line)", _alone),
    ]
    return out


def _not_converged(log: Log) -> Log:
    log.set("eval_accuracy", 0.70)
    log.record("run_stop").meta = {"status": "aborted"}
    return log


def _mllog_only(log: Log) -> Log:
    del log.entries[log.find("init_start") + 1]
    log.mark = None
    return log


def _alone(log: Log) -> Log:
    _not_converged(log).mark = None
    return log


def _drop_tensor(log: Log) -> Log:
    index = log.find("weights_initialization")
    del log.entries[index]
    log.mark = None
    return log
