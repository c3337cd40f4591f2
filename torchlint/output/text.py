"""Human formats: `full` (source line, caret and fix hint), `concise` (one line each) and
`grouped` (findings listed under their file, as ruff's grouped format does)."""

from __future__ import annotations

from itertools import groupby

from torchlint.diagnostics import Applicability, Diagnostic

_FIX_LABEL = {Applicability.SAFE: "fix", Applicability.UNSAFE: "unsafe fix", Applicability.DISPLAY_ONLY: "help"}


def _row_col(d: Diagnostic) -> str:
    cell = f"cell {d.cell}:" if d.cell is not None else ""
    return f"{cell}{d.start.row}:{d.start.column}"


def _marker(d: Diagnostic) -> str:
    """`[*]` flags what `torchlint fix` can change, as ruff does."""
    return "[*] " if d.fixable else ""


def concise(diagnostics: list[Diagnostic]) -> str:
    return "".join(f"{d.path}:{_row_col(d)}: {d.code} {_marker(d)}{d.message}\n" for d in diagnostics)


def grouped(diagnostics: list[Diagnostic]) -> str:
    blocks = []
    for path, found in groupby(diagnostics, key=lambda d: d.path):
        found = list(found)
        width = max(len(_row_col(d)) for d in found)
        lines = [f"{path}:"]
        lines += [f"  {_row_col(d):<{width}} {d.code} {_marker(d)}{d.message}" for d in found]
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def _caret(d: Diagnostic) -> str:
    """Carets under the finding's span, indented with the line's own tabs so they line up."""
    line = d.source_line
    start = min(d.start.column - 1, len(line))
    indent = "".join("\t" if ch == "\t" else " " for ch in line[:start])
    end = d.end.column - 1 if d.end.row == d.start.row else len(line)
    return indent + "^" * max(1, end - start)


def _full_block(d: Diagnostic) -> str:
    lines = [f"{d.path}:{_row_col(d)}: {d.code} [{d.name}] {d.message}"]
    if d.source_line:
        gutter = f"{d.start.row} | "
        lines.append(f"{gutter}{d.source_line}")
        lines.append(" " * len(gutter) + _caret(d))
    if d.fix is not None:
        lines.append(f"  = {_FIX_LABEL[d.fix.applicability]}: {d.fix.message}")
    if d.url:
        lines.append(f"  = docs: {d.url}")
    return "\n".join(lines) + "\n"


def full(diagnostics: list[Diagnostic]) -> str:
    return "\n".join(_full_block(d) for d in diagnostics)
