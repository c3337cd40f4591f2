"""Dotted names of CPython `ast` nodes, for the code that reads files with `ast` rather than
libcst: the project index and the project-root check of the settings."""

from __future__ import annotations

import ast


def ast_dotted(node: ast.expr) -> str | None:
    """`a.b.c` for a chain of Names and Attributes, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = ast_dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None
