"""Human formats: `full` (source with two lines of context, a gutter, a caret and the fix hint),
`concise` (one line each) and `grouped` (findings listed under their file, as ruff's grouped
format does). Colour, when asked for, is ANSI escapes around the same text."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby

from torchlint.diagnostics import Applicability, Diagnostic

_FIX_LABEL = {
    Applicability.SAFE: "fix",
    Applicability.UNSAFE: "unsafe fix",
    Applicability.DISPLAY_ONLY: "help",
}
_BOLD, _RED, _CYAN, _BLUE = "1", "31", "36", "34"


@dataclass(frozen=True)
class Style:
    """How a run prints: in colour or not, and which fixes `--fix` applies (those get `[*]`)."""

    color: bool = False
    unsafe_fixes: bool = False

    def paint(self, text: str, *codes: str) -> str:
        return f"\x1b[{';'.join(codes)}m{text}\x1b[0m" if self.color and text else text


PLAIN = Style()


def _row_col(d: Diagnostic) -> str:
    cell = f"cell {d.cell}:" if d.cell is not None else ""
    return f"{cell}{d.start.row}:{d.start.column}"


def _marker(d: Diagnostic, style: Style) -> str:
    """`[*]` flags what the next `--fix` changes, as ruff does: not a fix that it would hold back."""
    return style.paint("[*]", _CYAN) + " " if d.applicable(style.unsafe_fixes) else ""


def _head(d: Diagnostic, style: Style, sep: str = ":") -> str:
    return f"{style.paint(d.path, _BOLD)}{sep}{_row_col(d)}:"


def concise(diagnostics: list[Diagnostic], style: Style = PLAIN) -> str:
    return "".join(
        f"{_head(d, style)} {style.paint(d.code, _BOLD, _RED)} {_marker(d, style)}{d.message}\n"
        for d in diagnostics
    )


def grouped(diagnostics: list[Diagnostic], style: Style = PLAIN) -> str:
    blocks = []
    for path, group in groupby(diagnostics, key=lambda d: d.path):
        found = list(group)
        width = max(len(_row_col(d)) for d in found)
        lines = [f"{style.paint(path, _BOLD)}:"]
        lines += [
            f"  {_row_col(d):<{width}} {style.paint(d.code, _BOLD, _RED)} {_marker(d, style)}{d.message}"
            for d in found
        ]
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def _caret(d: Diagnostic) -> str:
    """Carets under the finding's span, indented with the line's own tabs so they line up."""
    line = d.source_line
    start = min(d.start.column - 1, len(line))
    indent = "".join("\t" if ch == "\t" else " " for ch in line[:start])
    end = d.end.column - 1 if d.end.row == d.start.row else len(line)
    return indent + "^" * max(1, end - start)


def _snippet(d: Diagnostic, style: Style) -> list[str]:
    """The finding's line between up to two lines either side, each behind a line-number gutter."""
    first = d.start.row - len(d.context_before)
    rows = [*d.context_before, d.source_line, *d.context_after]
    width = len(str(first + len(rows) - 1))
    out = []
    for row, line in enumerate(rows, start=first):
        gutter = style.paint(f"{row:>{width}} |", _BLUE)
        out.append(f"{gutter} {line}" if line else gutter)
        if row == d.start.row:
            out.append(
                f"{style.paint(' ' * width + ' |', _BLUE)} {style.paint(_caret(d), _RED, _BOLD)}"
            )
    return out


def _full_block(d: Diagnostic, style: Style) -> str:
    lines = [
        f"{_head(d, style)} {style.paint(d.code, _BOLD, _RED)} {_marker(d, style)}[{d.name}] {d.message}"
    ]
    if d.source_line:
        lines += _snippet(d, style)
    if d.fix is not None:
        lines.append(f"  = {style.paint(_FIX_LABEL[d.fix.applicability], _CYAN)}: {d.fix.message}")
    return "\n".join(lines) + "\n"


def full(diagnostics: list[Diagnostic], style: Style = PLAIN) -> str:
    return "\n".join(_full_block(d, style) for d in diagnostics)
