"""TL100 unused-noqa."""

from __future__ import annotations

import re
from collections.abc import Sequence

from torchlint.diagnostics import (
    Applicability,
    Diagnostic,
    Edit,
    Fix,
    FixAvailability,
    Position,
    source_lines,
)
from torchlint.rule import Invalid, Named, Rule, Valid
from torchlint.suppressions import Suppressions, noqa_codes, normalise


class UnusedNoqa(Rule):
    code = "TL100"
    name = "unused-noqa"
    summary = "A `# noqa` code that suppresses no finding"
    default_enabled = False
    fix_availability = FixAvailability.SAFE
    fix_versions = {"a comment (no torch API)": "1.0"}
    tokens = ("noqa", "NOQA", "NoQA")
    reviews_suppressions = True
    docs = """
## What it does
Reports the codes of `# noqa: CODE` comments that suppress nothing, for the torchlint rules
that ran on the file. Codes of other tools (`E501`) and of rules that are not enabled are left
alone, since another tool or another selection may need them. Opt-in, like Ruff's RUF100.

## Why is this bad?
A suppression outlives the code it was written for: after a refactor it hides nothing today
and silently hides the next real finding on that line.

## Example
```python
x = torch.ones(3)  # noqa: TL003
```

## Use instead
```python
x = torch.ones(3)
```

## Fix safety
Safe: it removes only the unused codes, or the whole comment when no code is left, and a code
that suppresses nothing changes nothing when it goes.

## References
- Ruff's `unused-noqa` (RUF100), which this rule follows.
"""
    valid = [
        Valid(
            """
            import torch
            m = torch.nn.DataParallel(m)  # noqa: TL004
            """
        ),
        Valid(
            """
            x = 1  # noqa: E501
            """
        ),
        Valid(
            """
            x = 1  # noqa
            """
        ),
    ]
    invalid = [
        Invalid(
            """
            x = 1  # noqa: TL100
            """,
            fixed="""
            x = 1
            """,
            line=1,
            column=8,
            message="Unused `noqa` for TL100: nothing to suppress here",
        ),
        Invalid(
            """
            x = 1  # keep  # noqa: unused-noqa, E501
            """,
            fixed="""
            x = 1  # keep  # noqa: E501
            """,
            line=1,
            column=16,
            message="Unused `noqa` for unused-noqa: nothing to suppress here",
        ),
    ]

    @classmethod
    def review(
        cls,
        path: str,
        text: str,
        suppressions: Suppressions,
        used: set[tuple[int, str]],
        enabled: Sequence[Named],
    ) -> list[Diagnostic]:
        """One finding per noqa comment with codes of `enabled` rules that suppressed nothing."""
        known = {rule.code for rule in enabled} | {rule.name for rule in enabled}
        lines = source_lines(text)
        found = []
        for row, (column, comment) in sorted(suppressions.noqa_comments.items()):
            match = noqa_codes(comment)
            if match is None:
                continue
            written = [c for c in re.split(r"[\s,]+", match.group("codes")) if c]
            unused = [
                c for c in written if normalise(c) in known and (row, normalise(c)) not in used
            ]
            if unused:
                found.append(
                    cls._finding(path, lines[row - 1], row, column, match, written, unused)
                )
        return found

    @classmethod
    def _finding(
        cls,
        path: str,
        line: str,
        row: int,
        column: int,
        match: re.Match[str],
        written: list[str],
        unused: list[str],
    ) -> Diagnostic:
        start, end = (
            Position(row, column + match.start() + 1),
            Position(row, column + match.end() + 1),
        )
        left = [c for c in written if c not in unused]
        if left:
            edit = Edit(start, end, f"# noqa: {', '.join(left)}")
        else:  # the whole noqa comment, and the blanks before it
            before = line[: column + match.start()]
            edit = Edit(Position(row, len(before.rstrip()) + 1), end, "")
        message = f"Unused `noqa` for {', '.join(unused)}: nothing to suppress here"
        action = "Remove the unused code" if left else "Remove the unused `noqa` comment"
        fix = Fix(action, Applicability.SAFE, (edit,), min_torch=(1, 0))
        return Diagnostic(
            cls.code, cls.name, message, path, start, end, fix, source_line=line, anchor_rows=(row,)
        )
