"""`# noqa`, `# torchlint: ignore[...]` and file-wide `# torchlint: noqa` comments.

A line scan finds candidate comments cheaply; only a file that has some is tokenized, so
that text inside a string which looks like a comment suppresses nothing.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from torchlint.diagnostics import Diagnostic, source_lines

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z0-9_-]+(?:[\s,]+[A-Za-z0-9_-]+)*))?", re.IGNORECASE)
_IGNORE = re.compile(r"#\s*torchlint:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
_FILE_NOQA = re.compile(r"^\s*#\s*torchlint:\s*noqa\s*$", re.IGNORECASE)
ALL = frozenset({"*"})


@dataclass
class Suppressions:
    whole_file: bool = False
    # row -> codes suppressed on that row ("*" for all)
    rows: dict[int, frozenset[str]] = field(default_factory=dict)

    def suppresses(self, diagnostic: Diagnostic, rows: tuple[int, ...]) -> bool:
        if self.whole_file:
            return True
        for row in rows:
            codes = self.rows.get(row)
            if codes is not None and ("*" in codes or diagnostic.code in codes or diagnostic.name in codes):
                return True
        return False


def _codes(text: str | None) -> frozenset[str]:
    if not text:
        return ALL
    return frozenset(c.strip().upper() if c.strip()[:2].upper() == "TL" else c.strip().lower() for c in re.split(r"[\s,]+", text) if c.strip())


def scan(source: str) -> Suppressions:
    if "#" not in source:
        return Suppressions()
    found = _collect(_line_comments(source))
    if not (found.whole_file or found.rows):
        return found
    try:
        return _collect(_token_comments(source))
    except (tokenize.TokenError, SyntaxError):  # libcst accepts a little more than tokenize
        return found


# (row, comment text from its `#`, whether the comment is alone on its line)
Comment = tuple[int, str, bool]


def _line_comments(source: str) -> Iterator[Comment]:
    for row, line in enumerate(source_lines(source), start=1):
        at = line.find("#")
        if at >= 0:
            yield row, line[at:], not line[:at].strip()


def _token_comments(source: str) -> Iterator[Comment]:
    # newline=None: rows break at \r too, as libcst's positions do.
    for token in tokenize.generate_tokens(io.StringIO(source, newline=None).readline):
        if token.type == tokenize.COMMENT:
            row, column = token.start
            yield row, token.string, not token.line[:column].strip()


def _collect(comments: Iterable[Comment]) -> Suppressions:
    found = Suppressions()

    def add(row: int, codes: frozenset[str]) -> None:
        found.rows[row] = found.rows.get(row, frozenset()) | codes

    for row, comment, alone in comments:
        if alone and _FILE_NOQA.match(comment):
            found.whole_file = True
            return found
        if match := _NOQA.search(comment):
            add(row, _codes(match.group("codes")))
        if match := _IGNORE.search(comment):
            add(row, _codes(match.group("codes")))
            if alone:  # on its own line: applies to the next line
                add(row + 1, _codes(match.group("codes")))
    return found
