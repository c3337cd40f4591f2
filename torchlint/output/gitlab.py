"""`gitlab`: a GitLab Code Quality report, which merge requests show beside the diff.

An array of issues, each with a description, check name, severity and the file's path and
lines. GitLab matches an issue across pipelines by its fingerprint, so the fingerprint leaves out
the row (lines move as code is edited) and hashes the path, code and the line's text, numbered
among identical ones.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any

from torchlint.diagnostics import Diagnostic
from torchlint.output.levels import level, where


def _issue(d: Diagnostic, fingerprint: str) -> dict[str, Any]:
    return {
        "description": f"{d.code} [{d.name}] {where(d)}{d.message}",
        "check_name": d.code,
        "fingerprint": fingerprint,
        "severity": "critical" if level(d.code) == "error" else "major",
        "location": {"path": d.path, "lines": {"begin": d.file_start.row, "end": d.file_end.row}},
    }


def render_gitlab(diagnostics: list[Diagnostic]) -> str:
    seen: Counter[tuple[str, str, str]] = Counter()
    issues = []
    for d in diagnostics:
        key = (d.path, d.code, d.source_line.strip())
        seen[key] += 1
        digest = hashlib.sha256(
            "\0".join([*key, str(seen[key])]).encode("utf-8", "surrogateescape")
        ).hexdigest()
        issues.append(_issue(d, digest))
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"
