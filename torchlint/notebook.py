"""Jupyter notebooks as one virtual Python module, and back.

The code cells are joined into one module so names defined in earlier cells are known.
A marker comment line separates the cells, so positions can be mapped back to 1-based
cells and cell-relative rows even after fixes have moved lines. IPython syntax (`%magic`,
`!shell`, `obj?`, `x = !cmd`) becomes a placeholder line with the same indentation (a
comment at the top level, a name inside a block) and is restored on write. A cell magic
that runs its body as Python (`%%time`, `%%timeit`, `%%capture`) is masked like a line magic
and its body linted; cells run by any other (`%%bash`, `%%writefile`) are not Python to us and
are left out.

Writing back touches only the `source` values of changed cells, in the raw JSON text, so
outputs, metadata, cell ids, key order and indentation stay byte for byte as they were.
"""

from __future__ import annotations

import bisect
import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from torchlint.diagnostics import Diagnostic, Edit, FileSpan, Position, source_lines

_MARKER = "# --- torchlint: cell boundary ---"
_PLACEHOLDER = "__torchlint_magic_{}__"
_LINE_REFERENCE = re.compile(r"\bline (\d+)\b")
_MARKER_LINE = re.compile(re.escape(_MARKER) + "-*")
_PLACEHOLDER_RE = re.compile(r"__torchlint_magic_(\d+)__")
_LINE = re.compile(r"([^\r\n]*)(\r\n|\n|\r|$)")
_ASSIGNED_MAGIC = re.compile(r"^\s*[\w.\[\], ]+=\s*[%!]")  # files = !ls, t = %timeit -o f()
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class NotebookError(Exception):
    """A file that is not a notebook we can read, said in one line."""


@dataclass
class Cell:
    number: int  # 1-based position among all the notebook's cells
    source: str  # as stored in the notebook
    code: str = ""  # the source with IPython syntax masked, ending with a newline
    magics: dict[int, str] = field(default_factory=dict)  # placeholder id -> original line


@dataclass
class Notebook:
    raw: str
    cells: list[Cell]  # the code cells that are linted, in order
    text: str = field(init=False)  # the virtual module the engine lints
    marker: str = field(init=False)  # the line between two cells in `text`

    def __post_init__(self) -> None:
        self.marker = _MARKER
        while any(self.marker in cell.code for cell in self.cells):  # a line no cell has
            self.marker += "-"
        self.text = (self.marker + "\n").join(cell.code for cell in self.cells)

    def map_diagnostics(self, text: str, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
        """Diagnostics of virtual `text` in notebook terms: `cell` set, rows cell-relative, and
        their place in the .ipynb text (`file_span`) for the formats that annotate the file."""
        if not self.cells:
            return diagnostics
        markers = _marker_rows(text, self.marker)
        places = _SourcePlaces(self.raw)
        return [self._in_file(places, markers, self._map(markers, d), d) for d in diagnostics]

    def _in_file(
        self, places: _SourcePlaces, markers: list[int], mapped: Diagnostic, virtual: Diagnostic
    ) -> Diagnostic:
        assert mapped.cell is not None
        start, _ = places.locate(mapped.cell, mapped.start)
        end, _ = places.locate(mapped.cell, mapped.end)
        edits = None
        if virtual.fix is not None:
            located = [
                (self._locate(markers, e.start), self._locate(markers, e.end), e.content)
                for e in virtual.fix.edits
            ]
            edits = places.edits(located)
        return replace(mapped, file_span=FileSpan(start, end, edits))

    def _locate(self, markers: list[int], at: Position) -> tuple[int, Position]:
        """The 1-based cell and the cell-relative position of virtual position `at`."""
        index = bisect.bisect_left(markers, at.row)
        first = markers[index - 1] + 1 if index else 1
        return self.cells[min(index, len(self.cells) - 1)].number, Position(
            at.row - first + 1, at.column
        )

    def _map(self, markers: list[int], d: Diagnostic) -> Diagnostic:
        cell, start = self._locate(markers, d.start)
        end_cell, end = self._locate(markers, d.end)
        if end_cell != cell:  # cannot happen in a valid notebook; keep the range inside the cell
            end = start
        fix = d.fix
        if fix is not None:
            # Each edit's rows count within the cell that holds it (an added import may sit in another).
            edits = tuple(
                Edit(self._locate(markers, e.start)[1], self._locate(markers, e.end)[1], e.content)
                for e in fix.edits
            )
            fix = replace(fix, edits=edits)
        before, after = d.context_before, d.context_after
        if self.marker in before:  # context stops at the cell's own lines
            before = before[len(before) - before[::-1].index(self.marker) :]
        if self.marker in after:
            after = after[: after.index(self.marker)]
        return replace(
            d,
            message=self._rows_in_message(markers, d.message, cell),
            start=start,
            end=end,
            cell=cell,
            fix=fix,
            context_before=before,
            context_after=after,
        )

    def _rows_in_message(self, markers: list[int], message: str, cell: int) -> str:
        """The message with each `line N` it quotes (a row of the virtual module, as every rule
        writes it) in the numbers the location uses: the row within its cell, and the cell when
        it is another than the finding's. Quoted code (between backticks) is left alone."""

        def cell_row(match: re.Match[str]) -> str:
            there, at = self._locate(markers, Position(int(match.group(1)), 1))
            return f"{f'cell {there}, ' if there != cell else ''}line {at.row}"

        parts = message.split("`")
        for i in range(0, len(parts), 2):  # outside backticks
            parts[i] = _LINE_REFERENCE.sub(cell_row, parts[i])
        return "`".join(parts)

    def sources(self, text: str) -> list[str]:
        """The code cells' new sources from a fixed virtual `text`, IPython syntax restored."""
        chunks = _split_cells(text, self.marker) if self.cells else []
        if len(chunks) != len(self.cells):
            raise NotebookError(
                "the fixes moved a boundary between cells; the notebook was not changed"
            )
        magics = {key: line for cell in self.cells for key, line in cell.magics.items()}
        return [_restore(chunk, magics, cell.source) for chunk, cell in zip(chunks, self.cells)]

    def dump(self, sources: list[str]) -> str:
        """The notebook's JSON text with the changed cells' sources replaced, nothing else."""
        spans = _source_spans(self.raw)
        out = self.raw
        ascii_only = self.raw.isascii()
        changes = [
            (spans[cell.number - 1], new)
            for cell, new in zip(self.cells, sources)
            if new != cell.source
        ]
        for (start, end), new in sorted(changes, reverse=True):
            out = out[:start] + _format_source(self.raw, start, end, new, ascii_only) + out[end:]
        return out


def parse_bytes(data: bytes) -> Notebook:
    """The notebook in a file's bytes (JSON in UTF-8, as nbformat writes it)."""
    try:
        raw = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise NotebookError(
            f"invalid notebook: not UTF-8 ({error.reason} at byte {error.start})"
        ) from None
    return parse(raw)


def parse(raw: str) -> Notebook:
    """The notebook in JSON text `raw`, or NotebookError saying what is wrong in one line."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as error:
        raise NotebookError(
            f"invalid notebook: {error.msg} (line {error.lineno}, column {error.colno})"
        ) from None
    except RecursionError:
        raise NotebookError("invalid notebook: nested too deeply") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise NotebookError("invalid notebook: no list of cells (nbformat 4 expected)")
    cells = [_cell(number, value) for number, value in enumerate(data["cells"], start=1)]
    if not _is_python(data.get("metadata")):
        return Notebook(raw, [])
    counter = itertools.count()
    linted = []
    for cell_type, cell in cells:
        if cell_type == "code" and not _runs_other_cell_magic(cell.source):
            cell.code, cell.magics = _mask(cell.source, counter)
            linted.append(cell)
    return Notebook(raw, linted)


def _cell(number: int, value: Any) -> tuple[str, Cell]:
    if not isinstance(value, dict) or not isinstance(value.get("cell_type"), str):
        raise NotebookError(f"invalid notebook: cell {number} has no cell_type")
    source = value.get("source")
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        source = "".join(source)
    if not isinstance(source, str):
        raise NotebookError(f"invalid notebook: cell {number} source is not text")
    return value["cell_type"], Cell(number, source)


def _is_python(metadata: Any) -> bool:
    """False only when the notebook says its kernel runs another language."""
    if not isinstance(metadata, dict):
        return True
    for key, name in (("language_info", "name"), ("kernelspec", "language")):
        info = metadata.get(key)
        if isinstance(info, dict) and isinstance(info.get(name), str):
            return info[name].lower() == "python"
    return True


# Cell magics whose body is Python run in the kernel: the magic line is masked like a line magic
# and the body linted. Any other (`%%bash`, `%%writefile`, `%%html`) makes the cell not Python.
_PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})


def _runs_other_cell_magic(source: str) -> bool:
    """Whether the cell opens with a cell magic whose body is not Python code of the kernel."""
    stripped = source.lstrip()
    if not stripped.startswith("%%"):
        return False
    name = stripped[2:].split(None, 1)[0] if stripped[2:].strip() else ""
    return name not in _PYTHON_CELL_MAGICS


# -- masking IPython syntax ----------------------------------------------------------------
def _lines(text: str) -> list[tuple[str, str]]:
    """(content, line ending) of each line; the last may have no ending."""
    found = [(m.group(1), m.group(2)) for m in _LINE.finditer(text)]
    return [line for line in found if line != ("", "")]


def _mask(source: str, counter: Iterator[int]) -> tuple[str, dict[int, str]]:
    magics: dict[int, str] = {}
    out: list[str] = []
    scanner = _Scanner()
    continued = False  # inside a magic continued with a backslash
    for content, ending in _lines(source):
        if continued or (scanner.at_statement_start and _is_magic(content)):
            key = next(counter)
            magics[key] = content
            indent = content[: len(content) - len(content.lstrip(" \t"))]
            # A comment at the top level, so the import block around `%matplotlib` stays one
            # block, and on continuation lines; a statement inside a block, which may need a body.
            placeholder = (
                indent + ("# " if continued or not indent else "") + _PLACEHOLDER.format(key)
            )
            out.append(placeholder + (ending or "\n"))
            continued = content.endswith("\\")
            continue
        scanner.feed(content)
        out.append(content + (ending or "\n"))
    return "".join(out), magics


def masks_magics(text: str) -> bool:
    """Whether a linted text hides IPython magics, whose code may use any name of the module."""
    return _PLACEHOLDER_RE.search(text) is not None


def _is_magic(content: str) -> bool:
    if content.lstrip().startswith(("%", "!", "?")) or _ASSIGNED_MAGIC.match(content):
        return True
    return _Scanner().feed(content)  # a `?` outside strings is IPython help: `obj?`, `f??`


class _Scanner:
    """Just enough of Python's lexer to tell where a new statement may begin.

    A `%` or `!` at the start of a line is IPython syntax only outside strings and brackets
    and after a line that did not end with a backslash.
    """

    def __init__(self) -> None:
        self.quote: str | None = None  # the open string's delimiter
        self.depth = 0
        self.backslash = False

    @property
    def at_statement_start(self) -> bool:
        return self.quote is None and self.depth == 0 and not self.backslash

    def feed(self, content: str) -> bool:
        """Advance over one line; True when a `?` appeared outside strings and comments."""
        question = False
        i = 0
        self.backslash = False
        while i < len(content):
            char = content[i]
            if self.quote is not None:
                if char == "\\":
                    i += 2
                    if i > len(content):
                        self.backslash = True
                    continue
                if content.startswith(self.quote, i):
                    i += len(self.quote)
                    self.quote = None
                    continue
                i += 1
                continue
            if char == "#":
                break
            if char in "'\"":
                self.quote = char * 3 if content.startswith(char * 3, i) else char
                i += len(self.quote)
                continue
            if char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(0, self.depth - 1)
            elif char == "?":
                question = True
            elif char == "\\" and i == len(content) - 1:
                self.backslash = True
            i += 1
        if self.quote in ("'", '"') and not self.backslash:
            self.quote = None  # an unterminated one-line string ends with the line
        return question


def _restore(chunk: str, magics: dict[int, str], original: str) -> str:
    out: list[str] = []
    for content, ending in _lines(chunk):
        match = _PLACEHOLDER_RE.search(content)
        if match and int(match.group(1)) in magics:
            indent = content[: len(content) - len(content.lstrip(" \t"))]
            content = indent + magics[int(match.group(1))].lstrip(" \t")
        out.append(content + ending)
    text = "".join(out)
    if not original.endswith(("\n", "\r")) and text.endswith("\n"):
        text = (
            text[:-2] if text.endswith("\r\n") else text[:-1]
        )  # the newline the virtual module added
    return text


# -- cells in a virtual text -----------------------------------------------------------------
def _marker_rows(text: str, marker: str) -> list[int]:
    return [row for row, line in enumerate(source_lines(text), start=1) if line == marker]


def boundary_rows(text: str) -> list[int]:
    """The rows between cells in a notebook's virtual text, found from the text alone (the
    engine lints text, not notebooks): the longest marker line, since a cell may hold only
    shorter ones. A lone cell holding a marker-like line counts it too, which only makes
    `keeps_cells` stricter."""
    lines = source_lines(text)
    found = [line for line in lines if _MARKER_LINE.fullmatch(line)]
    if not found:
        return []
    marker = max(found, key=len)
    return [row for row, line in enumerate(lines, start=1) if line == marker]


def keeps_cells(boundaries: list[int], edits: tuple[Edit, ...]) -> bool:
    """Whether every edit stays inside one cell: it replaces no part of a boundary row, leaves
    each boundary on a line of its own, and writes no boundary. Edits in different cells (an
    import at the top, a wrap further down) are fine; `Notebook.sources` needs exactly this."""
    for edit in edits:
        if _MARKER_LINE.search(edit.content):
            return False
        for row in boundaries:
            line_start, next_line = Position(row, 1), Position(row + 1, 1)
            if _before(edit.start, next_line) and _before(line_start, edit.end):
                return False  # it replaces part of the boundary row
            if edit.end == line_start and not _ends_a_line(edit):
                return False  # the boundary would be joined to the line before it
    return True


def _before(a: Position, b: Position) -> bool:
    return (a.row, a.column) < (b.row, b.column)


def _ends_a_line(edit: Edit) -> bool:
    """Whether the text an edit leaves just before the position it ends at ends a line."""
    if edit.content:
        return edit.content.endswith(("\n", "\r"))
    return edit.start == edit.end or edit.start.column == 1


def _split_cells(text: str, marker: str) -> list[str]:
    chunks = [""]
    for content, ending in _lines(text):
        if content == marker:
            chunks.append("")
        else:
            chunks[-1] += content + ending
    return chunks


# -- the raw JSON ----------------------------------------------------------------------------
def _skip(raw: str, i: int) -> int:
    blank = _WHITESPACE.match(raw, i)
    return blank.end() if blank else i


def _members(raw: str, i: int) -> Iterator[tuple[str, int, int]]:
    """(key, value start, value end) of each member of the JSON object opening at raw[i]."""
    i = _skip(raw, i + 1)
    while raw[i] != "}":
        key, i = _DECODER.raw_decode(raw, i)
        start = _skip(raw, _skip(raw, i) + 1)  # past the colon
        _, end = _DECODER.raw_decode(raw, start)
        yield key, start, end
        i = _skip(raw, end)
        if raw[i] == ",":
            i = _skip(raw, i + 1)


def _items(raw: str, i: int) -> Iterator[tuple[int, int]]:
    """(start, end) of each item of the JSON array opening at raw[i]."""
    i = _skip(raw, i + 1)
    while raw[i] != "]":
        _, end = _DECODER.raw_decode(raw, i)
        yield i, end
        i = _skip(raw, end)
        if raw[i] == ",":
            i = _skip(raw, i + 1)


class _SourcePlaces:
    """Where each line of each cell's source lies in the notebook's JSON text.

    nbformat stores a source as a list of strings, one per line, each on a line of the file; a
    position maps exactly when the JSON string holds the line's text before it unescaped."""

    def __init__(self, raw: str) -> None:
        self.raw = raw
        self.line_starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", raw)]
        self.items: list[
            list[tuple[int, int]]
        ] = []  # per cell: (start, end) of each line's JSON string
        for start, end in _source_spans(raw):
            if start < end and raw[start] == "[":
                self.items.append(list(_items(raw, start)))
            else:
                self.items.append([(start, end)] if start < end else [])

    def _file_position(self, offset: int) -> Position:
        row = bisect.bisect_right(self.line_starts, offset)
        return Position(row, offset - self.line_starts[row - 1] + 1)

    def locate(self, cell: int, at: Position) -> tuple[Position, bool]:
        """The .ipynb position of cell-relative `at`, and whether its column is exact."""
        items = self.items[cell - 1] if 0 < cell <= len(self.items) else []
        if not items:
            return Position(1, 1), False
        single = (
            len(items) == 1
            and self.raw[items[0][0]] == '"'
            and "\\n" in self.raw[items[0][0] : items[0][1] - 2]
        )
        start, end = items[min(at.row, len(items)) - 1] if not single else items[0]
        encoded = self.raw[start + 1 : end - 1]
        line = _DECODER.raw_decode(self.raw, start)[0]
        exact = (
            not single
            and at.row <= len(items)
            and encoded[: at.column - 1] == line[: at.column - 1]
        )
        return self._file_position(start + 1 + (at.column - 1 if exact else 0)), exact

    def edits(
        self, located: list[tuple[tuple[int, Position], tuple[int, Position], str]]
    ) -> tuple[Edit, ...] | None:
        """The edits in .ipynb terms, or None unless every one stays inside one source line and
        writes text that JSON holds unescaped."""
        out = []
        for (cell, start), (end_cell, end), content in located:
            if (
                cell != end_cell
                or start.row != end.row
                or json.dumps(content, ensure_ascii=self.raw.isascii())[1:-1] != content
            ):
                return None
            (file_start, exact_start), (file_end, exact_end) = (
                self.locate(cell, start),
                self.locate(cell, end),
            )
            if not (exact_start and exact_end):
                return None
            out.append(Edit(file_start, file_end, content))
        return tuple(out)


def _source_spans(raw: str) -> list[tuple[int, int]]:
    """Where each cell's `source` value lies in the raw text (an empty span when absent)."""
    top = _skip(raw, 0)
    cells = [(start, end) for key, start, end in _members(raw, top) if key == "cells"][-1]
    spans = []
    for start, _ in _items(raw, cells[0]):
        found = [(s, e) for key, s, e in _members(raw, start) if key == "source"]
        spans.append(found[-1] if found else (start, start))
    return spans


def _format_source(raw: str, start: int, end: int, source: str, ascii_only: bool) -> str:
    """`source` as JSON laid out like the value it replaces (a string, or a list of lines)."""
    if raw[start] == '"':
        return json.dumps(source, ensure_ascii=ascii_only)
    lines = [json.dumps(line, ensure_ascii=ascii_only) for line in source.splitlines(keepends=True)]
    if not lines:
        return "[]"
    items = list(_items(raw, start))
    if items:
        opening = raw[start + 1 : items[0][0]]
        closing = raw[items[-1][1] : end - 1]
        separator = raw[items[0][1] : items[1][0]] if len(items) > 1 else "," + opening
        return "[" + opening + separator.join(lines) + closing + "]"
    if "\n" not in raw:
        return "[" + ", ".join(lines) + "]"
    line_start = raw.rfind("\n", 0, start) + 1
    indent = raw[
        line_start : line_start + len(raw[line_start:start]) - len(raw[line_start:start].lstrip())
    ]
    step = _indent_step(raw)
    newline = "\r\n" if "\r\n" in raw else "\n"
    return (
        "["
        + newline
        + ("," + newline).join(indent + step + line for line in lines)
        + newline
        + indent
        + "]"
    )


def _indent_step(raw: str) -> str:
    """The notebook's indentation unit: that of the top-level object's first key."""
    second = raw.split("\n", 2)[1] if raw.count("\n") >= 1 else ""
    return second[: len(second) - len(second.lstrip())] or " "
