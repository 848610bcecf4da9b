"""Split corpus trees into one small organisation per results folder, for folder-by-folder differential tests.

Each `results/<system>/<benchmark>/` folder of every `training_results_vX.Y/<org>/` tree under CORPUS becomes
OUT/training_results_vX.Y/<org>--<system>--<benchmark>/ holding that folder (copied whole: logs, power/,
package_checker_params) and its system file, nothing else. The reference package checker and `mlsubmit check`
then judge each folder alone, so a verdict is a folder's, not a tree's. Prints one line per folder:
`ruleset<TAB>path` (the input tools/reference_package_batch.py reads).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path


def folders(corpus: Path) -> list[tuple[str, Path, Path]]:
    """(ruleset, results folder, system file) for every results folder of every tree, in a stable order."""
    out = []
    for rnd in sorted(corpus.glob("training_results_v*")):
        ruleset = rnd.name.split("_v", 1)[1] + ".0"
        for folder in sorted(rnd.glob("*/results/*/*")):
            if folder.is_dir():
                system = folder.parent.name
                out.append((ruleset, folder, folder.parent.parent.parent / "systems" / f"{system}.json"))
    return out


def split(corpus: Path, out: Path) -> list[tuple[str, Path, Path]]:
    """Write the one-folder organisations; returns (ruleset, original folder, new organisation)."""
    made = []
    for ruleset, folder, system_file in folders(corpus):
        system, bench, org = folder.parent.name, folder.name, folder.parent.parent.parent
        dest = out / org.parent.name / f"{org.name}--{system}--{bench}"
        shutil.copytree(folder, dest / "results" / system / bench, symlinks=True)
        if system_file.is_file():
            (dest / "systems").mkdir()
            shutil.copy2(system_file, dest / "systems" / system_file.name)
        made.append((ruleset, folder, dest))
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("out", type=Path, help="an empty or missing folder")
    args = parser.parse_args(argv)
    for ruleset, _, org in split(args.corpus, args.out):
        sys.stdout.write(f"{ruleset}\t{org}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
