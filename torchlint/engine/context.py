"""Per-file state handed to every rule: the tree, the import table, parents, positions."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import libcst as cst
from libcst.metadata import CodeRange, PositionProvider

from torchlint.analysis.symbols import ImportTable
from torchlint.diagnostics import Diagnostic, Edit, Fix, Position, source_lines
from torchlint.fixes.edits import indentation, render, torch_import
from torchlint.rule_docs import url

if TYPE_CHECKING:
    from torchlint.analysis.project_index import ProjectIndex
    from torchlint.rule import Rule

F = TypeVar("F")


class FileContext:
    def __init__(
        self, path: str, source: str, module: cst.Module, target_torch_version: tuple[int, int]
    ) -> None:
        self.path = path
        self.source = source
        self.module = module
        self.target_torch_version = target_torch_version
        self.symbols = ImportTable()
        # Filled by the traversal: every node's parent, the node whose hooks are running, and
        # whether the walk is over (then `parents` is complete).
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self.current: cst.CSTNode | None = None
        self.traversed = False
        self.diagnostics: list[Diagnostic] = []
        self._positions: Any = None
        self._facts: dict[type, Any] = {}
        self._lines: list[str] | None = None
        # The other files of the project, for facts that cross files; None for text not on disk.
        self.project: ProjectIndex | None = None

    @property
    def uses_torch(self) -> bool:
        """Whether the file imports torch, itself or through `from module import *` of a project
        module that does (then its torch names are unresolved, but the code is torch code)."""
        if self.symbols.uses_torch:
            return True
        return self.project is not None and self.project.star_imports_torch(Path(self.path))

    def close(self) -> None:
        """Drop what the rules and facts built, breaking reference cycles through this context."""
        self._facts.clear()
        self.parents.clear()
        self.current = None
        self._positions = None

    # -- shared facts ------------------------------------------------------------------
    def fact(self, kind: Callable[[FileContext], F]) -> F:
        """The analysis fact `kind` for this file, built on first use and then shared."""
        found = self._facts.get(kind)  # type: ignore[arg-type]
        if found is None:
            found = self._facts[kind] = kind(self)  # type: ignore[index]
        return found

    @property
    def stack(self) -> list[cst.CSTNode]:
        """During the traversal, the ancestors of the node being visited, outermost first."""
        if self.current is None or self.traversed:
            return []
        return list(self.ancestors(self.current))[::-1]

    def ancestors(self, node: cst.CSTNode):
        """Parents of `node`, innermost first (complete once the traversal has passed it)."""
        parent = self.parents.get(node)
        while parent is not None:
            yield parent
            parent = self.parents.get(parent)

    # -- positions and text ------------------------------------------------------------
    def range(self, node: cst.CSTNode) -> CodeRange:
        if self._positions is None:
            # Only files with findings pay for positions (a code-generation pass). The provider's
            # own hook is called on the tree itself, so the nodes rules hold are the keys;
            # `MetadataWrapper.resolve` would copy the tree or add a visit of all of it.
            provider = PositionProvider()
            provider._gen_impl(self.module)
            self._positions = provider._computed
        return self._positions[node]

    def start(self, node: cst.CSTNode) -> Position:
        pos = self.range(node).start
        return Position(pos.line, pos.column + 1)

    def end(self, node: cst.CSTNode) -> Position:
        pos = self.range(node).end
        return Position(pos.line, pos.column + 1)

    def line(self, row: int) -> str:
        if self._lines is None:
            self._lines = source_lines(self.source)
        return self._lines[row - 1] if 0 < row <= len(self._lines) else ""

    def code(self, node: cst.CSTNode, like: cst.CSTNode | None = None) -> str:
        """The code of `node` as written where `like` (by default `node` itself) stands: the
        continuation lines of a multi-line node keep the indentation of the blocks around it."""
        return render(self.module, node, indentation(self.module, self.ancestors(like or node)))

    # -- edits -------------------------------------------------------------------------
    # libcst's positions leave out a node's own parentheses; edits around a node go outside them.
    def replace(self, node: cst.CSTNode, new: cst.CSTNode | str) -> Edit:
        """Replace `node`; a new node that keeps the old one's parentheses replaces them too."""
        if isinstance(new, str):
            return Edit(self.start(node), self.end(node), new)
        if getattr(new, "lpar", None) and getattr(node, "lpar", None):
            return Edit(self._outer_start(node), self._outer_end(node), self.code(new, like=node))
        return Edit(self.start(node), self.end(node), self.code(new, like=node))

    def insert_before(self, node: cst.CSTNode, text: str) -> Edit:
        at = self._outer_start(node)
        return Edit(at, at, text)

    def insert_after(self, node: cst.CSTNode, text: str) -> Edit:
        at = self._outer_end(node)
        return Edit(at, at, text)

    def _outer_start(self, node: cst.CSTNode) -> Position:
        lpar = getattr(node, "lpar", None)
        return self.start(lpar[0]) if lpar else self.start(node)

    def _outer_end(self, node: cst.CSTNode) -> Position:
        rpar = getattr(node, "rpar", None)
        return self.end(rpar[-1]) if rpar else self.end(node)

    def torch_alias(self, at: cst.CSTNode | None = None) -> tuple[str, Edit | None]:
        """The name `torch` is imported under where code at `at` runs (module level when None), with
        the edit that imports it at module level when no import there or in an enclosing function
        binds it: an import inside another function does not count."""
        scopes = [
            a.body
            for a in (self.ancestors(at) if at is not None else ())
            if type(a) is cst.FunctionDef
        ]
        for body in [*scopes, self.module]:
            alias = torch_import(
                body.body if isinstance(body, cst.IndentedBlock | cst.Module) else ()
            )
            if alias is not None:
                return alias, None
        return "torch", Edit(*([self._import_position()] * 2), "import torch\n")

    def _import_position(self) -> Position:
        """Below the docstring, `__future__` imports and the leading import block."""
        row = 1
        body = self.module.body
        for i, stmt in enumerate(body):
            if not isinstance(stmt, cst.SimpleStatementLine):
                break
            first = stmt.body[0]
            is_doc = (
                i == 0
                and isinstance(first, cst.Expr)
                and isinstance(first.value, cst.SimpleString | cst.ConcatenatedString)
            )
            if not (is_doc or isinstance(first, cst.Import | cst.ImportFrom)):
                break
            row = self.end(stmt).row + 1
        return Position(row, 1)

    # -- reporting ---------------------------------------------------------------------
    def report(self, rule: Rule, node: cst.CSTNode, message: str, fix: Fix | None) -> None:
        if (
            fix is not None
            and fix.min_torch is not None
            and self.target_torch_version < fix.min_torch
        ):
            need, have = fix.min_torch, self.target_torch_version
            message += f" (no fix offered: it needs torch {need[0]}.{need[1]}, the project targets {have[0]}.{have[1]})"
            fix = None
        start, end = self.start(node), self.end(node)
        anchors = (start.row, self._statement_row(node))
        self.diagnostics.append(
            Diagnostic(
                rule.code,
                rule.name,
                message,
                self.path,
                start,
                end,
                fix,
                url=url(rule.code),
                source_line=self.line(start.row),
                anchor_rows=anchors,
                context_before=self._lines_between(start.row - 2, start.row - 1),
                context_after=self._lines_between(start.row + 1, start.row + 2),
            )
        )

    def _lines_between(self, first: int, last: int) -> tuple[str, ...]:
        """Source rows `first`..`last` that exist, for the context the `full` format shows."""
        self.line(1)  # splits the source once
        rows = len(self._lines) - (self._lines[-1] == "")  # a final line break starts no row
        return tuple(self._lines[max(first, 1) - 1 : max(min(last, rows), 0)])

    def _statement_row(self, node: cst.CSTNode) -> int:
        """First row of the statement holding `node`, where a multi-line statement's noqa goes."""
        for candidate in (node, *self.ancestors(node)):
            if isinstance(candidate, cst.SimpleStatementLine | cst.BaseCompoundStatement):
                return self.start(candidate).row
        return self.start(node).row
