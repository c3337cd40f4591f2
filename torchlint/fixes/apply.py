"""Applying text edits to source, and the fix-to-fixpoint loop.

Edits of one pass are applied back to front so earlier offsets stay valid. A fix whose
edits overlap an already accepted fix waits for the next pass, where it is recomputed
against the new text by re-linting. Every pass's result must parse: a fix that breaks the
parse on its own is dropped and reported; one that breaks it only next to another fix
waits for the next pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from torchlint.diagnostics import Applicability, Diagnostic, Fix, Position
from torchlint.engine.stack import on_big_stack

MAX_PASSES = 10
_BARE_LF = re.compile(r"(?<!\r)\n")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # where libcst and Python's tokenizer start a new row


class FixError(Exception):
    """A fix run that could not finish: the result did not converge."""


def line_starts(text: str) -> list[int]:
    return [0] + [match.end() for match in _LINE_BREAK.finditer(text)]


def offset(starts: list[int], text: str, at: Position) -> int:
    if at.row > len(starts):
        return len(text)
    return min(starts[at.row - 1] + at.column - 1, len(text))


def newline_of(text: str) -> str:
    """The file's line ending, judged by its first line as editors and ruff do."""
    match = _LINE_BREAK.search(text)
    return match.group() if match else "\n"


def applies(fix: Fix | None, unsafe: bool) -> bool:
    if fix is None or not fix.edits:
        return False
    if fix.applicability is Applicability.SAFE:
        return True
    return unsafe and fix.applicability is Applicability.UNSAFE


def apply_fixes(text: str, fixes: list[Fix]) -> tuple[str, list[Fix]]:
    """Apply the fixes that do not overlap each other; returns the text and the fixes applied.

    Rules write `\\n` in their edits; in a CRLF (or CR) file those become `\\r\\n` (`\\r`), so
    a fix never leaves the file with mixed line endings.
    """
    starts = line_starts(text)
    newline = newline_of(text)
    accepted: list[Fix] = []
    spans: list[tuple[int, int]] = []
    edits: dict[tuple[int, int, str], None] = {}
    for fix in fixes:
        ranges = [
            (offset(starts, text, e.start), offset(starts, text, e.end), e.content)
            for e in fix.edits
        ]
        new = [
            (a, b, c) for a, b, c in ranges if (a, b, c) not in edits
        ]  # a shared import edit counts once
        if any(_overlaps(a, b, s, e) for a, b, _ in new for s, e in spans):
            continue
        accepted.append(fix)
        for a, b, c in new:
            edits[(a, b, c)] = None
            spans.append((a, b))
    result = text
    for a, b, content in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        if newline != "\n":
            content = _BARE_LF.sub(newline, content)
        if (
            a == len(result)
            and result
            and not result.endswith(("\n", "\r"))
            and content.endswith(("\n", "\r"))
        ):
            content = newline + content.rstrip(
                "\r\n"
            )  # keep a file without a final newline that way
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
    remaining: list[Diagnostic] = field(default_factory=list)  # what the final text still has


def fix_to_fixpoint(text: str, lint: Callable[[str], list[Diagnostic]], unsafe: bool) -> FixOutcome:
    """Lint, apply the applicable fixes, and repeat until nothing changes."""
    outcome = FixOutcome(text)
    dropped: set[tuple] = set()
    for _ in range(MAX_PASSES):
        found = lint(outcome.text)
        candidates = [
            d for d in found if applies(d.fix, unsafe) and _key(outcome.text, d) not in dropped
        ]
        new_text, chosen = _apply_parsing(outcome, candidates, dropped)
        if new_text == outcome.text:
            outcome.remaining = found
            return outcome
        outcome.text = new_text
        outcome.applied += chosen
    raise FixError(f"fixes did not converge after {MAX_PASSES} passes")


def _apply_parsing(
    outcome: FixOutcome, candidates: list[Diagnostic], dropped: set[tuple]
) -> tuple[str, list[Diagnostic]]:
    """The text with as many candidates applied as keep it parseable, and those candidates."""
    text = outcome.text
    if not candidates:
        return text, []
    new_text, accepted = apply_fixes(text, _fixes(candidates))
    chosen = [d for d in candidates if any(d.fix is f for f in accepted)]
    if _parses(new_text):
        return new_text, chosen
    kept: list[Diagnostic] = []
    for diagnostic in chosen:
        if not _parses(apply_fixes(text, _fixes([diagnostic]))[0]):
            dropped.add(_key(text, diagnostic))
            outcome.broken.append(diagnostic)
        elif _parses(apply_fixes(text, _fixes([*kept, diagnostic]))[0]):
            kept.append(diagnostic)
        # else: it clashes with a fix kept in this pass; the next pass recomputes it
    return apply_fixes(text, _fixes(kept))[0], kept


def _fixes(found: list[Diagnostic]) -> list[Fix]:
    """The fixes of findings chosen for their fixes (each has one)."""
    return [d.fix for d in found if d.fix is not None]


def _key(text: str, d: Diagnostic) -> tuple:
    """What a fix does, independent of where earlier fixes moved it."""
    assert d.fix is not None  # only findings with a fix to apply are keyed
    starts = line_starts(text)
    edits = tuple(
        (text[offset(starts, text, e.start) : offset(starts, text, e.end)], e.content)
        for e in d.fix.edits
    )
    return (d.code, d.fix.message, edits)


def _parses(text: str) -> bool:
    try:
        on_big_stack(cst.parse_module, text)
    except (cst.ParserSyntaxError, RecursionError):
        return False
    return True
