"""Suppression comments in the editor: the code under the cursor, and adding `# noqa: CODE`.

The comment syntax is the one torchlint.suppressions honours, so what the editor adds is
exactly what the linter reads.
"""

from __future__ import annotations

import io
import re
import tokenize

from torchlint.diagnostics import Edit, Position
from torchlint.suppressions import _IGNORE, _NOQA

_CODE = re.compile(r"[A-Za-z0-9_-]+")


def code_at(line: str, column: int) -> tuple[str, int, int] | None:
    """The rule code or name under 0-based code-point `column` in a suppression comment,
    with its 0-based start and end columns."""
    for pattern in (_NOQA, _IGNORE):
        for match in pattern.finditer(line):
            codes = match.group("codes")
            if not codes:
                continue
            base = match.start("codes")
            for code in _CODE.finditer(codes):
                start, end = base + code.start(), base + code.end()
                if start <= column <= end:
                    return code.group(), start, end
    return None


def disable_edit(text: str, lines: list[str], rows: list[int], code: str) -> Edit | None:
    """The edit that suppresses `code` with a comment on the first of `rows` that can hold one.

    A row whose end lies inside a multi-line string or is continued by a backslash cannot;
    an existing `# noqa: X` comment is extended instead of adding a second one.
    """
    comments, blocked = _scan(text, max(rows))
    if comments is None:
        return None
    for row in rows:
        if row in blocked or not 0 < row <= len(lines):
            continue
        line = lines[row - 1]
        if row in comments:
            column, comment = comments[row]
            match = _NOQA.search(comment)
            if match and not match.group("codes"):
                return None  # a bare noqa comment already suppresses everything
            if match:
                at = Position(row, column + match.end("codes") + 1)
                return Edit(at, at, f", {code}")
        elif line.rstrip().endswith("\\"):
            continue
        kept = len(line.rstrip())
        return Edit(Position(row, kept + 1), Position(row, len(line) + 1), f"  # noqa: {code}")
    return None


def _scan(text: str, last_row: int) -> tuple[dict[int, tuple[int, str]] | None, set[int]]:
    """Comments by row, and rows that end inside a token, up to `last_row`.

    Universal newlines make tokenize's rows those of LSP even for `\\r` line endings.
    """
    comments: dict[int, tuple[int, str]] = {}
    blocked: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
            if token.start[0] > last_row:
                break
            if token.type == tokenize.COMMENT:
                comments[token.start[0]] = (token.start[1], token.string)
            blocked.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError):
        return None, blocked
    return comments, blocked
