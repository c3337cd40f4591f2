"""`# noqa`, `# torchlint: ignore[...]` and file-wide `# torchlint: noqa` comments.

A line scan finds candidate comments cheaply; only a file that has some is tokenized, so
that text inside a string which looks like a comment suppresses nothing.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from torchlint.diagnostics import Diagnostic, source_lines

_NOQA = re.compile(
    r"#\s*noqa(?::\s*(?P<codes>[A-Za-z0-9_-]+(?:[\s,]+[A-Za-z0-9_-]+)*))?", re.IGNORECASE
)
_IGNORE = re.compile(r"#\s*torchlint:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
_FILE_NOQA = re.compile(r"^\s*#\s*torchlint:\s*noqa\s*$", re.IGNORECASE)
ALL = frozenset({"*"})


@dataclass
class Suppressions:
    whole_file: bool = False
    # row -> codes suppressed on that row ("*" for all)
    rows: dict[int, frozenset[str]] = field(default_factory=dict)
    # row -> (0-based column, comment text) of each noqa comment that names codes, for unused-noqa
    noqa_comments: dict[int, tuple[int, str]] = field(default_factory=dict)

    def suppresses(self, diagnostic: Diagnostic, rows: tuple[int, ...]) -> bool:
        return self.used_by(diagnostic, rows) is not None

    def used_by(self, diagnostic: Diagnostic, rows: tuple[int, ...]) -> tuple[int, str] | None:
        """The (row, code as normalised) of the comment that suppresses `diagnostic`, if one does."""
        if self.whole_file:
            return (0, "*")
        for row in rows:
            codes = self.rows.get(row, ())
            for code in ("*", diagnostic.code, diagnostic.name):
                if code in codes:
                    return row, code
        return None

    def filter(
        self, found: list[Diagnostic], keep: Callable[[Diagnostic], bool]
    ) -> tuple[list[Diagnostic], set[tuple[int, str]]]:
        """The findings no comment suppresses (and those `keep` says stay), and the comments used."""
        kept, used = [], set()
        for d in found:
            by = None if keep(d) else self.used_by(d, d.anchor_rows)
            if by is None:
                kept.append(d)
            else:
                used.add(by)
        return kept, used


def normalise(code: str) -> str:
    """A code as comments are matched: codes upper-case, rule names lower-case."""
    code = code.strip()
    return code.upper() if code[:2].upper() == "TL" else code.lower()


def noqa_codes(comment: str) -> re.Match[str] | None:
    """The `# noqa: CODES` in a comment, with the codes in group "codes"."""
    match = _NOQA.search(comment)
    return match if match and match.group("codes") else None


def _codes(text: str | None) -> frozenset[str]:
    if not text:
        return ALL
    return frozenset(normalise(c) for c in re.split(r"[\s,]+", text) if c.strip())


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


# (row, 0-based column, comment text from its `#`, whether the comment is alone on its line)
Comment = tuple[int, int, str, bool]


def _line_comments(source: str) -> Iterator[Comment]:
    for row, line in enumerate(source_lines(source), start=1):
        at = line.find("#")
        if at >= 0:
            yield row, at, line[at:], not line[:at].strip()


def _token_comments(source: str) -> Iterator[Comment]:
    # newline=None: rows break at \r too, as libcst's positions do.
    for token in tokenize.generate_tokens(io.StringIO(source, newline=None).readline):
        if token.type == tokenize.COMMENT:
            row, column = token.start
            yield row, column, token.string, not token.line[:column].strip()


def _collect(comments: Iterable[Comment]) -> Suppressions:
    found = Suppressions()

    def add(row: int, codes: frozenset[str]) -> None:
        found.rows[row] = found.rows.get(row, frozenset()) | codes

    for row, column, comment, alone in comments:
        if alone and _FILE_NOQA.match(comment):
            found.whole_file = True
            return found
        if match := _NOQA.search(comment):
            add(row, _codes(match.group("codes")))
            if match.group("codes"):
                found.noqa_comments[row] = (column, comment)
        if match := _IGNORE.search(comment):
            add(row, _codes(match.group("codes")))
            if alone:  # on its own line: applies to the next line
                add(row + 1, _codes(match.group("codes")))
    return found
