"""One formatter per output format, all reading the same Diagnostic objects.

A formatter takes the run's diagnostics (sorted by file and position) and returns the text
to print; adding a format is one module here and one entry in FORMATS.
"""

from __future__ import annotations

from collections.abc import Callable

from torchlint.diagnostics import Diagnostic
from torchlint.output import (
    github,
    gitlab,
    json_format,
    junit,
    lines,
    rdjson,
    sarif,
    text,
)

Formatter = Callable[[list[Diagnostic]], str]

FORMATS: dict[str, Formatter] = {
    "full": text.full,
    "concise": text.concise,
    "grouped": text.grouped,
    "json": json_format.render_json,
    "json-lines": json_format.render_json_lines,
    "github": github.github,
    "sarif": sarif.render_sarif,
    "junit": junit.render_junit,
    "gitlab": gitlab.render_gitlab,
    "rdjson": rdjson.render_rdjson,
    "pylint": lines.render_pylint,
    "azure": lines.render_azure,
}
# Formats read by people, which end with a one-line summary.
HUMAN_FORMATS = frozenset({"full", "concise", "grouped"})


def render(
    output_format: str, diagnostics: list[Diagnostic], style: text.Style = text.PLAIN
) -> str:
    """The report in `output_format`; `style` (colour, which fixes count as fixable) is for people."""
    if output_format in HUMAN_FORMATS:
        return FORMATS[output_format](diagnostics, style)  # type: ignore[call-arg]
    return FORMATS[output_format](diagnostics)
