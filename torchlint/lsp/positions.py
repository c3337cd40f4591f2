"""Positions between torchlint and the client.

torchlint counts 1-based rows and 1-based columns in code points. LSP counts 0-based lines and
characters in code units of the encoding negotiated at initialize: UTF-16 unless the client
offered UTF-8 or UTF-32. Lines end at `\\n`, `\\r\\n` or `\\r`, as in LSP and in Python's tokenizer.
"""

from __future__ import annotations

import bisect
import re

from lsprotocol import types

from torchlint.diagnostics import Position

_LINE_END = re.compile(r"\r\n|\r|\n")


def _units_utf8(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _units_utf16(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


_UNITS = {
    types.PositionEncodingKind.Utf8: _units_utf8,
    types.PositionEncodingKind.Utf16: _units_utf16,
    types.PositionEncodingKind.Utf32: len,
}


class Lines:
    """One text's lines and line offsets, converting positions in one encoding."""

    def __init__(self, text: str, encoding: str | None) -> None:
        self.text = text
        self.units = _UNITS.get(encoding, _units_utf16)  # type: ignore[call-overload]
        self.starts = [0] + [m.end() for m in _LINE_END.finditer(text)]
        self.lines = _LINE_END.split(text)

    def line(self, row: int) -> str:
        """The 1-based row's text without its line ending ("" beyond the end)."""
        return self.lines[row - 1] if 0 < row <= len(self.lines) else ""

    def _count(self, prefix: str) -> int:
        return len(prefix) if prefix.isascii() else self.units(prefix)

    def to_lsp(self, at: Position) -> types.Position:
        if at.row > len(self.lines):
            return self.end()
        line = self.lines[at.row - 1]
        return types.Position(line=at.row - 1, character=self._count(line[: max(at.column - 1, 0)]))

    def range(self, start: Position, end: Position) -> types.Range:
        return types.Range(start=self.to_lsp(start), end=self.to_lsp(end))

    def end(self) -> types.Position:
        return types.Position(line=len(self.lines) - 1, character=self._count(self.lines[-1]))

    def from_lsp(self, at: types.Position) -> Position:
        """The code-point position of a client position; past a line's end means its end."""
        if at.line >= len(self.lines):
            return Position(len(self.lines), len(self.lines[-1]) + 1)
        line = self.lines[at.line]
        if line.isascii():
            return Position(at.line + 1, min(at.character, len(line)) + 1)
        units = 0
        for index, char in enumerate(line):
            if units >= at.character:
                return Position(at.line + 1, index + 1)
            units += self.units(char)
        return Position(at.line + 1, len(line) + 1)

    def offset_to_lsp(self, offset: int) -> types.Position:
        """The client position of a code-point offset into the text."""
        row = bisect.bisect_right(self.starts, offset)
        return self.to_lsp(Position(row, offset - self.starts[row - 1] + 1))
