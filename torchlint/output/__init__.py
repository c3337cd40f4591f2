"""One formatter per output format, all reading the same Diagnostic objects."""

from __future__ import annotations

from typing import Callable

from torchlint.diagnostics import Diagnostic
from torchlint.output import json_format, text

Formatter = Callable[[list[Diagnostic]], str]

FORMATS: dict[str, Formatter] = {
    "full": text.full,
    "concise": text.concise,
    "json": json_format.render_json,
    "json-lines": json_format.render_json_lines,
}
HUMAN_FORMATS = frozenset({"full", "concise", "grouped"})


def render(output_format: str, diagnostics: list[Diagnostic]) -> str:
    return FORMATS[output_format](diagnostics)
