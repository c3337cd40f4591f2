"""`# noqa`, `# torchlint: ignore[...]` and file-wide `# torchlint: noqa` comments.

Comments are found with a line scan rather than tokenize: only lines with a `#` are looked
at, so the cost is proportional to the comments, not to the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from torchlint.diagnostics import Diagnostic

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
    found = Suppressions()
    if "#" not in source:
        return found
    for row, line in enumerate(source.splitlines(), start=1):
        if "#" not in line:
            continue
        if _FILE_NOQA.match(line):
            found.whole_file = True
            return found
        comment = line[line.index("#"):]
        if match := _NOQA.search(comment):
            found.rows[row] = found.rows.get(row, frozenset()) | _codes(match.group("codes"))
        if match := _IGNORE.search(comment):
            codes = _codes(match.group("codes"))
            found.rows[row] = found.rows.get(row, frozenset()) | codes
            if not line[: line.index("#")].strip():  # on its own line: applies to the next line
                found.rows[row + 1] = found.rows.get(row + 1, frozenset()) | codes
    return found
