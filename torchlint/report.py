"""What `check` and `fix` print and return: the findings in the chosen format, the summary
that human formats end with, and the exit code.

Both commands report through here, below the CLI and the fixer, so neither imports the other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from torchlint.cli_options import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    RunOptions,
    emit,
    show_tracebacks,
    use_color,
)
from torchlint.output.summary import fix_line, found_line, statistics

if TYPE_CHECKING:
    from torchlint.config import Settings
    from torchlint.engine.run import RunResult


def report(
    result: RunResult, settings: Settings, options: RunOptions, summary: str | None = None
) -> None:
    """Print the findings in the chosen format, with the summary human formats end with."""
    from torchlint.output import HUMAN_FORMATS, render
    from torchlint.output.text import Style

    for name in result.missing:
        click.echo(f"torchlint: error: {name}: no such file or directory", err=True)
    diagnostics = result.diagnostics
    if options.show_traceback:
        show_tracebacks(diagnostics)
    if options.statistics:
        emit(
            statistics(diagnostics, settings.unsafe_fixes, options.output_format == "json"),
            options.output_file,
            settings.root,
        )
        return
    style = Style(
        color=use_color(options.color, options.output_file), unsafe_fixes=settings.unsafe_fixes
    )
    text = render(options.output_format, diagnostics, style)
    if options.output_format in HUMAN_FORMATS and not options.quiet:
        gap = "\n" if options.output_format in ("full", "grouped") and diagnostics else ""
        text += gap + (summary if summary is not None else _summary(result, settings.unsafe_fixes))
    emit(text, options.output_file, settings.root)


def exit_code(result: RunResult, exit_zero: bool) -> int:
    from torchlint.diagnostics import INTERNAL_ERROR

    if result.missing or any(d.code == INTERNAL_ERROR[0] for d in result.diagnostics):
        return EXIT_ERROR
    if result.diagnostics and not exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _summary(result: RunResult, unsafe: bool) -> str:
    diagnostics = result.diagnostics
    if not diagnostics and result.missing:
        return ""  # the error lines said what went wrong; "all checks passed" would mislead
    if not diagnostics:
        checked = len(result.files)
        return f"All checks passed ({checked} {'file' if checked == 1 else 'files'} checked).\n"
    return found_line(diagnostics) + fix_line(diagnostics, unsafe)
