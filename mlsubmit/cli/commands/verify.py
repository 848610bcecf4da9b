"""mlsubmit verify ARCHIVE: checksums, decryption, a refusing unpack, the manifest, and the full check."""

from __future__ import annotations

import argparse

from mlsubmit import __version__
from mlsubmit.checker import mlperf_logging_version
from mlsubmit.cli.output import emit
from mlsubmit.cli.progress import tracker
from mlsubmit.cli.rulesets import validate_ruleset
from mlsubmit.cli.verify_official import run as official
from mlsubmit.core.errors import UsageError
from mlsubmit.core.support.display_escape import notice
from mlsubmit.submission.verify import verify


def run(args: argparse.Namespace) -> int:
    if args.official:
        return official(args)
    if args.more:
        raise UsageError("several ARCHIVEs are for --official (the uploads of one organisation)")

    ruleset = validate_ruleset(args.ruleset) if args.ruleset else None
    result = verify(args.archive, args.passphrase_file, ruleset, max(0, args.jobs), progress=tracker)
    if result.ruleset and not ruleset:
        validate_ruleset(result.ruleset)
    result.report.meta.update({"command": "verify", "ruleset": result.ruleset or "", "version": __version__,
                               "mlperf_logging": mlperf_logging_version()})
    code = emit(result.report, args)
    verdict = "FAILED" if code else "OK"
    sums = ", ".join(result.checked) or "none"
    notice(f"mlsubmit: {args.archive}: {verdict} ({result.files} file(s) unpacked; checksums matched: {sums})")
    return code
