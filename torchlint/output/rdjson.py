"""`rdjson`: reviewdog's Diagnostic Format, so reviewdog can comment on a pull request and
suggest the fixes (`reviewdog -f=rdjson`).

Positions are 1-based rows and columns of the file on disk (for a notebook, its .ipynb text);
a fix becomes suggestions only when it has edits of that file.
"""

from __future__ import annotations

import json
from typing import Any

from torchlint import REPOSITORY
from torchlint.diagnostics import Diagnostic, Position
from torchlint.output.levels import level, where


def _position(at: Position) -> dict[str, int]:
    return {"line": at.row, "column": at.column}


def _diagnostic(d: Diagnostic) -> dict[str, Any]:
    found: dict[str, Any] = {
        "message": f"[{d.name}] {where(d)}{d.message}",
        "location": {
            "path": d.path,
            "range": {"start": _position(d.file_start), "end": _position(d.file_end)},
        },
        "severity": level(d.code).upper(),
        "code": {"value": d.code, **({"url": d.url} if d.url else {})},
    }
    if d.fixable and d.file_edits:
        found["suggestions"] = [
            {"range": {"start": _position(e.start), "end": _position(e.end)}, "text": e.content}
            for e in d.file_edits
        ]
    return found


def render_rdjson(diagnostics: list[Diagnostic]) -> str:
    report = {
        "source": {"name": "torchlint", "url": REPOSITORY},
        "severity": "WARNING",
        "diagnostics": [_diagnostic(d) for d in diagnostics],
    }
    return json.dumps(report, indent=2, ensure_ascii=False) + "\n"
