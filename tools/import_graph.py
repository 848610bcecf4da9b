"""Figures of the project's import graph, read from the source (nothing of it is imported or run).

    python tools/import_graph.py [ROOT]        # ROOT: a checkout (default: this one)

Each import of one project module by another is an edge, of one of three kinds:
- `top`: at module level, run when the module is imported;
- `lazy`: inside a function, run when it is called (named start-up costs);
- `typing`: under `if TYPE_CHECKING:`, never run.

It prints the modules and edges of each kind, the import cycles (strongly connected groups of more than one module)
of the import-time graph (top), of the run-time graph (top + lazy) and of every edge, and the back-edges: run-time
edges from a layer to a higher one, by the layers of pyproject.toml's import-linter contracts (the package layers,
and those inside the checker). The folders of the wheel's package-dir map to their import names (checker/ is
mlsubmit.checker, and so on).
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

FOLDERS = {"mlsubmit": "mlsubmit", "checker": "mlsubmit.checker", "submission": "mlsubmit.submission"}
PACKAGE_LAYERS = ["mlsubmit.cli", "mlsubmit.submission|mlsubmit.report", "mlsubmit.formats", "mlsubmit.checker",
                  "mlsubmit.core"]
CHECKER_LAYERS = ["review", "engine", "policy", "tree", "power|systems|hygiene", "rcp", "hyperparameters", "rounds",
                  "rules", "base", "upstream", "logs"]

Edge = tuple[str, str, str]  # importer, imported, kind


def modules(root: Path) -> dict[str, Path]:
    out = {}
    for folder, name in FOLDERS.items():
        for path in sorted((root / folder).rglob("*.py")):
            parts = list(path.relative_to(root / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([name, *parts])] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple[str, str]]:
    """(imported name, kind) of every import in the module's tree."""

    def visit(node: ast.AST, kind: str) -> Iterator[tuple[str, str]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for sub in child.body:
                    yield from visit_one(sub, "typing")
                for sub in child.orelse:
                    yield from visit_one(sub, kind)
                continue
            yield from visit_one(child, kind)

    def visit_one(node: ast.AST, kind: str) -> Iterator[tuple[str, str]]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, kind
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, module, is_package)
            for alias in node.names:  # a submodule, else a name of the module `base`
                yield f"{base}.{alias.name}" if base else alias.name, kind
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield from visit(node, "typing" if kind == "typing" else "lazy")
        else:
            yield from visit(node, kind)

    yield from visit(tree, "top")


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[: len(parts) - node.level + 1]
    return ".".join([*parts, *([node.module] if node.module else [])])


def edges(root: Path) -> tuple[set[str], set[Edge]]:
    found = modules(root)
    out: set[Edge] = set()
    for name, path in found.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for target, kind in _imports(tree, name, path.name == "__init__.py"):
            while target and target not in found:  # `from a.b import c`: c a module, else a.b
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add((name, target, kind))
    strongest = {"top": 0, "lazy": 1, "typing": 2}
    best: dict[tuple[str, str], str] = {}
    for a, b, kind in out:
        if (a, b) not in best or strongest[kind] < strongest[best[(a, b)]]:
            best[(a, b)] = kind
    return set(found), {(a, b, kind) for (a, b), kind in best.items()}


def cycles(nodes: set[str], pairs: set[tuple[str, str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (scipy's, a dev dependency)."""
    from scipy.sparse import coo_matrix  # type: ignore[import-untyped]
    from scipy.sparse.csgraph import connected_components  # type: ignore[import-untyped]

    names = sorted(nodes)
    at = {name: i for i, name in enumerate(names)}
    rows, cols = [at[a] for a, _ in pairs], [at[b] for _, b in pairs]
    graph = coo_matrix(([1] * len(rows), (rows, cols)), shape=(len(names), len(names)))
    _, labels = connected_components(graph, directed=True, connection="strong")
    groups: dict[int, list[str]] = defaultdict(list)
    for name, label in zip(names, labels, strict=True):
        groups[int(label)].append(name)
    return sorted((g for g in groups.values() if len(g) > 1), key=lambda g: (-len(g), g))


def _layer(module: str, layers: list[str], prefix: str) -> int | None:
    for i, entry in enumerate(layers):
        for name in entry.split("|"):
            full = prefix + name
            if module == full or module.startswith(full + "."):
                return i
    return None


def back_edges(found: set[Edge]) -> list[Edge]:
    """Run-time edges from a lower layer to a higher one (a smaller index is higher)."""
    out = []
    for a, b, kind in sorted(found):
        if kind == "typing":
            continue
        for layers, prefix in ((PACKAGE_LAYERS, ""), (CHECKER_LAYERS, "mlsubmit.checker.")):
            la, lb = _layer(a, layers, prefix), _layer(b, layers, prefix)
            if la is not None and lb is not None and lb < la:
                out.append((a, b, kind))
                break
    return out


def main(argv: list[str]) -> int:
    root = Path(argv[1] if len(argv) > 1 else Path(__file__).resolve().parents[1])
    nodes, found = edges(root)
    kinds: dict[str, int] = defaultdict(int)
    for _, _, kind in found:
        kinds[kind] += 1
    print(f"modules {len(nodes)}; edges {len(found)}: top {kinds['top']}, lazy {kinds['lazy']}, "
          f"typing {kinds['typing']}")
    loading = cycles(nodes, {(a, b) for a, b, k in found if k == "top"})
    runtime = cycles(nodes, {(a, b) for a, b, k in found if k != "typing"})
    print(f"import-time cycles {len(loading)} (largest {max(map(len, loading), default=0)} modules)")
    every = cycles(nodes, {(a, b) for a, b, _ in found})
    print(f"run-time cycles, counting imports inside functions {len(runtime)} (largest "
          f"{max(map(len, runtime), default=0)} modules)")
    for group in runtime:
        print("  " + " ".join(group))
    print(f"cycles counting type-only imports {len(every)} (largest {max(map(len, every), default=0)} modules)")
    for group in every[:3]:
        print("  " + " ".join(group))
    back = back_edges(found)
    print(f"run-time back-edges across layers {len(back)}")
    for a, b, kind in back:
        print(f"  {a} -> {b} ({kind})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
