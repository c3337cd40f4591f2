"""Human formats: `full` (with the source line and a caret) and `concise` (one line each)."""

from __future__ import annotations

from torchlint.diagnostics import Diagnostic


def _where(d: Diagnostic) -> str:
    cell = f"cell {d.cell}:" if d.cell is not None else ""
    return f"{d.path}:{cell}{d.start.row}:{d.start.column}"


def concise(diagnostics: list[Diagnostic]) -> str:
    return "".join(f"{_where(d)}: {d.code} {d.message}\n" for d in diagnostics)


def full(diagnostics: list[Diagnostic]) -> str:
    blocks = []
    for d in diagnostics:
        lines = [f"{_where(d)}: {d.code} [{d.name}] {d.message}"]
        if d.source_line:
            width = max(1, (d.end.column - d.start.column) if d.end.row == d.start.row else len(d.source_line) - d.start.column + 1)
            gutter = f"{d.start.row} | "
            lines.append(f"{gutter}{d.source_line}")
            lines.append(" " * (len(gutter) + d.start.column - 1) + "^" * width)
        if d.fix is not None:
            kind = {"safe": "fix", "unsafe": "unsafe fix", "display-only": "help"}[d.fix.applicability.value]
            lines.append(f"  = {kind}: {d.fix.message}")
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)
