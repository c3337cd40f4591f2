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
    BUILTIN_DOCS,
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
        for (code, name), (short, long) in BUILTIN_DOCS.items()
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
