"""mlsubmit systems capture: a system description made from a capture of the host (mlperf-sysinfo), not typed.

The capture is made here through mlperf-sysinfo (`--sysinfo-config FILE`, the extra `mlsubmit[capture]`) or read
from a file made elsewhere (`--from FILE`). A POD's accelerator fields and counts come from the family facts
(`--pod-size`, `--m2000`), the status is spelled as the round requires, and what nothing knows is left empty and
listed. The description is checked with the round's schema and semantics before it is written to
DIR/<system-id>.json, atomically; one with errors is not written unless --draft. Exit 0 written, 1 errors,
2 unusable input (a partial capture without --draft included).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from mlsubmit import __version__
from mlsubmit.checker import policy_for, round_name
from mlsubmit.checker.policy.check_config import Flags
from mlsubmit.checker.systems.capture import Capture, parse_capture, read_capture
from mlsubmit.checker.systems.completion import Request as CaptureRequest
from mlsubmit.checker.systems.completion import build as build_description
from mlsubmit.checker.systems.completion import check_bytes as check_description_bytes
from mlsubmit.checker.systems.completion import field_order as description_fields
from mlsubmit.checker.systems.completion import pod_of
from mlsubmit.checker.systems.completion import render as render_description
from mlsubmit.checker.systems.host import capture_here
from mlsubmit.cli.output import emit
from mlsubmit.cli.rulesets import rulesets_for
from mlsubmit.core.errors import FatalError, UsageError
from mlsubmit.core.findings import Finding, Report, Severity
from mlsubmit.core.support.atomic import replacing
from mlsubmit.core.support.display_escape import notice

_SYSTEM_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,127}")  # one file name, no path, no hidden file


def _settings(pairs: list[str]) -> tuple[tuple[str, str], ...]:
    out = []
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"--set {pair!r}: give FIELD=VALUE")
        if any("\ud800" <= ch <= "\udfff" for ch in pair):  # bytes the locale could not decode
            raise UsageError(f"--set {pair!r}: not UTF-8 text; a system description holds text only")
        out.append((name.strip(), value.strip()))
    return tuple(out)


def _request(args: argparse.Namespace) -> CaptureRequest:
    if not _SYSTEM_ID.fullmatch(args.system_id):
        raise UsageError(f"--system-id {args.system_id!r}: letters, digits, '.', '_', '+' and '-' only (a file name)")
    if args.ruleset == "auto" and not args.dir.is_dir():
        raise UsageError(f"--ruleset auto: {args.dir} does not exist yet, so it states no round; give --ruleset X.Y.Z")
    ruleset = next(iter(rulesets_for(args.ruleset, [str(args.dir)])))
    for flag in ("pod_size", "m2000", "host_servers"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            raise UsageError(f"--{flag.replace('_', '-')} {value}: give a positive count")
    pod = pod_of(args.pod_size, args.m2000) if args.pod_size or args.m2000 else None
    return CaptureRequest(args.system_id, ruleset, pod, args.host_servers, args.status, _settings(args.settings))


def _read(args: argparse.Namespace) -> tuple[Capture | None, list[Finding]]:
    if args.from_file is not None:
        return read_capture(args.from_file, str(args.from_file))
    raw, version = capture_here(args.sysinfo_config, allow_partial=args.draft)
    notice(f"mlsubmit: captured this host with mlperf-sysinfo {version}")
    return parse_capture(raw, f"capture of this host ({args.sysinfo_config})")


def _refusal(found: list[Finding]) -> str:
    return "; ".join(f"{f.code} {f.path}{':' + str(f.line) if f.line else ''}: {f.message}"
                     for f in found if f.severity is Severity.ERROR)  # fmt: skip


def run(args: argparse.Namespace) -> int:
    request = _request(args)
    known = set(description_fields(request.ruleset))
    unknown = [name for name, _ in request.settings if name not in known]
    if unknown:
        raise UsageError(f"--set: {', '.join(map(repr, unknown))} is not a field of the {request.ruleset} schema")
    capture, found = _read(args)
    if capture is None:
        raise FatalError(f"cannot use the capture: {_refusal(found)}")
    if not capture.complete and not args.draft:
        raise FatalError(f"{capture.path}: {capture.partial_message}; capture every node again, or pass --draft")
    described = build_description(capture, request)
    dest = args.dir / f"{request.system_id}.json"
    raw = render_description(described.data)
    checked = _policed(check_description_bytes(raw, str(dest), request), dest, request.ruleset)
    _notes(described.filled, request)
    report = Report()
    report.add_file(capture.path, [*found, *described.findings])
    report.add_file(str(dest), checked)
    report.meta.update({"command": "systems capture", "ruleset": request.ruleset, "version": __version__})
    errors = [f for f in [*found, *described.findings, *checked] if f.severity is Severity.ERROR]
    to_fill = _fields_to_fill(errors)
    if errors and not args.draft:
        notice(f"mlsubmit: {dest} not written: the description has errors{to_fill} (--draft writes it anyway)")
    else:
        _write(dest, raw, force=args.force)
        if errors:
            notice(f"mlsubmit: {dest} is a draft with errors{to_fill}")
    return emit(report, args)


def _policed(checked: list[Finding], dest: Path, ruleset: str) -> list[Finding]:
    """The description's findings at the severities `mlsubmit check` gives them in DIR (the default profile and
    the project's mlsubmit.toml above it): what capture writes is what the check accepts, no stricter."""

    policy, _ = policy_for([str(dest)], Flags())
    report = Report()
    report.add_file(str(dest), checked)
    policy.apply(report, round_name(ruleset))
    return report.files[str(dest)]


def _fields_to_fill(errors: list[Finding]) -> str:
    """"; fill FIELD, ... with --set FIELD=VALUE" for the fields the errors point at ("" when none does)."""
    fields = list(dict.fromkeys(f.pointer[1:].split("/")[0] for f in errors if f.pointer and f.pointer != "/"))
    return f"; fill {', '.join(fields)} with --set FIELD=VALUE" if fields else ""


def _notes(filled: list[str], request: CaptureRequest) -> None:
    if request.pod is not None:
        pod = request.pod
        notice(f"mlsubmit: {pod.family} {pod.size} ({pod.machines} × {pod.machine}, {pod.nodes} node(s)) filled: "
               + ", ".join(filled))  # fmt: skip


def _write(dest: Path, raw: bytes, *, force: bool) -> None:
    """Write atomically; the same bytes already there are left alone, different ones only with --force."""
    try:
        if dest.is_symlink() or (dest.exists() and not dest.is_file()):
            raise FatalError(f"{dest} exists and is not a regular file; not replaced")
        if dest.is_file():
            if dest.read_bytes() == raw:
                notice(f"mlsubmit: {dest} unchanged")
                return
            if not force:
                raise FatalError(f"{dest} exists with other contents; --force replaces it")
        dest.parent.mkdir(parents=True, exist_ok=True)
        with replacing(dest, binary=True) as stream:  # whole or not at all; a plain file's permissions
            stream.write(raw)
    except OSError as exc:
        raise FatalError(f"cannot write {dest}: {exc.strerror or exc}") from None
    notice(f"mlsubmit: wrote {dest}")

