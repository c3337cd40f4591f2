"""Severity of a finding for the formats that carry one, and where a notebook finding sits."""

from __future__ import annotations

from torchlint.diagnostics import INTERNAL_ERROR, IO_ERROR, SYNTAX_ERROR, Diagnostic

# A file torchlint could not read or parse, or its own failure: that file's findings are missing.
ERROR_CODES = frozenset({SYNTAX_ERROR[0], IO_ERROR[0], INTERNAL_ERROR[0]})


def level(code: str) -> str:
    return "error" if code in ERROR_CODES else "warning"


def where(d: Diagnostic) -> str:
    """ "(cell 5, line 2) " before a notebook finding's message in formats whose rows are the
    .ipynb file's: the cell and the row within it, as the notebook shows them."""
    return f"(cell {d.cell}, line {d.start.row}) " if d.cell is not None else ""
