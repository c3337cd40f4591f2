"""Severity of a finding for the formats that carry one (github, sarif, junit)."""

from __future__ import annotations

from torchlint.diagnostics import INTERNAL_ERROR, IO_ERROR, SYNTAX_ERROR

# A file torchlint could not read or parse, or its own failure: that file's findings are missing.
ERROR_CODES = frozenset({SYNTAX_ERROR[0], IO_ERROR[0], INTERNAL_ERROR[0]})


def level(code: str) -> str:
    return "error" if code in ERROR_CODES else "warning"
