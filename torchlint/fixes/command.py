"""`torchlint fix`: print the diff of the fixes, or write them with `--apply`.

A file is fixed as a whole or not at all: its fixes run to a fixpoint in memory, and only
a result that parses, converged and maps back onto the notebook's cells is written.
"""

from __future__ import annotations

import difflib
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import click

from torchlint.cli_options import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, fail, load, selection_options
from torchlint.config import ConfigError, Settings
from torchlint.diagnostics import Applicability, Diagnostic
from torchlint.engine.files import Unreadable, discover
from torchlint.engine.lint import INTERNAL_ERROR, IO_ERROR, SYNTAX_ERROR, builtin, decode, lint_text
from torchlint.engine.run import display_path, file_rules
from torchlint.fixes.apply import FixError, fix_to_fixpoint
from torchlint.fixes.write import Snapshot, WriteRefused, snapshot, write_atomic
from torchlint.notebook import Notebook, NotebookError, parse_bytes
from torchlint.output import text
from torchlint.project import FileSettings
from torchlint.rule import Rule


@dataclass
class FileFix:
    path: str
    applied: list[Diagnostic] = field(default_factory=list)
    remaining: list[Diagnostic] = field(default_factory=list)
    errors: list[Diagnostic] = field(default_factory=list)  # why fixes were not applied or written
    diff: str = ""


@click.command()
@click.argument("paths", nargs=-1)
@selection_options
@click.option("--apply", "write", is_flag=True, help="Write the fixes to the files.")
@click.option("--diff", "show_diff", is_flag=True, help="Print the diff of the fixes and write nothing (the default).")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that may change behaviour.")
def fix(paths, config_path, isolated, write, show_diff, unsafe_fixes, **selection) -> None:
    """Fix slow PyTorch patterns in PATHS: show the diff, or write it with --apply."""
    if write and show_diff:
        fail("--apply and --diff cannot be used together")
    paths = paths or (".",)
    settings = load(paths, config_path, isolated, unsafe_fixes=unsafe_fixes, **selection)
    discovery = discover(list(paths), settings)
    results = [fix_file(path, file_rules(path, own.enabled_rules(), own), own, write) for path, own in _with_settings(discovery.files, settings)]
    results += [FileFix(display_path(d), errors=[builtin(IO_ERROR, display_path(d), why)]) for d, why in discovery.unreadable]
    for warning in discovery.warnings:
        click.echo(f"torchlint: warning: {warning}", err=True)
    for name in discovery.missing:
        click.echo(f"torchlint: error: {name}: no such file or directory", err=True)
    for result in results:
        unreadable = [] if write else [d for d in result.remaining if d.code == SYNTAX_ERROR[0]]  # --apply lists them
        for error in result.errors + unreadable:
            click.echo(f"torchlint: error: {text.concise([error]).rstrip()}", err=True)
    click.echo(_report(results, settings, write, len(discovery.files)), nl=False)
    sys.exit(_exit_code(results, write, bool(discovery.missing)))


def _with_settings(files: list[Path], settings: Settings) -> list[tuple[Path, Settings]]:
    """Each file with its own settings (see `torchlint.project`), or exit 2 on a broken config."""
    per_file = FileSettings(settings)
    try:
        return [(path, per_file.for_file(path)) for path in files]
    except ConfigError as error:
        fail(str(error))


def fix_file(path: Path, rules: list[type[Rule]], settings: Settings, write: bool) -> FileFix:
    """Fix one file in memory; write it when `write` and nothing went wrong."""
    shown = display_path(path)
    read = _read(path, shown, settings.root)
    if isinstance(read, FileFix):
        return read
    original, notebook, source = read

    def lint(code: str) -> list[Diagnostic]:
        return lint_text(shown, code, rules, settings)

    def in_file_terms(code: str, found: list[Diagnostic]) -> list[Diagnostic]:
        return notebook.map_diagnostics(code, found) if notebook else found

    try:
        outcome = fix_to_fixpoint(source, lint, settings.unsafe_fixes)
    except FixError as error:
        problem = builtin(INTERNAL_ERROR, shown, f"{error}; the file was not changed")
        return FileFix(shown, remaining=in_file_terms(source, lint(source)), errors=[problem])
    result = FileFix(shown, outcome.applied, in_file_terms(outcome.text, outcome.remaining))
    result.errors = [_broken(d) for d in in_file_terms(outcome.text, outcome.broken)]
    if not outcome.applied:
        return result
    try:
        new_text, result.diff = _new_content(shown, source, notebook, outcome.text)
        data = original.encode(new_text)
        if write and data != original.data:
            write_atomic(original, data)
    except (NotebookError, WriteRefused) as error:
        kind = IO_ERROR if isinstance(error, WriteRefused) else INTERNAL_ERROR
        result.errors.append(builtin(kind, shown, str(error)))
        result.applied = []
        result.remaining = in_file_terms(source, lint(source))
    return result


def _read(path: Path, shown: str, root: Path) -> tuple[Snapshot, Notebook | None, str] | FileFix:
    """The file as read, its notebook if it is one, and the text to lint; or why there is none."""
    try:
        original = snapshot(path, root, notebook=path.suffix == ".ipynb")
        notebook = parse_bytes(original.data) if path.suffix == ".ipynb" else None
        return original, notebook, notebook.text if notebook else decode(original.data)
    except Unreadable as error:
        return FileFix(shown, errors=[builtin(IO_ERROR, shown, str(error))])
    except (UnicodeDecodeError, SyntaxError, LookupError) as error:
        reason = error.reason if isinstance(error, UnicodeDecodeError) else str(error)
        return FileFix(shown, remaining=[builtin(SYNTAX_ERROR, shown, f"cannot decode file: {reason}")])
    except NotebookError as error:
        return FileFix(shown, remaining=[builtin(SYNTAX_ERROR, shown, str(error))])


def _broken(d: Diagnostic) -> Diagnostic:
    message = f"the fix for {d.code} ({d.name}) produced code that does not parse and was not applied; please report it"
    return Diagnostic(INTERNAL_ERROR[0], INTERNAL_ERROR[1], message, d.path, d.start, d.start, cell=d.cell)


def _new_content(shown: str, source: str, notebook: Notebook | None, fixed: str) -> tuple[str, str]:
    """The file's new text and the diff that shows it (one hunk group per changed cell)."""
    if notebook is None:
        return fixed, _unified(source, fixed, shown)
    sources = notebook.sources(fixed)
    diff = "".join(
        _unified(cell.source, new, f"{shown}:cell {cell.number}")
        for cell, new in zip(notebook.cells, sources)
        if new != cell.source
    )
    return notebook.dump(sources), diff


def _unified(before: str, after: str, name: str) -> str:
    lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{name}", f"b/{name}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


# -- what the user reads ---------------------------------------------------------------------
def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _held_back(d: Diagnostic, settings: Settings) -> bool:
    return not settings.unsafe_fixes and d.fix is not None and d.fix.applicability is Applicability.UNSAFE and bool(d.fix.edits)


def _left(remaining: list[Diagnostic], settings: Settings) -> str:
    unsafe = sum(1 for d in remaining if _held_back(d, settings))
    parts = []
    if unsafe:
        parts.append(f"{unsafe} more with --unsafe-fixes")
    if len(remaining) - unsafe:
        parts.append(f"{len(remaining) - unsafe} not fixable")
    return f" ({', '.join(parts)})" if parts else ""


def _report(results: list[FileFix], settings: Settings, write: bool, checked: int) -> str:
    fixed = [r for r in results if r.applied]
    count = sum(len(r.applied) for r in fixed)
    remaining = [d for r in results for d in r.remaining]
    where = f"{_plural(count, 'finding')} in {_plural(len(fixed), 'file')}"
    if not write:
        diff = "".join(r.diff for r in results)
        if count:
            return f"{diff}Would fix {where}{_left(remaining, settings)}.\n"
        if remaining:
            return f"No fixes available{_left(remaining, settings)}.\n"
        return f"Nothing to fix ({_plural(checked, 'file')} checked).\n"
    out = [f"Fixed {where}:\n"] if count else []
    for result in fixed:
        out.append(f"  {result.path}:\n")
        counts = Counter((d.code, d.name) for d in result.applied)
        out += [f"    {n:>3}  {code} {name}\n" for (code, name), n in sorted(counts.items())]
    if remaining:
        out.append(("\n" if out else "") + text.full(remaining))
        out.append(f"Found {_plural(len(remaining), 'remaining finding')}{_left(remaining, settings)}.\n")
    else:
        out.append(f"No findings remain ({_plural(checked, 'file')} checked).\n")
    return "".join(out)


def _exit_code(results: list[FileFix], write: bool, missing: bool) -> int:
    if missing or any(r.errors for r in results) or any(d.code == INTERNAL_ERROR[0] for r in results for d in r.remaining):
        return EXIT_ERROR
    if any(r.remaining for r in results) or (not write and any(r.applied for r in results)):
        return EXIT_FINDINGS
    return EXIT_CLEAN
