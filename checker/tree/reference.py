"""`--profile reference`: exactly what mlperf-logging's package checker (4.1.68) checks on an organisation folder.

It answers "will the official checker pass this?": an error here is something the package checker logs as ERROR
(it still exits 0), or an input on which it stops with a traceback (TREE024, then an error). What it checks, in its
order (package_checker.py): every systems/*.json has 33 keys; for every results/<system>/<benchmark>/ folder, the
system file's `division`, the benchmark name (unknown ones are skipped with a warning), the exact result-file count,
each log's compliance and the power checker's verdict on a power/ folder (checker/power/folder.py; one failing run
tolerated, four for unet3d), then, only when the system file says exactly "closed", the seed checker and (except
minigo) the RCP checker. Logs are not read again: their compliance verdict and facts come from the pipeline.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlsubmit.checker.base.targets import BenchFolder, OrgTree
from mlsubmit.checker.logs.facts import LogFacts
from mlsubmit.checker.power import folder as power
from mlsubmit.checker.rcp import verdict as rcp
from mlsubmit.checker.rounds import benchmarks
from mlsubmit.checker.rounds.division import reference_closed
from mlsubmit.checker.tree import params, seeds
from mlsubmit.checker.tree.folders import (
    bypass_flags,
    check_counts,
    check_olympic,
    holds_changed_path,
    listdir,
    prepared_folders,
    rcp_findings,
)
from mlsubmit.checker.tree.shared import listed_folders, prepare_rcp

from mlsubmit.core.codes import finding
from mlsubmit.core.findings import Finding, Severity
from mlsubmit.core.support import jsontext
from mlsubmit.core.support.names import did_you_mean
from mlsubmit.core.support.safe_io import SMALL_FILE, read_bounded

if TYPE_CHECKING:
    from mlsubmit.checker.base.options import CheckOptions

# Log-level findings on which the reference's compliance checker raises instead of judging the log.
# the codes the `reference-tree` check may emit (checker/engine/checks.py registers it)
CODES = frozenset({"LOG001", "LOG005", "POW001", "POW002", "POW003", "POW004", "POW018", "POW019", "RULE008",
                   "RULE009", "TREE002", "TREE003", "TREE004", "TREE007", "TREE008", "TREE014", "TREE015",
                   "TREE016", "TREE017", "TREE018", "TREE019", "TREE020", "TREE021", "TREE022", "TREE024",
                   "TREE027", "TREE028", "TREE046", "TREE047", "TREE048"})

CRASH_CODES = frozenset({"LOG001", "LOG005", "RULE008", "RULE009", "RULE010"})

REQUIRED_SYSTEM_FIELDS = (
    "submitter", "division", "status", "system_name", "number_of_nodes", "host_processors_per_node",
    "host_processor_model_name", "host_processor_core_count", "host_processor_vcpu_count", "host_processor_frequency",
    "host_processor_caches", "host_processor_interconnect", "host_memory_capacity", "host_storage_type",
    "host_storage_capacity", "host_networking", "host_networking_topology", "host_memory_configuration",
    "accelerators_per_node", "accelerator_model_name", "accelerator_host_interconnect", "accelerator_frequency",
    "accelerator_on-chip_memories", "accelerator_memory_configuration", "accelerator_memory_capacity",
    "accelerator_interconnect", "accelerator_interconnect_topology", "cooling", "hw_notes", "framework",
    "other_software_stack", "operating_system", "sw_notes",
)  # fmt: skip
# Joined with "," by the system description checker: anything but text there raises TypeError.
JOINED_FIELDS = (
    "submitter", "system_name", "host_processor_model_name", "host_processor_core_count", "accelerator_model_name",
    "accelerators_per_node", "framework",
)  # fmt: skip
STATUS_VALUES = ("Available on-premise", "Available cloud", "Research, Development, or Internal (RDI)", "Preview")


def crash_finding(path: str, why: str) -> Finding:
    return finding("TREE024", path, why, severity=Severity.ERROR)


def _load_json(path: Path) -> tuple[Any, str | None]:
    if not path.is_file():
        return None, "it is not a regular file"
    try:
        # the reference reads NaN and Infinity too; only depth and long integers stop it (as they stop json.load)
        return jsontext.loads(read_bounded(path, SMALL_FILE).decode("utf-8"), finite=False), None
    except OSError as exc:
        return None, f"cannot open it ({exc.strerror or type(exc).__name__})"
    except UnicodeDecodeError:
        return None, "it is not UTF-8 (UnicodeDecodeError)"
    except ValueError as exc:
        return None, f"it is not valid JSON (JSONDecodeError: {exc})"
    except RecursionError:
        return None, "it is nested too deeply to decode (RecursionError)"


def check_system_file(path: Path, shown: str, ruleset: str) -> list[Finding]:
    data, problem = _load_json(path)
    if problem:
        return [finding("TREE028", shown, problem), crash_finding(shown, f"system description checker: {problem}")]
    if not isinstance(data, (dict, list)):
        why = f"top level is a JSON {type(data).__name__} (TypeError)"
        return [finding("TREE028", shown, why), crash_finding(shown, f"system description checker: {why}")]
    out = []
    missing = [f for f in REQUIRED_SYSTEM_FIELDS if f not in data]
    if missing:
        out.append(finding("TREE027", shown, f"{len(missing)} required key(s) missing: {', '.join(missing)}"))
    if isinstance(data, dict):
        bad = [f for f in JOINED_FIELDS if f in data and not isinstance(data[f], str)]
        if bad:
            why = f"{', '.join(bad)} not text (TypeError when joined)"
            out += [finding("TREE028", shown, why), crash_finding(shown, f"system description checker: {why}")]
        major = int(ruleset.split(".")[0])
        if major >= 4 and "status" in data and data["status"] not in STATUS_VALUES:
            out.append(finding("TREE027", shown, f"status {data['status']!r} is not one of {', '.join(STATUS_VALUES)}"))
    return out


def check_systems(org: OrgTree, ruleset: str) -> list[Finding]:
    out: list[Finding] = []
    folder = org.sub("systems")
    for name in listdir(folder):
        if not name.endswith(".json") or name.startswith("."):
            continue  # the reference's glob('*.json') skips hidden names
        shown = org.shown("systems", name)
        if (folder / name).is_file():
            out += check_system_file(folder / name, shown, ruleset)
        elif not (folder / name).is_dir():  # a FIFO or device: the reference would block reading it
            out += [finding("TREE028", shown, "not a regular file"),
                    crash_finding(shown, "opening it would block or fail")]
    return out


def reference_division(org: OrgTree, folder: BenchFolder) -> tuple[str, Finding | None]:
    """'closed' or '' as the package checker decides it, or the crash it meets opening the system file."""
    shown = org.shown("systems", folder.system + ".json")
    path = org.sub("systems", folder.system + ".json")
    if not path.is_file():
        return "", crash_finding(folder.shown, f"no system file {shown} (FileNotFoundError)")
    data, problem = _load_json(path)
    if problem:
        return "", crash_finding(folder.shown, f"reading {shown}: {problem}")
    if not isinstance(data, dict) or "division" not in data:
        return "", crash_finding(folder.shown, f"{shown} has no 'division' (KeyError)")
    return ("closed" if reference_closed(data["division"]) else ""), None


def _unknown_entries(folder: BenchFolder) -> list[Finding]:
    extra = [n for n in folder.others if n != "package_checker_params"] + list(folder.nested_logs)
    if not extra:
        return []
    shown = ", ".join(sorted(extra))
    return [finding("TREE004", folder.shown, f"entries that are not result_*.txt: {shown}")]


def check_folder(
    org: OrgTree, folder: BenchFolder, facts: Mapping[str, LogFacts], options: CheckOptions, system_flags: set[str]
) -> list[Finding]:
    division, crashed = reference_division(org, folder)
    if crashed:
        return [crashed]
    if folder.name not in benchmarks.allowed(options.ruleset):
        why = f"the reference skips {folder.name!r}" + did_you_mean(folder.name, benchmarks.allowed(options.ruleset))
        return [finding("TREE002", folder.shown, why, severity=Severity.WARNING)]
    runs = folder.facts(facts)
    out = [*check_counts(folder), *_unknown_entries(folder)]
    for run in runs:
        raising = sorted(set(run.error_codes) & CRASH_CODES)
        if raising:
            out.append(crash_finding(run.path, f"compliance checker raises on this log ({', '.join(raising)})"))
    powered, power_failed = power.check_folder(org, folder, runs, as_reference=True)
    out += [*powered, *check_olympic(folder, runs, power_failed)]
    if division != "closed":
        return out
    exact, _ = bypass_flags(folder.path)
    flags = exact | system_flags
    if "seed-checker-bypass" not in flags:
        report = seeds.check_seeds(runs)
        out += report.findings
    if benchmarks.has_rcp(folder.name):
        result = rcp.evaluate_cached(folder.name, options.ruleset, runs, bypass="rcp-bypass" in flags, closed=True,
                                     cache_dir=options.cache_dir, train_samples=params.BERT_TRAIN_SAMPLES in flags)
        if result.crash:
            out.append(crash_finding(folder.shown, f"RCP checker: {result.message}"))
        else:
            out += rcp_findings(folder, result)
    return out


def check(org: OrgTree, facts: Mapping[str, LogFacts], options: CheckOptions) -> list[Finding]:
    out = check_systems(org, options.ruleset)
    if not org.sub("results").is_dir():
        return [*out, crash_finding(org.display, "no results/ folder (FileNotFoundError listing it)")]
    by_system: dict[str, list[BenchFolder]] = {}
    for folder in prepared_folders(org):
        by_system.setdefault(folder.system, []).append(folder)
    org_params = params.read_org_params(org.root, org.shown(params.NAME), options.ruleset)  # the verify script's
    out += org_params.findings
    for system, folders in by_system.items():
        system_flags, _ = bypass_flags(org.sub("results", system))
        for folder in folders:
            if holds_changed_path(folder, options):
                out += check_folder(org, folder, facts, options, system_flags | org_params.flags)
    return out


def prepare(org: OrgTree, options: CheckOptions) -> None:
    """The folder listing and the RCP statistics of the benchmarks whose system file says closed, beside the log
    checks (the pipeline runs this only with a pool, so a run answered from --cache skips it)."""
    prepare_rcp(org, listed_folders(org), options)
