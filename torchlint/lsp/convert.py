"""torchlint findings as LSP diagnostics, carrying their fix so code actions need no re-lint.

`data` holds the fix in the JSON output's shape (1-based code-point positions, independent
of the position encoding), the rows where a `# noqa` comment would apply, and the document
version the positions belong to.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from torchlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Position
from torchlint.engine.lint import SYNTAX_ERROR
from torchlint.lsp.positions import Lines
from torchlint.output.json_format import as_dict

SOURCE = "torchlint"
_ERROR, _WARNING = types.DiagnosticSeverity.Error, types.DiagnosticSeverity.Warning


def to_lsp(diagnostic: Diagnostic, lines: Lines, version: int | None) -> types.Diagnostic:
    start, end = diagnostic.start, diagnostic.end
    if start == end and start.column <= len(lines.line(start.row)):
        end = Position(start.row, start.column + 1)  # an empty range is invisible in some editors
    return types.Diagnostic(
        range=lines.range(start, end),
        message=diagnostic.message,
        severity=_ERROR if diagnostic.code == SYNTAX_ERROR[0] else _WARNING,
        code=diagnostic.code,
        code_description=types.CodeDescription(href=diagnostic.url) if diagnostic.url else None,
        source=SOURCE,
        data={
            "fix": as_dict(diagnostic)["fix"],
            "rows": list(diagnostic.anchor_rows or (diagnostic.start.row,)),
            "version": version,
        },
    )


def _position(value: dict[str, Any]) -> Position:
    return Position(int(value["row"]), int(value["column"]))


def fix_from_data(data: Any) -> Fix | None:
    """The fix a diagnostic's `data` carries, or None when it carries none or is malformed."""
    fix = data.get("fix") if isinstance(data, dict) else None
    if not isinstance(fix, dict):
        return None
    try:
        edits = tuple(
            Edit(_position(e["location"]), _position(e["end_location"]), str(e["content"]))
            for e in fix["edits"]
        )
        return Fix(str(fix["message"]), Applicability(fix["applicability"]), edits)
    except (KeyError, TypeError, ValueError):
        return None
