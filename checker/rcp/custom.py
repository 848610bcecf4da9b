"""RCPs given on the command line (`check --custom-rcps FILE`), as mlperf-logging's RCP checker takes them.

`python -m mlperf_logging.rcp_checker --custom_rcps FILE` loads FILE with `json.load` and uses its records instead
of the shipped `rcps_<benchmark>.json` (RCPs submitted after the deadline, as the rules allow, are checked this way;
the package checker itself has no such option). The file has the shipped files' shape: an object of records, each
with "Benchmark", "BS", "Hyperparams" and its runs: "samples to converge" for llama2_70b_lora and flux1,
"Epochs to converge" for the others (the reference reads only that key, so the other one is refused). Here a
benchmark's records replace the shipped ones for the folders of that benchmark only, since the reference's checker
is run on one folder at a time; other benchmarks keep the shipped RCPs.
"""

from __future__ import annotations

import json
import math
from typing import Any

from mlsubmit.checker.rcp.verdict import runs_key

from mlsubmit.core.support import jsontext


class CustomRcpError(ValueError):
    """The file is not an RCP file the reference's checker could use."""


def parse(text: str) -> dict[str, dict[str, Any]]:
    """The records of an RCP file, or CustomRcpError naming the first thing wrong (a JSON error's line)."""
    try:  # the one loader of JSON we did not write: nesting bounded before decoding, numbers finite
        data = jsontext.loads(text)
    except jsontext.JsonLimitError as exc:
        raise CustomRcpError(f"not JSON an RCP file can hold: {exc}") from None
    if not isinstance(data, dict) or not data:
        raise CustomRcpError("an RCP file is a JSON object of records, e.g. {\"bert_ref_4096\": {...}}")
    for name, record in data.items():
        _check_record(name, record)
    return data


def _check_record(name: str, record: Any) -> None:
    if not isinstance(record, dict):
        raise CustomRcpError(f"record {name!r} is not an object")
    if not isinstance(record.get("Benchmark"), str):
        raise CustomRcpError(f"record {name!r} has no \"Benchmark\" name")
    bs = record.get("BS")
    if not isinstance(bs, int) or isinstance(bs, bool) or bs <= 0:
        raise CustomRcpError(f"record {name!r}: \"BS\" is not a positive integer")
    if "Hyperparams" not in record:
        raise CustomRcpError(f"record {name!r} has no \"Hyperparams\"")
    key = runs_key(record["Benchmark"])
    if key not in record:
        raise CustomRcpError(f"record {name!r} has no {key!r} (the key of {record['Benchmark']}'s runs)")
    values = record[key]
    if not isinstance(values, list) or not values or not all(_finite(v) for v in values):
        raise CustomRcpError(f"record {name!r}: the runs to converge are not a list of numbers")


def for_benchmark(text: str | None, benchmark: str) -> str | None:
    """The file the reference is given for a folder of `benchmark` (`text` a file `parse` accepts): that
    benchmark's records, or None for the shipped RCPs."""
    if text is None:
        return None
    mine = {name: r for name, r in parse(text).items() if r.get("Benchmark") == benchmark}
    return json.dumps(mine, sort_keys=True) if mine else None


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
