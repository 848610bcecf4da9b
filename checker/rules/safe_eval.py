"""Compile rule snippets from mlperf-logging's YAML into code that can only do what a whitelist allows.

The rule files are Python text that mlperf-logging runs with `eval`/`exec` and full builtins. We parse each
snippet with `ast`, walk every node, and refuse the snippet unless every node type, name, attribute and call is
on the lists below. Accepted trees are compiled once and run with a builtins table holding only the whitelisted
callables; `**` and `*` go through guards so a huge log value cannot exhaust memory or time.
"""

from __future__ import annotations

import ast
import copy
import functools
import math
import string
from collections.abc import Callable
from dataclasses import dataclass
from types import CodeType
from typing import Any, Literal

Mode = Literal["eval", "exec"]

_NODES: frozenset[type[ast.AST]] = frozenset(
    {
        ast.Expression, ast.Module, ast.Expr, ast.Assign, ast.AugAssign, ast.If, ast.For, ast.Pass,
        ast.IfExp, ast.BoolOp, ast.And, ast.Or, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Call,
        ast.Name, ast.Load, ast.Store, ast.Constant, ast.Subscript, ast.Slice, ast.Attribute,
        ast.List, ast.Tuple, ast.Dict, ast.Set,
        ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.BitOr, ast.BitAnd,
        ast.Not, ast.USub, ast.UAdd,
        ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Is, ast.IsNot,
    }
)  # fmt: skip

# Names a snippet may read without assigning them first: the engine's context and the safe builtins.
CONTEXT_NAMES = frozenset({"v", "s", "ll", "loglines", "math", "is_integer", "enqueue_config"})
_TYPE_NAMES = {"int": int, "float": float, "str": str, "bool": bool, "list": list, "dict": dict, "tuple": tuple}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sorted": sorted, "min": min, "max": max, "len": len, "abs": abs, "round": round, "sum": sum,
    "any": any, "all": all, "isinstance": isinstance, "set": set,
}  # fmt: skip
SAFE_BUILTINS: dict[str, Any] = {**_TYPE_NAMES, **_FUNCTIONS, "True": True, "False": False, "None": None}

# Attributes: record fields (LogLine), the dict/list methods the rules use, and math functions.
_READ_ATTRS = frozenset(
    {
        "timestamp", "value", "key", "lineno", "full_string",
        "update", "extend", "append", "values", "keys", "items", "get",
        "log2", "log10", "log", "ceil", "floor", "sqrt", "isclose", "exp", "pi", "inf", "isfinite",
        "format",
    }
)  # fmt: skip
_WRITE_ATTRS = frozenset({"key", "value", "lineno", "full_string", "timestamp"})
# The one import the shipped rules use: a copy of a record, with our own implementation.
_ALLOWED_IMPORTS = {("dataclasses", "replace")}

MAX_POW_EXPONENT = 4096
MAX_SEQUENCE = 1_000_000


class Refused(ValueError):
    """A snippet uses something not on the whitelist; it is never compiled or run."""


def _safe_pow(base: Any, exp: Any) -> Any:
    if isinstance(exp, (int, float)) and abs(exp) > MAX_POW_EXPONENT and abs(base) > 1:
        raise OverflowError("exponent too large")
    return base**exp


def _safe_mul(a: Any, b: Any) -> Any:
    for seq, n in ((a, b), (b, a)):
        if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and len(seq) * n > MAX_SEQUENCE:
            raise OverflowError("sequence too large")
    return a * b


def _copy_record(record: Any) -> Any:
    return copy.copy(record)


GUARDS: dict[str, Any] = {"__pow": _safe_pow, "__mul": _safe_mul, "replace": _copy_record}


def _check_format_receiver(node: ast.Attribute) -> None:
    # str.format can walk attributes ("{0.__class__}"); only literal templates with plain fields are allowed.
    if not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
        raise Refused(".format is allowed only on a string literal")
    for _, field, _, _ in string.Formatter().parse(node.value.value):
        if field and not (field.isascii() and field.isdigit()):
            raise Refused(f"format field {{{field}}} is not a plain positional field")


class _Validator(ast.NodeTransformer):
    def __init__(self) -> None:
        self.assigned: set[str] = set()

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if type(node) not in _NODES:
            raise Refused(f"{type(node).__name__} is not allowed")
        return super().generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        names = {(node.module or "", a.name) for a in node.names}
        if node.level or any(a.asname for a in node.names) or not names <= _ALLOWED_IMPORTS:
            raise Refused("import is not allowed")
        return ast.Pass()

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id.startswith("_"):
            raise Refused(f"name {node.id} is not allowed")
        if isinstance(node.ctx, ast.Store):
            self.assigned.add(node.id)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        allowed = _WRITE_ATTRS if isinstance(node.ctx, ast.Store) else _READ_ATTRS
        if node.attr.startswith("_") or node.attr not in allowed:
            raise Refused(f"attribute .{node.attr} is not allowed")
        if node.attr == "format":
            _check_format_receiver(node)
        return self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise Refused("keyword and starred arguments are not allowed")
        if not isinstance(node.func, (ast.Name, ast.Attribute)):
            raise Refused("only named functions and methods may be called")
        return self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        guard = {ast.Pow: "__pow", ast.Mult: "__mul"}.get(type(node.op))
        if guard is None:
            return node
        call = ast.Call(func=ast.Name(id=guard, ctx=ast.Load()), args=[node.left, node.right], keywords=[])
        return ast.copy_location(call, node)

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        if isinstance(node.op, (ast.Pow, ast.Mult)):
            raise Refused("in-place * and ** are not allowed")
        return self.generic_visit(node)


def _free_names(tree: ast.AST, assigned: set[str]) -> set[str]:
    loaded = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return loaded - assigned - CONTEXT_NAMES - set(SAFE_BUILTINS) - set(GUARDS)


Evaluator = Callable[[dict[str, Any]], Any]  # an accepted snippet as a function of its namespace (Snippet.evaluate)


@dataclass(frozen=True)
class Snippet:
    """One rule snippet: its text, and either compiled code or the reason it was refused."""

    source: str
    mode: Mode
    code: CodeType | None
    refusal: str | None = None

    @functools.cached_property
    def evaluate(self) -> Evaluator:
        """The accepted snippet as a function of its namespace, made once: a C-level partial of eval, so that the
        engine's per-record fast path pays no Python frame for it. A refused snippet has none (Refused)."""
        if self.code is None:
            raise Refused(self.refusal or "refused")
        return functools.partial(eval, self.code)


def compile_snippet(source: str, mode: Mode, *, origin: str) -> Snippet:
    text = source.strip()
    try:
        tree = ast.parse(text, mode=mode)
        validator = _Validator()
        tree = validator.visit(tree)
        unknown = _free_names(tree, validator.assigned)
        if unknown:
            raise Refused("unknown name(s): " + ", ".join(sorted(unknown)))
        ast.fix_missing_locations(tree)
        code = compile(tree, origin, mode)
    except Refused as exc:
        return Snippet(text, mode, None, str(exc))
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return Snippet(text, mode, None, f"does not parse: {exc.__class__.__name__}")
    return Snippet(text, mode, code)


# Calls that only read: a conjunction of checks made of these can be evaluated again without changing anything.
_PURE_CALLS = frozenset(
    {
        "is_integer", "len", "abs", "round", "sum", "any", "all", "isinstance", "min", "max", "sorted", "int", "float",
        "str", "bool", "tuple", "list", "set", "dict",
        "log2", "log10", "log", "ceil", "floor", "sqrt", "isclose", "exp", "isfinite", "get", "values", "keys",
        "items", "format",
    }
)  # fmt: skip


def conjunction(checks: tuple[Snippet, ...]) -> Snippet | None:
    """One snippet that is true when every check is, for the common case where all of them pass: one eval per
    record instead of one call chain per check. Only for accepted expressions whose calls only read, since the
    engine evaluates the checks one by one again (for their findings) when the conjunction is false or raises.
    A conjunction of several checks goes through the whitelist like any snippet."""
    if not checks or any(c.code is None or c.mode != "eval" or not _reads_only(c.source) for c in checks):
        return None
    if len(checks) == 1:
        return checks[0]
    text = " and ".join(f"(\n{c.source}\n)" for c in checks)
    tree = ast.parse(text, mode="eval").body
    parts = [ast.dump(ast.parse(c.source, mode="eval").body) for c in checks]
    if not (isinstance(tree, ast.BoolOp) and isinstance(tree.op, ast.And)
            and [ast.dump(v) for v in tree.values] == parts):  # the text must mean exactly "A and B and ..."
        return None
    joined = compile_snippet(text, "eval", origin="<rule checks>")
    return joined if joined.code is not None else None


def _reads_only(source: str) -> bool:
    for node in ast.walk(ast.parse(source, mode="eval")):
        if isinstance(node, ast.NamedExpr):
            return False
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if name not in _PURE_CALLS:
                return False
    return True


def is_integer(value: Any) -> bool:
    """The rule files' helper: a number within 1e-5 of an integer."""
    return bool(abs(round(value) - value) < 0.00001)


def namespace(state: dict[str, Any], loglines: list[Any], enqueue: Callable[[str], None]) -> dict[str, Any]:
    """Globals for one rule file's snippets; the only builtins are the whitelisted ones."""
    return {
        "__builtins__": SAFE_BUILTINS,
        **GUARDS,
        "s": state,
        "math": math,
        "is_integer": is_integer,
        "enqueue_config": enqueue,
        "loglines": loglines,
    }


def run(snippet: Snippet, ns: dict[str, Any]) -> Any:
    """Evaluate or execute an accepted snippet in `ns`; a refused one raises Refused (callers check first)."""
    return snippet.evaluate(ns)
