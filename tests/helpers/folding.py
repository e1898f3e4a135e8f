"""String expressions read as the text they build from constants, for the architecture
checker: ``"a" + "b"``, ``".".join(("a", "b"))``, bytes, f-strings (their values unknown)."""

from __future__ import annotations

import ast

UNKNOWN = "\x00"  # a part of a folded string that is not a constant


def fold(node: ast.expr | None) -> str | None:
    """The text a string expression builds from constants: ``"a" + "b"``, ``".".join(("a",
    "b"))``, bytes, and f-strings (their values as :data:`UNKNOWN`); None if not a string."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bytes):
            return node.value.decode("latin-1")
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        return "".join(map(known, node.values))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = fold(node.left), fold(node.right)
        if left is None and right is None:
            return None
        return (UNKNOWN if left is None else left) + (UNKNOWN if right is None else right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and len(node.args) == 1:
        separator, (items,) = fold(node.func.value), node.args
        if node.func.attr == "join" and separator is not None and hasattr(items, "elts"):
            return separator.join(map(known, items.elts))
    return None


def known(node: ast.expr) -> str:
    text = fold(node)
    return UNKNOWN if text is None else text


def argument(node: ast.Call, position: int, keyword: str) -> ast.expr | None:
    if len(node.args) > position:
        return node.args[position]
    return next((k.value for k in node.keywords if k.arg == keyword), None)


def callee(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def is_dynamic_import(func: ast.expr) -> bool:
    return callee(func) in {"import_module", "__import__"}
