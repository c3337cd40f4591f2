"""`sarif`: SARIF 2.1.0, the format code-scanning services (GitHub, GitLab, Azure) ingest.

One run; the driver lists every rule with its documentation so a viewer can explain a
finding without torchlint installed; fixes with edits become SARIF `fixes`. Paths are
relative URIs resolved against `%SRCROOT%` (the working directory), as viewers expect.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from torchlint import __version__
from torchlint.diagnostics import (
    INTERNAL_ERROR,
    IO_ERROR,
    SYNTAX_ERROR,
    Diagnostic,
    Edit,
    Fix,
    Position,
    rule_url,
)
from torchlint.output.levels import level
from torchlint.registry import all_rules

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"

# The engine's own findings have no Rule class; describe them here so every ruleId resolves.
_BUILTIN = {
    SYNTAX_ERROR: (
        "The file could not be parsed or decoded",
        "The file is not valid Python (or not valid text in its declared encoding), so no "
        "rule could check it. Fix the syntax error, or exclude the file.",
    ),
    IO_ERROR: (
        "The file could not be read",
        "torchlint could not read the file (permissions, a broken link, or not a regular "
        "file), so no rule checked it.",
    ),
    INTERNAL_ERROR: (
        "A rule failed on this file",
        "A rule raised an error while checking the file; the other rules still ran. This is "
        "a bug in torchlint: please report it with the file that triggers it.",
    ),
}


def _descriptor(
    code: str, name: str, summary: str, docs: str, default_level: str, enabled: bool
) -> dict[str, Any]:
    return {
        "id": code,
        "name": name,
        "shortDescription": {"text": summary},
        "fullDescription": {"text": docs, "markdown": docs},
        "help": {"text": summary, "markdown": docs},
        "defaultConfiguration": {"level": default_level, "enabled": enabled},
    }


def _descriptors() -> list[dict[str, Any]]:
    found = [
        _descriptor(code, name, short, long, "error", True)
        for (code, name), (short, long) in _BUILTIN.items()
    ]
    for rule in all_rules():
        found.append(
            _descriptor(
                rule.code,
                rule.name,
                rule.summary,
                rule.docs.strip(),
                "warning",
                rule.default_enabled,
            )
        )
        found[-1]["helpUri"] = rule_url(rule.code)
        found[-1]["properties"] = {"fixAvailability": rule.fix_availability.value}
    return sorted(found, key=lambda descriptor: descriptor["id"])


def _artifact(path: str) -> dict[str, str]:
    """A relative path as a URI under %SRCROOT%; an absolute one as a file: URI."""
    if Path(path).is_absolute():
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(PurePosixPath(path.replace("\\", "/")).as_posix()), "uriBaseId": SRCROOT}


def _region(start: Position, end: Position) -> dict[str, int]:
    return {
        "startLine": start.row,
        "startColumn": start.column,
        "endLine": end.row,
        "endColumn": end.column,
    }


def _replacement(edit: Edit) -> dict[str, Any]:
    return {
        "deletedRegion": _region(edit.start, edit.end),
        "insertedContent": {"text": edit.content},
    }


def _fix(path: str, fix: Fix, edits: tuple[Edit, ...]) -> dict[str, Any]:
    return {
        "description": {"text": fix.message},
        "artifactChanges": [
            {"artifactLocation": _artifact(path), "replacements": [_replacement(e) for e in edits]}
        ],
        "properties": {"applicability": fix.applicability.value},
    }


def _result(d: Diagnostic, index: dict[str, int]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": d.code,
        "level": level(d.code),
        "message": {"text": d.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": _artifact(d.path),
                    "region": _region(d.file_start, d.file_end),
                }
            }
        ],
    }
    if d.code in index:
        result["ruleIndex"] = index[d.code]
    if d.fix is not None and d.file_edits:
        result["fixes"] = [_fix(d.path, d.fix, d.file_edits)]
    if d.cell is not None:  # the region is in the .ipynb text; the cell and its own rows ride along
        result["properties"] = {"cell": d.cell, "cellRegion": _region(d.start, d.end)}
    return result


def render_sarif(diagnostics: list[Diagnostic]) -> str:
    rules = _descriptors()
    index = {descriptor["id"]: i for i, descriptor in enumerate(rules)}
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "torchlint", "version": __version__, "rules": rules}},
                "originalUriBaseIds": {SRCROOT: {"uri": Path.cwd().as_uri() + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": [_result(d, index) for d in diagnostics],
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"
