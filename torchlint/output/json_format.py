"""`json` and `json-lines`: the contract scripts, CI and editors depend on (see DESIGN.md)."""

from __future__ import annotations

import json
from typing import Any

from torchlint.diagnostics import Diagnostic, Position


def _position(at: Position) -> dict[str, int]:
    return {"row": at.row, "column": at.column}


def as_dict(d: Diagnostic) -> dict[str, Any]:
    fix = None
    if d.fix is not None:
        fix = {
            "applicability": d.fix.applicability.value,
            "message": d.fix.message,
            "edits": [
                {
                    "content": e.content,
                    "location": _position(e.start),
                    "end_location": _position(e.end),
                }
                for e in d.fix.edits
            ],
        }
    return {
        "code": d.code,
        "name": d.name,
        "message": d.message,
        "filename": d.path,
        "cell": d.cell,
        "location": _position(d.start),
        "end_location": _position(d.end),
        "fix": fix,
        "url": d.url,
    }


def render_json(diagnostics: list[Diagnostic]) -> str:
    return json.dumps([as_dict(d) for d in diagnostics], indent=2, ensure_ascii=False) + "\n"


def as_file_dict(d: Diagnostic) -> dict[str, Any]:
    """`as_dict` with positions in the file on disk: a notebook finding's rows and fix edits point
    into the .ipynb text (no fix edits where they do not map exactly); its cell-relative
    positions move to `cell_location` and `cell_end_location`."""
    found = as_dict(d)
    if d.cell is None:
        return found
    found["cell_location"], found["cell_end_location"] = found["location"], found["end_location"]
    found["location"], found["end_location"] = _position(d.file_start), _position(d.file_end)
    if found["fix"] is not None:
        found["fix"]["edits"] = [
            {"content": e.content, "location": _position(e.start), "end_location": _position(e.end)}
            for e in d.file_edits
        ]
    return found


def render_json_lines(diagnostics: list[Diagnostic]) -> str:
    return "".join(json.dumps(as_file_dict(d), ensure_ascii=False) + "\n" for d in diagnostics)
