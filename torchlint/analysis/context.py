"""Per-file state handed to every rule and fact: the tree, the import table, parents, positions.

It knows no rule: a rule records its findings in `diagnostics` (`Rule.report`), and the
engine reads them from there.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import libcst as cst
from libcst.metadata import CodeRange

from torchlint.analysis.edits import indentation, render, torch_import
from torchlint.analysis.positions import Positions
from torchlint.analysis.symbols import ImportTable
from torchlint.diagnostics import Diagnostic, Edit, Position, source_lines
from torchlint.notebook import boundary_rows

if TYPE_CHECKING:
    from torchlint.analysis.project_index import ProjectIndex

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
        # Every inner node's syntax children (`nodes.children`), kept for the semantic model's
        # walk after the traversal: computing them is most of the cost of a walk.
        self.children: dict[cst.CSTNode, list[cst.CSTNode]] = {}
        self.current: cst.CSTNode | None = None
        self.traversed = False
        self.diagnostics: list[Diagnostic] = []
        # CPython's syntax tree of `source`, when the engine has one: where top-level statements
        # start, so that positions are computed for the statements findings are in.
        self.python_tree: ast.Module | None = None
        self._positions: Positions | None = None
        self._facts: dict[Callable[..., Any], Any] = {}
        self._lines: list[str] | None = None
        # The other files of the project, for facts that cross files; None for text not on disk.
        self.project: ProjectIndex | None = None

    @cached_property
    def absolute_path(self) -> Path:
        """The file's path made absolute once: project index questions made absolute the path
        they were given each time (a `cwd` call and a parse of the path per question)."""
        return Path(self.path).absolute()

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
        self.children.clear()
        self.current = None
        self._positions = None

    # -- shared facts ------------------------------------------------------------------
    def fact(self, kind: Callable[[FileContext], F]) -> F:
        """The analysis fact `kind` for this file, built on first use and then shared."""
        found = self._facts.get(kind)
        if found is None:
            found = self._facts[kind] = kind(self)
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
            # Only files with findings pay for positions, and only for the top-level statements
            # the findings are in (`positions.Positions`). The nodes rules hold are the keys.
            self._positions = Positions(self.module, self.source, self.python_tree)
        return self._positions.range(node, self.ancestors)

    def start(self, node: cst.CSTNode) -> Position:
        pos = self.range(node).start
        return Position(pos.line, pos.column + 1)

    def end(self, node: cst.CSTNode) -> Position:
        pos = self.range(node).end
        return Position(pos.line, pos.column + 1)

    def _rows(self) -> list[str]:
        """The source's rows, split on first use."""
        if self._lines is None:
            self._lines = source_lines(self.source)
        return self._lines

    def line(self, row: int) -> str:
        lines = self._rows()
        return lines[row - 1] if 0 < row <= len(lines) else ""

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
        if not lpar:
            return self.start(node)
        self.range(node)  # places the statement of `node`, parentheses included (no parents)
        return self.start(lpar[0])

    def _outer_end(self, node: cst.CSTNode) -> Position:
        rpar = getattr(node, "rpar", None)
        if not rpar:
            return self.end(node)
        self.range(node)
        return self.end(rpar[-1])

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
        top = self._import_position()
        return "torch", Edit(top, top, "import torch\n")

    def import_edit(self, statement: str) -> Edit:
        """An edit adding `statement` (`import contextlib`) where `torch_alias` adds its import."""
        at = self._import_position()
        return Edit(at, at, statement + "\n")

    def insert_after_imports(self, text: str) -> Edit:
        """An insertion of the lines `text` after the last module-level import (one inside a
        top-level `try`/`if` counts, the `__main__` block does not): where a process-wide setting
        goes, before any code that its value matters to."""
        from torchlint.analysis.nodes import is_main_guard

        last = None
        for statement in self.module.body:
            if _imports(statement) and not is_main_guard(statement):
                last = statement
        if last is None:
            return Edit(Position(1, 1), Position(1, 1), text)
        row = self.end(last).row
        if self.source.count("\n") > row - 1 or isinstance(last, cst.BaseCompoundStatement):
            return Edit(Position(row + 1, 1), Position(row + 1, 1), text)
        return self.insert_after(last, "\n" + text.rstrip("\n"))

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

    # -- notebook cells ------------------------------------------------------------------
    @cached_property
    def cell_boundaries(self) -> list[int]:
        """The rows between a notebook's cells in the text linted (none for a Python file)."""
        return boundary_rows(self.source) if self.path.endswith(".ipynb") else []

    def cell_of(self, node: cst.CSTNode) -> int:
        """Which code cell of a notebook holds `node` (0-based; always 0 in a Python file), so a
        fix can keep its edits in the cell of the code it changes."""
        return bisect.bisect_left(self.cell_boundaries, self.start(node).row)

    # -- where a finding stands ---------------------------------------------------------
    def lines_between(self, first: int, last: int) -> tuple[str, ...]:
        """Source rows `first`..`last` that exist, for the context the `full` format shows."""
        lines = self._rows()
        rows = len(lines) - (lines[-1] == "")  # a final line break starts no row
        return tuple(lines[max(first, 1) - 1 : max(min(last, rows), 0)])

    def statement_row(self, node: cst.CSTNode) -> int:
        """First row of the statement holding `node`, where a multi-line statement's noqa goes."""
        for candidate in (node, *self.ancestors(node)):
            if isinstance(candidate, cst.SimpleStatementLine | cst.BaseCompoundStatement):
                return self.start(candidate).row
        return self.start(node).row


def _imports(statement: cst.CSTNode) -> bool:
    if isinstance(statement, cst.SimpleStatementLine):
        return any(isinstance(small, cst.Import | cst.ImportFrom) for small in statement.body)
    if isinstance(statement, cst.If | cst.Try):
        return isinstance(statement.body, cst.IndentedBlock) and any(
            _imports(s) for s in statement.body.body
        )
    return False
