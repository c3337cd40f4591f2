"""Source positions of syntax nodes, computed one statement at a time.

libcst computes positions by generating the code of the whole module while it records where each
node starts and ends. Only files with findings need positions, and a finding needs those of one
statement: that statement's code is generated alone, from the line where it starts and with the
indentation of the blocks around it, the state the whole-module pass has there. A finding in one
method of a long class generates that method's code. The line comes from CPython's syntax tree of
the same text, and the generated code is checked against the source at that line; where either
is missing or differs, libcst's whole-module pass answers.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import libcst as cst
from libcst.metadata import CodeRange, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

# The line breaks libcst's position tracking counts (`libcst._tokenizer`'s NEWLINE_RE).
_LINE_BREAK = re.compile(r"\r\n?|\n")


# Statements whose body's statements are placed one by one: a finding in one method of a long
# class generates that method's code, not the class's; one in a long training loop, the loop
# body's statement that holds it. Only the first block (`body`) of each: CPython's statement has
# the same `body`, while `elif`, `else` and handlers nest differently in the two trees.
_NESTING = (cst.ClassDef, cst.FunctionDef, cst.For, cst.While, cst.With, cst.If, cst.Try)


class _Unit:
    """A statement that can be placed alone: CPython's statement for it, the line its code
    starts on, and the indentation of the blocks around it (outermost first)."""

    __slots__ = ("statement", "python", "line", "indents")

    def __init__(
        self, statement: cst.CSTNode, python: ast.stmt, line: int, indents: tuple[str, ...]
    ) -> None:
        self.statement = statement
        self.python = python
        self.line = line
        self.indents = indents


class Positions:
    """`CodeRange`s of a module's nodes, each statement's computed on first use."""

    def __init__(self, module: cst.Module, source: str, tree: ast.Module | None) -> None:
        self.module = module
        self.source = source
        self.tree = tree
        self.ranges: Any = {}  # node -> CodeRange (libcst types its provider's map loosely)
        self._done: set[cst.CSTNode] = set()  # statements placed
        self._whole = False
        self._units: dict[cst.CSTNode, _Unit] | None = None  # filled block by block
        self._paired: set[cst.CSTNode] = set()  # blocks (and the module) whose units are known
        self._offsets: list[int] | None = None

    def range(
        self, node: cst.CSTNode, ancestors: Callable[[cst.CSTNode], Iterable[cst.CSTNode]]
    ) -> CodeRange:
        """The range of `node`; `ancestors(node)` (innermost first) finds its statement."""
        found = self.ranges.get(node)
        if found is not None:
            return found
        units = self._innermost_first(node, ancestors)
        for unit in units:
            if unit.statement not in self._done and self._place(unit):
                break
        if node not in self.ranges:
            self._place_all()
        return self.ranges[node]

    def _innermost_first(
        self, node: cst.CSTNode, ancestors: Callable[[cst.CSTNode], Iterable[cst.CSTNode]]
    ) -> list[_Unit]:
        """The placeable statements around `node`, innermost first: its top-level statement,
        and within a class or function, the statement of its body that holds `node`, and so on.
        Nothing when its ancestors do not reach the module (the module itself, a token the
        traversal does not record, a node of no tree): the whole-module pass answers those."""
        chain = [node, *ancestors(node)]
        if chain[-1] is not self.module or len(chain) < 2:
            return []
        units = self._module_units()
        found: list[_Unit] = []
        at = len(chain) - 2  # the top-level statement
        unit = units.get(chain[at])
        while unit is not None:
            found.append(unit)
            statement = unit.statement
            if not isinstance(statement, _NESTING) or at < 2 or chain[at - 1] is not statement.body:
                break
            at -= 2
            unit = self._block_units(unit).get(chain[at])
        return found[::-1]

    def _module_units(self) -> dict[cst.CSTNode, _Unit]:
        if self._units is None:
            self._units = {}
            if self.tree is not None:
                self._pair(self.module.body, self.tree.body, ())
        return self._units

    def _block_units(self, unit: _Unit) -> dict[cst.CSTNode, _Unit]:
        """The units of the body of `unit`'s class or function, paired on first use."""
        units = self._module_units()
        block = unit.statement.body  # type: ignore[attr-defined]
        if block not in self._paired and isinstance(block, cst.IndentedBlock):
            self._paired.add(block)
            indent = self.module.default_indent if block.indent is None else block.indent
            self._pair(block.body, getattr(unit.python, "body", []), (*unit.indents, indent))
        return units

    def _pair(
        self, body: Sequence[cst.BaseStatement], python: list[ast.stmt], indents: tuple[str, ...]
    ) -> None:
        """Pair libcst's statements of one body with CPython's, in order; none where the two
        parsers' statements do not pair up one for one."""
        found = _paired_starts(body, python)
        assert self._units is not None
        for statement, (paired, line) in found.items():
            self._units[statement] = _Unit(statement, paired, line, indents)

    def _place(self, unit: _Unit) -> bool:
        """Positions of `unit`'s nodes, from the line CPython's tree gives it; False when the
        statement's code is not the source's there."""
        offsets = self._line_offsets()
        if unit.line < 1 or unit.line > len(offsets):
            return False
        provider = PositionProvider()
        state = PositionProvidingCodegenState(
            default_indent=self.module.default_indent,
            default_newline=self.module.default_newline,
            provider=provider,
            line=unit.line,
            indent_tokens=list(unit.indents),
        )
        unit.statement._codegen(state)
        code = "".join(state.tokens)
        start = offsets[unit.line - 1]
        if self.source[start : start + len(code)] != code:
            return False
        self._done.add(unit.statement)
        for key, value in provider._computed.items():
            self.ranges.setdefault(key, value)
        return True

    def _place_all(self) -> None:
        """libcst's own pass over the whole module (its values win where a statement's differ)."""
        if self._whole:
            return
        provider = PositionProvider()
        provider._gen_impl(self.module)
        self.ranges = provider._computed
        self._whole = True

    def _line_offsets(self) -> list[int]:
        if self._offsets is None:
            self._offsets = [0] + [m.end() for m in _LINE_BREAK.finditer(self.source)]
        return self._offsets


def _paired_starts(
    body: Sequence[cst.BaseStatement], python: list[ast.stmt]
) -> dict[cst.CSTNode, tuple[ast.stmt, int]]:
    """Statement -> (CPython's statement, start line), or nothing where the two parsers'
    statements do not pair up (a line of `a; b` is two statements for CPython)."""
    starts: dict[cst.CSTNode, tuple[ast.stmt, int]] = {}
    at = 0
    for statement in body:
        count = len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
        if at + count > len(python):
            return {}
        paired = python[at]
        starts[statement] = (
            paired,
            _first_line(statement, paired) - len(getattr(statement, "leading_lines", ())),
        )
        at += count
    return starts if at == len(python) else {}


def _first_line(statement: cst.BaseStatement, python: ast.stmt) -> int:
    """The line of the statement's first token: its first decorator's, if it has any."""
    decorators = getattr(statement, "decorators", ())
    listed = getattr(python, "decorator_list", [])
    if decorators and listed:
        return listed[0].lineno - len(decorators[0].leading_lines)
    return python.lineno
