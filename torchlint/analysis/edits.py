"""Helpers that turn libcst nodes into edit text without losing the user's formatting.

They sit below the rules and the file context (which renders code with them); the fixer, which
applies edits, is in `torchlint.fixes`.

`Module.code_for_node` renders a node as if it stood at column 0: the continuation lines of a
call that spans several lines lose the indentation of the block around it. `render` gives
libcst's code generator the enclosing blocks' indentation, so a replacement keeps its argument
lines and closing bracket where the user put them.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from typing import Any

import libcst as cst
from libcst._nodes.internal import CodegenState


def indentation(module: cst.Module, ancestors: Iterable[cst.CSTNode]) -> list[str]:
    """The indent tokens of the blocks around a node, outermost first (from its ancestors, innermost first)."""
    blocks = [a for a in ancestors if type(a) is cst.IndentedBlock]
    return [module.default_indent if b.indent is None else b.indent for b in reversed(blocks)]


def render(module: cst.Module, node: cst.CSTNode, indents: list[str]) -> str:
    """The code of `node` where `indents` are the indent tokens of the blocks it sits in."""
    state = CodegenState(
        default_indent=module.default_indent, default_newline=module.default_newline
    )
    state.indent_tokens.extend(indents)
    node._codegen(state)
    return "".join(state.tokens)


def replaced(
    module: cst.Module,
    old: cst.CSTNode,
    new: cst.CSTNode,
    parents: Mapping[cst.CSTNode, cst.CSTNode],
) -> cst.Module:
    """`module` with `old` (a node of it) replaced by `new`: the tree `module.deep_replace(old,
    new)` gives, rebuilt only along the path from `old` up, where `deep_replace` rebuilds and
    validates every node of the file."""
    child, replacement = old, new
    while child is not module:
        parent = parents[child]
        name, value = _swapped(parent, child, replacement)
        replacement = parent.with_changes(**{name: value})
        child = parent
    return cst.ensure_type(replacement, cst.Module)


def _swapped(parent: cst.CSTNode, child: cst.CSTNode, replacement: cst.CSTNode) -> tuple[str, Any]:
    """The field of `parent` that holds `child`, and its value with `replacement` in its place
    (the same kind of sequence when the field holds several nodes)."""
    for field in dataclasses.fields(parent):
        value = getattr(parent, field.name)
        if value is child:
            return field.name, replacement
        if isinstance(value, list | tuple) and any(v is child for v in value):
            return field.name, type(value)(replacement if v is child else v for v in value)
    raise ValueError(f"{type(child).__name__} is not a child of {type(parent).__name__}")


def torch_import(statements: Iterable[cst.BaseStatement]) -> str | None:
    """The name that `import torch` (`as T`, or `import torch.nn`) binds among `statements`,
    looking into `try` bodies (`try: import torch`) but not into branches that may not run."""
    for statement in statements:
        if isinstance(statement, cst.Try):
            found = torch_import(statement.body.body)  # type: ignore[arg-type]
        elif isinstance(statement, cst.SimpleStatementLine):
            found = next(
                (
                    bound
                    for small in statement.body
                    if isinstance(small, cst.Import)
                    for bound in _torch_names(small)
                ),
                None,
            )
        else:
            found = None
        if found is not None:
            return found
    return None


def _torch_names(node: cst.Import) -> Iterable[str]:
    for alias in node.names:
        name: cst.BaseExpression = alias.name
        while isinstance(name, cst.Attribute):
            name = name.value
        if not isinstance(name, cst.Name) or name.value != "torch":
            continue
        if alias.asname is None:
            yield "torch"
        elif isinstance(alias.name, cst.Name) and isinstance(alias.asname.name, cst.Name):
            yield alias.asname.name.value  # `import torch as T`; `import torch.nn as nn` binds no torch


def references(source: str, name: str) -> int:
    """How often `name` is written as a name in `source`: not as an attribute (`x.name`), but in
    strings and comments too, so a count that matches the known uses is a safe lower bound."""
    return len(re.findall(rf"(?<![\w.]){re.escape(name)}\b", source))


def import_binding(
    module: cst.Module, name: str
) -> tuple[cst.SimpleStatementLine, cst.Import | cst.ImportFrom, cst.ImportAlias] | None:
    """The one module-level import statement that binds `name` with `from m import name` or `as name`."""
    found = []
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if not isinstance(small, cst.Import | cst.ImportFrom) or isinstance(
                small.names, cst.ImportStar
            ):
                continue
            for alias in small.names:
                bound = (
                    alias.asname.name
                    if alias.asname
                    else (alias.name if isinstance(small, cst.ImportFrom) else None)
                )
                if isinstance(bound, cst.Name) and bound.value == name:
                    found.append((statement, small, alias))
    return found[0] if len(found) == 1 else None


def without_alias(
    node: cst.Import | cst.ImportFrom, alias: cst.ImportAlias
) -> cst.Import | cst.ImportFrom | None:
    """The import statement without `alias`, or None when nothing would be left of it."""
    kept = [a for a in node.names if a is not alias]  # type: ignore[union-attr]
    if not kept:
        return None
    if node.names[-1] is alias:  # type: ignore[index]
        kept[-1] = kept[-1].with_changes(
            comma=alias.comma
        )  # the last name keeps the layout's trailing comma (or none)
    return node.with_changes(names=kept)
