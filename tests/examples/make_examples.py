"""Write tests/examples/: a negative and a positive example file per finding code a single file shows, and
index.yaml, what each pair shows and where the negative's finding must be reported.

    .venv/bin/python tests/examples/make_examples.py           # (re)write the files
    .venv/bin/python tests/examples/make_examples.py --check   # exit 1 if a committed file differs

Run logs are written with mlperf_logging.mllog (examplelog.py says how its caller metadata is pinned); system
descriptions and waiver files are written as text. test_examples.py holds the committed files equal to this output.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Run as a script, the example modules sit beside this file and the fixtures one folder up (as under pytest).
for folder in (HERE, HERE.parent):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import yaml  # noqa: E402
from cases_advice import advice  # noqa: E402
from cases_config import captures, waivers  # noqa: E402
from cases_logs import reading, rules  # noqa: E402
from cases_systems import systems  # noqa: E402
from examplelog import Example  # noqa: E402

HEADER = """\
# What each example file of tests/examples/ shows, written by make_examples.py (edit that, then run it).
# Per code: the command and options the file is checked with ({file} is the file, {tmp} a folder of the test's
# own), the negative file and the line (or JSON pointer) where the code must be reported, and the positive file,
# where the code must be absent.
# Codes no single file shows are in not_file_shaped.yaml. index.schema.json is this file's schema.
"""


class _Dumper(yaml.SafeDumper):
    """Writes every argv in full where it is used, not as an anchor and aliases."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def examples() -> list[Example]:
    return [*reading(), *rules(), *advice(), *systems(), *waivers(), *captures()]


def file_name(example: Example) -> str:
    if example.result_file:
        return f"{example.code}-{example.name}/result_0.txt"
    return f"{example.code}-{example.name}.{example.ext}"


def entry(example: Example) -> dict[str, object]:
    where: dict[str, object] = {"file": f"negative/{file_name(example)}"}
    if example.pointer is not None:
        where["pointer"] = example.pointer
    else:
        where["line"] = example.line
    return {"shows": example.shows, "argv": example.argv, "negative": where,
            "positive": {"file": f"positive/{file_name(example)}"}}


def outputs() -> dict[str, bytes]:
    """Every file this script writes, by its path under tests/examples/."""
    out: dict[str, bytes] = {}
    index: dict[str, object] = {}
    for example in sorted(examples(), key=lambda e: e.code):
        if example.code in index:
            raise ValueError(f"{example.code} has two examples")
        index[example.code] = entry(example)
        out[f"negative/{file_name(example)}"] = example.negative
        out[f"positive/{file_name(example)}"] = example.positive
    text = yaml.dump(index, Dumper=_Dumper, sort_keys=False, width=120, default_flow_style=None)
    out["index.yaml"] = (HEADER + text).encode("utf-8")
    return out


def _content(name: str, data: bytes) -> bytes:
    """What a file holds: a gzip file's expanded bytes, as zlib builds may compress the same bytes differently."""
    return gzip.decompress(data) if name.endswith(".gz") else data


def stale(root: Path = HERE) -> list[str]:
    """The files that differ from what this script writes, and example files it does not write."""
    want = outputs()
    differ = [name for name, data in want.items() if not (root / name).is_file()
              or _content(name, (root / name).read_bytes()) != _content(name, data)]
    extra = [str(p.relative_to(root)) for side in ("negative", "positive") for p in sorted((root / side).rglob("*"))
             if p.is_file() and str(p.relative_to(root)) not in want]
    return differ + extra


def write(root: Path = HERE) -> None:
    want = outputs()
    for side in ("negative", "positive"):
        (root / side).mkdir(parents=True, exist_ok=True)
        for old in sorted((root / side).rglob("*"), reverse=True):  # files before the folders holding them
            if str(old.relative_to(root)) not in want and not any(n.startswith(f"{old.relative_to(root)}/")
                                                                  for n in want):
                old.rmdir() if old.is_dir() else old.unlink()
    for name, data in want.items():
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_bytes(data)


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        differ = stale()
        for name in differ:
            print(f"{name}: differs from what make_examples.py writes")
        return 1 if differ else 0
    if argv:
        print(__doc__)
        return 2
    write()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
