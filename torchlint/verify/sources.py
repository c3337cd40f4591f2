"""The texts a verify run compares, and the lines torchlint's rules flag in them."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from torchlint.cli_options import fail
from torchlint.config import Settings
from torchlint.diagnostics import Diagnostic
from torchlint.engine.lint import decode, lint_text
from torchlint.engine.run import display_path, file_rules
from torchlint.verify.launch import Version


def read_version(label: str, name: str) -> Version:
    """The version at path `name`, or exit 2 with the reason it cannot be read."""
    path = Path(name)
    if not path.is_file():
        fail(f"{name}: no such file")
    if path.suffix == ".ipynb":
        fail(f"{name}: verify runs Python scripts; export the notebook to a .py file first")
    try:
        text = decode(path.read_bytes())
    except OSError as error:
        fail(f"{name}: cannot read: {error.strerror or error}")
    except (UnicodeDecodeError, SyntaxError, LookupError) as error:
        fail(f"{name}: cannot decode: {error}")
    return Version(label, Path(os.path.abspath(path)), name, text)


def linter(path: Path, settings: Settings) -> Callable[[str], list[Diagnostic]]:
    """lint(text) for the file at `path`, with the rules the settings enable for it."""
    rules = file_rules(path, settings.enabled_rules(), settings)
    shown = display_path(path)
    return lambda text: lint_text(shown, text, rules, settings)


def flagged_lines(diagnostics: list[Diagnostic]) -> dict[int, list[str]]:
    """Line -> codes of the findings that cover it."""
    lines: dict[int, list[str]] = {}
    for d in diagnostics:
        for row in range(d.start.row, d.end.row + 1):
            codes = lines.setdefault(row, [])
            if d.code not in codes:
                codes.append(d.code)
    return lines
