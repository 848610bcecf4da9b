"""mlsubmit package CONFIG.toml: raw runs, system files and git revisions -> submission tree (and archive)."""

from __future__ import annotations

import argparse
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from mlsubmit import __version__
from mlsubmit.checker import mlperf_logging_version, policy_for, read_waivers
from mlsubmit.checker.policy.waivers import project_configs
from mlsubmit.cli.commands.check import flags_of
from mlsubmit.cli.output import emit
from mlsubmit.cli.progress import tracker
from mlsubmit.cli.rulesets import validate_ruleset
from mlsubmit.core.codes import finding
from mlsubmit.core.errors import UsageError
from mlsubmit.core.findings import Finding
from mlsubmit.core.support.display_escape import notice
from mlsubmit.submission import encryption as enc
from mlsubmit.submission.build import PackageOptions, package
from mlsubmit.submission.package_config import load_config
from mlsubmit.submission.split import package_split, upload_name

if TYPE_CHECKING:
    from mlsubmit.checker import Waiver
    from mlsubmit.checker.policy.check_config import Policy
    from mlsubmit.submission.package_config import PackageConfig


def run(args: argparse.Namespace) -> int:
    _check_usage(args)
    cfg = load_config(args.config)
    validate_ruleset(cfg.ruleset)
    passphrase, notes = _passphrase(args)
    policy, policy_notes = _policy(args, cfg.path)
    policy = replace(policy, waivers=tuple(_waivers(args, cfg.path.parent)))  # one value, read before the build
    options = PackageOptions(archive=args.archive, passphrase=passphrase, kdf=args.key_derivation,
                             notes=(*notes, *policy_notes), allow_findings=args.allow_findings,
                             jobs=max(0, args.jobs), strict=args.strict, progress=tracker, policy=policy)
    return _run(cfg, options, args)


def _policy(args: argparse.Namespace, config: Path) -> tuple[Policy, tuple[Finding, ...]]:
    """The policy of the nearest mlsubmit.toml above the package config, with --profile/--select/--ignore/
    --severity over it: the build is gated as `check` gates the project. `[[check.overrides]]` name the project's
    paths, which the build does not have: they are left out, and POL002 says so."""

    policy, where = policy_for([str(config.parent)], flags_of(args))
    by_path = [layer for layer in policy.layers if layer.paths]
    if not by_path:
        return policy, ()
    kept = replace(policy, layers=tuple(layer for layer in policy.layers if not layer.paths))
    note = finding("POL002", str(where), f"{len(by_path)} [[check.overrides]] table(s) not applied to the build's "
                   "check: their paths are the project's, not the packaged tree's")  # fmt: skip
    return kept, (note,)


def _waivers(args: argparse.Namespace, folder: Path) -> list[Waiver]:
    """The waivers of the nearest mlsubmit.toml above the config and of each --waivers FILE (globs relative to the
    file's own folder), named relative to the config's folder (as the manifest, which holds no absolute path,
    records them)."""

    files = [] if args.no_project_waivers else [(c, c.parent) for c in project_configs([str(folder)])]
    files += [(Path(f), Path(f).absolute().parent) for f in args.waivers]
    return [w for file, base in files
            for w in read_waivers(file, base=base, shown=os.path.relpath(file, folder).replace(os.sep, "/"))]


def _check_usage(args: argparse.Namespace) -> None:
    if args.encrypt and not args.archive:
        raise UsageError("--encrypt needs --archive")
    if args.encrypt and args.passphrase_file is None:
        raise UsageError("--encrypt needs --passphrase-file FILE (a passphrase is never read from the command line)")
    if args.passphrase_file is not None and not args.encrypt:
        raise UsageError("--passphrase-file is only used with --encrypt")
    if args.generate_passphrase and not args.encrypt:
        raise UsageError("--generate-passphrase is only used with --encrypt")
    if args.key_derivation != "openssl" and not args.encrypt:
        raise UsageError("--key-derivation is only used with --encrypt")


def _passphrase(args: argparse.Namespace) -> tuple[bytes | None, tuple[Finding, ...]]:
    """The passphrase (read, or generated into a new 0600 file) and a warning when others can read its file."""
    if not args.encrypt:
        return None, ()
    if args.generate_passphrase:
        phrase = enc.generate_passphrase(args.passphrase_file)
        notice(f"mlsubmit: wrote a new random passphrase to {args.passphrase_file} (mode 0600)")
        return phrase, ()
    phrase = enc.read_passphrase(args.passphrase_file)
    if not enc.readable_by_others(args.passphrase_file):
        return phrase, ()
    note = finding("PKG048", str(args.passphrase_file),
                   "the passphrase file is readable by group or others (chmod 600 it, or let "
                   "--generate-passphrase write a new one)")
    return phrase, (note,)


def _run(cfg: PackageConfig, options: PackageOptions, args: argparse.Namespace) -> int:
    if cfg.uploads > 1:
        return _run_split(cfg, options, args)
    result = package(cfg, options)
    result.report.meta.update({"command": "package", "ruleset": cfg.ruleset, "version": __version__,
                               "mlperf_logging": mlperf_logging_version()})
    code = emit(result.report, args)
    counts = result.report.counts()
    if result.finalised:
        notice(f"mlsubmit: packaged {result.results} result file(s) and {result.implementation_files} "
               f"implementation file(s) into {result.out}")
        for path in result.outputs:
            notice(f"mlsubmit: wrote {path}")
        if options.passphrase is not None and result.outputs:
            line = enc.open_command(options.kdf, str(result.outputs[0]), "plain.tar.gz", str(args.passphrase_file))
            notice(f"mlsubmit: to open it: {line}")
    else:
        what = f"{counts['error']} error(s)" + (f", {counts['warning']} warning(s) (--strict)" if args.strict else "")
        notice(f"mlsubmit: {what}: the tree was NOT written to {result.out} "
               "(fix them, or give --allow-findings to keep it anyway)")
    return code


def _run_split(cfg: PackageConfig, options: PackageOptions, args: argparse.Namespace) -> int:
    """`uploads = N`: the N uploads and the whole, one build (mlsubmit.submission.split)."""
    result = package_split(cfg, options)
    result.report.meta.update({"command": "package", "ruleset": cfg.ruleset, "version": __version__,
                               "mlperf_logging": mlperf_logging_version(), "uploads": str(cfg.uploads)})
    code = emit(result.report, args)
    if result.finalised:
        for number, done in enumerate(result.uploads, 1):
            notice(f"mlsubmit: upload {number}: packaged {done.results} result file(s) and {done.implementation_files}"
                   f" implementation file(s) into {result.out / upload_name(cfg.org, number)}")
        notice(f"mlsubmit: the {cfg.uploads} uploads together were checked as {cfg.org}")
        for path in result.outputs:
            notice(f"mlsubmit: wrote {path}")
    else:
        notice(f"mlsubmit: errors in an upload or in the uploads together: nothing was written to {result.out} "
               "(fix them, or give --allow-findings to keep it anyway)")
    return code
