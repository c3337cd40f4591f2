"""The objects every room after the engine reads: findings, fixes and text edits.

Fixes are text edits rather than CST swaps because the fixer, JSON, SARIF and LSP code
actions all speak in text ranges, and one fix often needs two edits (an import and a wrap).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

from torchlint import REPOSITORY

_LINE_BREAK = re.compile(r"\r\n|\r|\n")

# Built-in codes: findings about a file rather than its code. They live here, not in the engine,
# so formatters can name them without importing the linter.
SYNTAX_ERROR = ("TL000", "syntax-error")
IO_ERROR = ("TL998", "io-error")
INTERNAL_ERROR = ("TL999", "internal-error")
# What each built-in code means, in one line and in full: SARIF describes them, `torchlint rule`
# prints them.
BUILTIN_DOCS = {
    SYNTAX_ERROR: (
        "The file could not be parsed or decoded",
        "The file is not valid Python (or not valid text in its declared encoding), so no "
        "rule could check it. Fix the syntax error, or exclude the file.",
    ),
    IO_ERROR: (
        "The file could not be read",
        "torchlint could not read the file (permissions, a broken link, not a regular file, "
        "too large, or a link that leads out of the project), so no rule checked it.",
    ),
    INTERNAL_ERROR: (
        "A rule failed on this file",
        "A rule raised an error while checking the file; the other rules still ran, and the "
        "run exits with code 2. This is a bug in torchlint: please report it with the file "
        "that triggers it (`--show-traceback` prints the traceback).",
    ),
}


def rule_url(code: str) -> str:
    """The rule's documentation page (`docs/rules/`), where each finding's `url` points."""
    return f"{REPOSITORY}/blob/main/docs/rules/{code}.md"


class Applicability(str, Enum):
    SAFE = "safe"  # keeps behaviour
    UNSAFE = "unsafe"  # may change behaviour; the rule's docs say when
    DISPLAY_ONLY = "display-only"  # shown, never applied


class FixAvailability(str, Enum):
    """What fixes a rule offers (`Rule.fix_availability`): none, or the applicability of its fixes."""

    NONE = "none"
    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


@dataclass(frozen=True, order=True)
class Position:
    """1-based row and 1-based column counted in code points."""

    row: int
    column: int


def source_lines(text: str) -> list[str]:
    """The lines that rows count, broken where Python's tokenizer and libcst break them: at
    \\n, \\r\\n and \\r only. `str.splitlines` also breaks at form feeds and Unicode line
    separators, which would shift every row after one. Without a \r, a plain split does it
    several times faster."""
    return text.split("\n") if "\r" not in text else _LINE_BREAK.split(text)


@dataclass(frozen=True)
class Edit:
    start: Position
    end: Position
    content: str


@dataclass(frozen=True)
class Fix:
    message: str
    applicability: Applicability
    edits: tuple[Edit, ...] = ()
    # The lowest torch (major, minor) whose API the edits write; below it the fix is not offered.
    min_torch: tuple[int, int] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class FileSpan:
    """Where a notebook finding lies in the `.ipynb` JSON text itself, for the formats that annotate
    the file (SARIF, GitHub, JUnit, ...): rows of its source lines, exact columns where the JSON
    string holds the line unescaped, and its fix as edits of the JSON text when they map exactly
    (None: the fix would need new lines or escapes, so those formats give no fix)."""

    start: Position
    end: Position
    edits: tuple[Edit, ...] | None = None


@dataclass(frozen=True)
class Diagnostic:
    code: str
    name: str
    message: str
    path: str
    start: Position
    end: Position
    fix: Fix | None = None
    cell: int | None = None
    url: str | None = None
    source_line: str = field(default="", compare=False)
    # Up to two lines above the start row and the lines after it through two below the end row,
    # for the `full` format's context; relative to the start row, so notebook mapping keeps them.
    context_before: tuple[str, ...] = field(default=(), compare=False, repr=False)
    context_after: tuple[str, ...] = field(default=(), compare=False, repr=False)
    # Rows whose suppression comments apply: the finding's row and its statement's first row.
    anchor_rows: tuple[int, ...] = field(default=(), compare=False, repr=False)
    # For internal errors: the traceback, printed with --show-traceback for bug reports.
    detail: str = field(default="", compare=False, repr=False)
    # A notebook finding's place in the .ipynb text (rows above are cell-relative).
    file_span: FileSpan | None = field(default=None, compare=False, repr=False)

    @property
    def file_start(self) -> Position:
        """The start as a row of the file on disk: in a notebook, the .ipynb line holding it."""
        return self.file_span.start if self.file_span is not None else self.start

    @property
    def file_end(self) -> Position:
        return self.file_span.end if self.file_span is not None else self.end

    @property
    def file_edits(self) -> tuple[Edit, ...]:
        """The fix's edits of the file on disk; none for a notebook fix that does not map exactly."""
        if self.fix is None:
            return ()
        if self.cell is None:
            return self.fix.edits
        return self.file_span.edits or () if self.file_span is not None else ()

    @property
    def fixable(self) -> bool:
        return self.fix is not None and self.fix.applicability is not Applicability.DISPLAY_ONLY

    def applicable(self, unsafe: bool) -> bool:
        """Whether the next `--fix` (with `--unsafe-fixes` when `unsafe`) applies this finding's fix."""
        if self.fix is None or not self.fix.edits:
            return False
        return self.fix.applicability is Applicability.SAFE or (
            unsafe and self.fix.applicability is Applicability.UNSAFE
        )

    def hidden_fix(self, unsafe: bool) -> bool:
        """An unsafe fix that only `--unsafe-fixes` would apply."""
        return (
            not unsafe
            and self.fix is not None
            and bool(self.fix.edits)
            and self.fix.applicability is Applicability.UNSAFE
        )

    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.start.row, self.start.column, self.code)
