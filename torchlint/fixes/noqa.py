"""`--add-noqa`: a `# noqa: CODE` comment for every current finding, to adopt torchlint on a
large codebase and fix findings later.

A comment goes on the finding's row, or on its statement's first row, wherever a comment is
legal: a row that ends inside a multi-line string or after a backslash cannot take one. A row
that already has a `# noqa: ...` gets the codes added to it. Findings it cannot place are
counted, not forced; a second run changes nothing, since every finding is then suppressed.
"""

from __future__ import annotations

import io
import re
import sys
import tokenize
from pathlib import Path

import click

from torchlint.cli_options import EXIT_CLEAN, EXIT_ERROR, RunOptions, emit
from torchlint.config import Settings
from torchlint.diagnostics import INTERNAL_ERROR, IO_ERROR, SYNTAX_ERROR, Diagnostic, source_lines
from torchlint.engine.files import Unreadable, discover
from torchlint.engine.lint import lint_text
from torchlint.engine.run import display_path, file_rules
from torchlint.fixes.command import new_content, parse_snapshot
from torchlint.fixes.write import WriteRefused, snapshot, write_atomic
from torchlint.notebook import NotebookError
from torchlint.output.summary import plural

_NOQA_CODES = re.compile(r"#\s*noqa:\s*[A-Za-z0-9_-]+(?:[\s,]+[A-Za-z0-9_-]+)*", re.IGNORECASE)
_NOT_ADDED = {SYNTAX_ERROR[0], IO_ERROR[0], INTERNAL_ERROR[0]}


def _comment_rows(source: str) -> tuple[set[int], dict[int, tuple[int, str]]]:
    """Rows whose end may take a comment, and the comment each row already has (column, text)."""
    legal: set[int] = set()
    comments: dict[int, tuple[int, str]] = {}
    for token in tokenize.generate_tokens(io.StringIO(source, newline=None).readline):
        if token.type in (tokenize.NEWLINE, tokenize.NL):
            legal.add(token.start[0])
        elif token.type == tokenize.COMMENT:
            comments[token.start[0]] = (token.start[1], token.string)
    return legal, comments


def add_noqa(source: str, diagnostics: list[Diagnostic]) -> tuple[str, int, int]:
    """`source` with noqa comments for `diagnostics`; returns it, the rows changed and the findings not placed."""
    try:
        legal, comments = _comment_rows(source)
    except (tokenize.TokenError, SyntaxError):
        return source, 0, len(diagnostics)
    wanted: dict[int, list[str]] = {}
    skipped = 0
    for d in diagnostics:
        row = next((r for r in (d.start.row, *d.anchor_rows) if r in legal), None)
        if row is None:
            skipped += 1
        elif d.code not in wanted.setdefault(row, []):
            wanted[row].append(d.code)
    lines = source_lines(source)
    breaks = re.findall(r"\r\n|\r|\n", source)
    for row, codes in wanted.items():
        lines[row - 1] = _with_codes(lines[row - 1], comments.get(row), codes)
    text = "".join(line + (breaks[i] if i < len(breaks) else "") for i, line in enumerate(lines))
    return text, len(wanted), skipped


def _with_codes(line: str, comment: tuple[int, str] | None, codes: list[str]) -> str:
    if comment is None:
        return f"{line.rstrip()}  # noqa: {', '.join(codes)}"
    column, text = comment
    match = _NOQA_CODES.search(text)
    if match is None:
        return f"{line.rstrip()}  # noqa: {', '.join(codes)}"
    at = column + match.end()
    return f"{line[:at]}, {', '.join(codes)}{line[at:]}"


def add_noqa_command(paths: tuple[str, ...], settings: Settings, options: RunOptions) -> None:
    """Add the comments to every file under `paths`, say how many, and exit."""
    if paths == ("-",):
        click.echo("torchlint: error: --add-noqa needs files, not stdin", err=True)
        sys.exit(EXIT_ERROR)
    discovery = discover(list(paths), settings)
    rules = settings.enabled_rules()
    added = skipped = files = 0
    failed = bool(discovery.missing or discovery.unreadable)
    for name in discovery.missing:
        click.echo(f"torchlint: error: {name}: no such file or directory", err=True)
    for folder, why in discovery.unreadable:  # a folder not entered, as check reports it
        click.echo(f"torchlint: error: {display_path(folder)}: {why}", err=True)
    for path in discovery.files:
        outcome = _add_to_file(path, file_rules(path, rules, settings), settings)
        if isinstance(outcome, str):
            click.echo(f"torchlint: error: {display_path(path)}: {outcome}", err=True)
            failed = True
            continue
        added, skipped, files = added + outcome[0], skipped + outcome[1], files + bool(outcome[0])
    if not options.quiet:
        note = (
            f" ({plural(skipped, 'finding')} on rows that cannot take a comment)" if skipped else ""
        )
        emit(
            f"Added {plural(added, 'noqa comment')} to {plural(files, 'file')}{note}.\n",
            options.output_file,
            settings.root,
        )
    sys.exit(EXIT_ERROR if failed else EXIT_CLEAN)


def _add_to_file(path: Path, rules: list, settings: Settings) -> tuple[int, int] | str:
    shown = display_path(path)
    try:
        original = snapshot(path, settings.root, notebook=path.suffix == ".ipynb")
    except (Unreadable, SyntaxError) as error:
        return str(error)
    read = parse_snapshot(original, shown)
    if not isinstance(read, tuple):
        return read.remaining[0].message
    notebook, source = read
    found = [d for d in lint_text(shown, source, rules, settings) if d.code not in _NOT_ADDED]
    if not found:
        return 0, 0
    text, rows, skipped = add_noqa(source, found)
    if text == source:
        return 0, skipped
    try:
        new_text, _ = new_content(shown, source, notebook, text)
        write_atomic(original, original.encode(new_text))
    except (WriteRefused, NotebookError) as error:
        return str(error)
    return rows, skipped
