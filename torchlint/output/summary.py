"""The lines that close a human-readable report, and `--statistics`.

Fix counts are what the next `--fix` applies, no more: a safe fix with edits, or an unsafe
one when `--unsafe-fixes` is on; the unsafe rest is counted as hidden, as Ruff does.
"""

from __future__ import annotations

import json
from collections import Counter

from torchlint.diagnostics import Diagnostic


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else many or word + 's'}"


def fix_command(unsafe: bool) -> str:
    return "`torchlint check --fix --unsafe-fixes`" if unsafe else "`torchlint check --fix`"


def fix_line(diagnostics: list[Diagnostic], unsafe: bool) -> str:
    """`[*] N fixable with ...` and the hidden unsafe fixes, or "" when there is neither."""
    fixable = sum(1 for d in diagnostics if d.applicable(unsafe))
    hidden = sum(1 for d in diagnostics if d.hidden_fix(unsafe))
    note = f"{plural(hidden, 'hidden fix', 'hidden fixes')} can be enabled with the `--unsafe-fixes` option"
    if fixable:
        return (
            f"[*] {fixable} fixable with {fix_command(unsafe)}"
            + (f" ({note})" if hidden else "")
            + ".\n"
        )
    return f"No fixes available ({note}).\n" if hidden else ""


def found_line(diagnostics: list[Diagnostic]) -> str:
    files = len({d.path for d in diagnostics})
    return f"Found {plural(len(diagnostics), 'finding')} in {plural(files, 'file')}.\n"


def statistics(diagnostics: list[Diagnostic], unsafe: bool, as_json: bool) -> str:
    """Findings counted per rule, most frequent first; `fixable` counts what `--fix` would fix."""
    counts = Counter((d.code, d.name) for d in diagnostics)
    fixable = Counter(d.code for d in diagnostics if d.applicable(unsafe))
    rows = [
        {"code": code, "name": name, "count": count, "fixable": fixable[code]}
        for (code, name), count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]
    if as_json:
        return json.dumps(rows, indent=2) + "\n"
    if not rows:
        return "No findings.\n"
    lines = [
        f"{r['count']:>5}  {r['code']:<6} {'[*]' if r['fixable'] else '[ ]'} {r['name']}"
        for r in rows
    ]
    total = f"{len(diagnostics):>5}  total"
    legend = f"[*] the rule has findings fixable with {fix_command(unsafe)}   [ ] none of its findings are"
    return "\n".join([*lines, total, "", legend]) + "\n"
