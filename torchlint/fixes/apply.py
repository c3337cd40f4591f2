"""Applying text edits to source, and the fix-to-fixpoint loop.

Edits of one pass are applied back to front so earlier offsets stay valid. A fix whose
edits overlap an already accepted fix waits for the next pass, where it is recomputed
against the new text by re-linting.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import libcst as cst

from torchlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Position

MAX_PASSES = 10


class FixError(Exception):
    """A fix run that could not finish: the result did not converge."""


def line_starts(text: str) -> list[int]:
    starts = [0]
    for i, char in enumerate(text):
        if char == "\n":
            starts.append(i + 1)
    return starts


def offset(starts: list[int], text: str, at: Position) -> int:
    if at.row > len(starts):
        return len(text)
    return min(starts[at.row - 1] + at.column - 1, len(text))


def applies(fix: Fix | None, unsafe: bool) -> bool:
    if fix is None or not fix.edits:
        return False
    if fix.applicability is Applicability.SAFE:
        return True
    return unsafe and fix.applicability is Applicability.UNSAFE


def apply_fixes(text: str, fixes: list[Fix]) -> tuple[str, list[Fix]]:
    """Apply the fixes that do not overlap each other; returns the text and the fixes applied."""
    starts = line_starts(text)
    accepted: list[Fix] = []
    spans: list[tuple[int, int]] = []
    edits: dict[tuple[int, int, str], None] = {}
    for fix in fixes:
        ranges = [(offset(starts, text, e.start), offset(starts, text, e.end), e.content) for e in fix.edits]
        new = [(a, b, c) for a, b, c in ranges if (a, b, c) not in edits]  # a shared import edit counts once
        if any(_overlaps(a, b, s, e) for a, b, _ in new for s, e in spans):
            continue
        accepted.append(fix)
        for a, b, c in new:
            edits[(a, b, c)] = None
            spans.append((a, b))
    result = text
    for a, b, content in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        if a == len(result) and content and result and not result.endswith("\n") and content.endswith("\n"):
            content = "\n" + content.rstrip("\n")
        result = result[:a] + content + result[b:]
    return result, accepted


def _overlaps(a: int, b: int, s: int, e: int) -> bool:
    if a == b or s == e:  # insertions conflict only when strictly inside another edit
        return s < a < e or a < s < b
    return a < e and s < b


@dataclass
class FixOutcome:
    text: str
    applied: list[Diagnostic] = field(default_factory=list)
    broken: list[Diagnostic] = field(default_factory=list)  # fixes whose result did not parse


def fix_to_fixpoint(text: str, lint: Callable[[str], list[Diagnostic]], unsafe: bool) -> FixOutcome:
    """Lint, apply the applicable fixes, and repeat until nothing changes."""
    outcome = FixOutcome(text)
    dropped: set[tuple[str, int, int]] = set()
    for _ in range(MAX_PASSES):
        candidates = [d for d in lint(outcome.text) if applies(d.fix, unsafe) and _key(d) not in dropped]
        if not candidates:
            return outcome
        new_text, accepted = apply_fixes(outcome.text, [d.fix for d in candidates])
        chosen = [d for d in candidates if any(d.fix is f for f in accepted)]
        if _parses(new_text):
            outcome.text = new_text
            outcome.applied += chosen
            continue
        # Find the fixes that break the parse one by one, drop them, keep the rest.
        for diagnostic in chosen:
            alone, _ = apply_fixes(outcome.text, [diagnostic.fix])
            if not _parses(alone):
                dropped.add(_key(diagnostic))
                outcome.broken.append(diagnostic)
    raise FixError(f"fixes did not converge after {MAX_PASSES} passes")


def _key(d: Diagnostic) -> tuple[str, int, int]:
    return (d.code, d.start.row, d.start.column)


def _parses(text: str) -> bool:
    try:
        cst.parse_module(text)
    except (cst.ParserSyntaxError, RecursionError):
        return False
    return True
