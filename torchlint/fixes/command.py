"""The fix modes of `check` and `fix`: print the diff of the fixes, or write them.

A file is fixed as a whole or not at all: its fixes run to a fixpoint in memory, and only
a result that parses, converged and maps back onto the notebook's cells is written.
"""

from __future__ import annotations

import difflib
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import click

from torchlint.cli_options import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    RunOptions,
    emit,
    read_stdin,
    show_tracebacks,
    use_color,
)
from torchlint.config import Settings
from torchlint.diagnostics import Diagnostic
from torchlint.engine.files import TooLarge, Unreadable
from torchlint.engine.lint import (
    INTERNAL_ERROR,
    IO_ERROR,
    SYNTAX_ERROR,
    builtin,
    lint_text,
)
from torchlint.engine.run import RunResult, check_paths, display_path, file_rules, read_code
from torchlint.fixes.apply import FixError, fix_to_fixpoint
from torchlint.fixes.write import (
    Snapshot,
    WriteRefused,
    snapshot,
    snapshot_of,
    write_atomic,
)
from torchlint.notebook import Notebook, NotebookError
from torchlint.output import text
from torchlint.output.summary import fix_line, plural
from torchlint.project import FileSettings
from torchlint.report import report

if TYPE_CHECKING:
    from torchlint.catalogue import RuleEntry
    from torchlint.rule import Rule


@dataclass
class FileFix:
    path: str
    applied: list[Diagnostic] = field(default_factory=list)
    remaining: list[Diagnostic] = field(default_factory=list)
    errors: list[Diagnostic] = field(default_factory=list)  # why fixes were not applied or written
    diff: str = ""
    fixed: bytes | None = None  # the new content, when a fix changed it


def run_fixes(paths: tuple[str, ...], settings: Settings, options: RunOptions, stdin: bool) -> None:
    """Fix (or, with --diff, show the fixes of) every file, report, and exit.

    Every file is linted first through the cached, parallel path; only files with a fix the
    run would apply go through the fixer."""
    write = options.fixing
    if stdin:
        _fix_stdin(settings, options, write)
    checked = check_paths(list(paths), settings, jobs=options.jobs, use_cache=not options.no_cache)
    per_file = FileSettings(settings)
    results = []
    for found in checked.files:
        if any(d.applicable(settings.unsafe_fixes) for d in found.diagnostics):
            path = Path(found.path)
            own = per_file.for_file(path)  # each file's own project settings, as its check had
            results.append(fix_file(path, file_rules(path, own.enabled_rules(), own), own, write))
            continue
        results.append(
            FileFix(found.path, remaining=found.diagnostics)
        )  # unreadable or too large: a finding, as in check
    for warning in checked.warnings:
        click.echo(f"torchlint: warning: {warning}", err=True)
    for name in checked.missing:
        click.echo(f"torchlint: error: {name}: no such file or directory", err=True)
    _show_errors(results, write)
    _report(results, settings, options, len(checked.files))
    sys.exit(_exit_code(results, options, bool(checked.missing)))


def _show_errors(results: list[FileFix], write: bool) -> None:
    for result in results:
        unreadable = (
            []
            if write
            else [d for d in result.remaining if d.code in (SYNTAX_ERROR[0], IO_ERROR[0])]
        )  # --fix lists them
        for error in result.errors + unreadable:
            click.echo(f"torchlint: error: {text.concise([error]).rstrip()}", err=True)


def _fix_stdin(settings: Settings, options: RunOptions, write: bool) -> None:
    """`fix -`: the fixed text (or, with --diff, the diff) on stdout; findings left on stderr."""
    shown = options.stdin_filename or "-"
    try:
        data = read_stdin(shown)
    except TooLarge as error:  # one finding, as for a file; the input passes through unchanged
        _pass_through(error.head, write)
        result = FileFix(shown, remaining=[builtin(IO_ERROR, shown, str(error))])
    else:
        rules = file_rules(Path(shown), settings.enabled_rules(), settings)
        result = fix_data(Path(shown), shown, data, rules, settings)
        if write:
            sys.stdout.buffer.write(result.fixed if result.fixed is not None else data)
            sys.stdout.flush()
        else:
            click.echo(_shown_diff(result.diff, options), nl=False, color=True)
    _show_errors([result], write)
    if options.show_traceback:
        show_tracebacks(result.remaining)
    if not options.quiet and not options.fix_only:
        done = "Fixed" if write else "Would fix"
        summary = f"{done} {plural(len(result.applied), 'finding')}, {plural(len(result.remaining), 'remaining finding')}.\n"
        listing = (
            _listing([result] if result.applied else [], header=False) if options.show_fixes else ""
        )
        click.echo(text.concise(result.remaining) + summary + listing, err=True, nl=False)
    sys.exit(_exit_code([result], options, False))


def _pass_through(head: bytes, write: bool) -> None:
    """An input too large to fix goes to stdout unchanged, a chunk at a time, when stdout stands
    for the fixed file (an editor may replace its buffer with it); a diff has nothing to show."""
    if not write:
        return
    sys.stdout.buffer.write(head)
    stream = sys.stdin.buffer
    while chunk := stream.read(1 << 20):
        sys.stdout.buffer.write(chunk)
    sys.stdout.flush()


def fix_file(
    path: Path, rules: Sequence[RuleEntry | type[Rule]], settings: Settings, write: bool
) -> FileFix:
    """Fix one file in memory; write it when `write` and nothing went wrong."""
    shown = display_path(path)
    try:
        original = snapshot(path, settings.root, notebook=path.suffix == ".ipynb")
    except Unreadable as error:
        return FileFix(shown, errors=[builtin(IO_ERROR, shown, str(error))])
    except SyntaxError as error:
        return FileFix(
            shown, remaining=[builtin(SYNTAX_ERROR, shown, f"cannot decode file: {error}")]
        )
    result = _fix_snapshot(shown, original, rules, settings)
    if write and result.fixed is not None and result.fixed != original.data:
        try:
            write_atomic(original, result.fixed)
        except WriteRefused as error:
            return _unwritten(
                shown, original, builtin(IO_ERROR, shown, str(error)), rules, settings
            )
    return result


def fix_data(
    path: Path, shown: str, data: bytes, rules: Sequence[RuleEntry | type[Rule]], settings: Settings
) -> FileFix:
    """Fix bytes that came from elsewhere (stdin) in memory; `path` says whether it is a notebook."""
    try:
        original = snapshot_of(path, data, notebook=path.suffix == ".ipynb")
    except SyntaxError as error:
        return FileFix(
            shown, remaining=[builtin(SYNTAX_ERROR, shown, f"cannot decode file: {error}")]
        )
    return _fix_snapshot(shown, original, rules, settings)


def _fix_snapshot(
    shown: str, original: Snapshot, rules: Sequence[RuleEntry | type[Rule]], settings: Settings
) -> FileFix:
    read = parse_snapshot(original, shown)
    if isinstance(read, FileFix):
        return read
    notebook, source = read

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
        new_text, result.diff = new_content(shown, source, notebook, outcome.text)
        result.fixed = original.encode(new_text)
    except (NotebookError, WriteRefused) as error:
        kind = IO_ERROR if isinstance(error, WriteRefused) else INTERNAL_ERROR
        result.errors.append(builtin(kind, shown, str(error)))
        result.applied, result.diff = [], ""
        result.remaining = in_file_terms(source, lint(source))
    return result


def _unwritten(
    shown: str,
    original: Snapshot,
    error: Diagnostic,
    rules: Sequence[RuleEntry | type[Rule]],
    settings: Settings,
) -> FileFix:
    """A fixed file that could not be written: its findings as they still are, and why."""
    read = parse_snapshot(original, shown)
    assert not isinstance(read, FileFix)  # it parsed before fixing
    notebook, source = read
    found = lint_text(shown, source, rules, settings)
    return FileFix(
        shown,
        remaining=notebook.map_diagnostics(source, found) if notebook else found,
        errors=[error],
    )


def parse_snapshot(original: Snapshot, shown: str) -> tuple[Notebook | None, str] | FileFix:
    """The file's notebook if it is one (by its name as shown), and the text to lint; or why there is none."""
    read = read_code(shown, original.data)
    return FileFix(shown, remaining=[read]) if isinstance(read, Diagnostic) else read


def _broken(d: Diagnostic) -> Diagnostic:
    message = f"the fix for {d.code} ({d.name}) produced code that does not parse and was not applied; please report it"
    return Diagnostic(
        INTERNAL_ERROR[0], INTERNAL_ERROR[1], message, d.path, d.start, d.start, cell=d.cell
    )


def new_content(shown: str, source: str, notebook: Notebook | None, fixed: str) -> tuple[str, str]:
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
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{name}", f"b/{name}"
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


# -- what the user reads ---------------------------------------------------------------------
_DIFF_STYLES = (("+++", {"bold": True}), ("---", {"bold": True}), ("@@", {"fg": "cyan"}),
                ("+", {"fg": "green"}), ("-", {"fg": "red"}))  # fmt: skip


def _shown_diff(diff: str, options: RunOptions) -> str:
    """The diff, coloured as `--color` (or a terminal) asks: additions green, removals red."""
    if not diff or not use_color(options.color, options.output_file):
        return diff
    out = []
    for line in diff.splitlines(keepends=True):
        style = next((s for prefix, s in _DIFF_STYLES if line.startswith(prefix)), None)
        body = line.rstrip("\n")
        out.append((click.style(body, **style) if style else body) + line[len(body) :])
    return "".join(out)


def _left(remaining: list[Diagnostic], settings: Settings) -> str:
    unsafe = sum(1 for d in remaining if d.hidden_fix(settings.unsafe_fixes))
    parts = []
    if unsafe:
        parts.append(f"{unsafe} more with --unsafe-fixes")
    if len(remaining) - unsafe:
        parts.append(f"{len(remaining) - unsafe} not fixable")
    return f" ({', '.join(parts)})" if parts else ""


def _would_fix(results: list[FileFix], settings: Settings, checked: int) -> str:
    fixed = [r for r in results if r.applied]
    count = sum(len(r.applied) for r in fixed)
    remaining = [d for r in results for d in r.remaining]
    if count:
        return f"Would fix {plural(count, 'finding')} in {plural(len(fixed), 'file')}{_left(remaining, settings)}.\n"
    if remaining:
        return f"No fixes available{_left(remaining, settings)}.\n"
    return f"Nothing to fix ({plural(checked, 'file')} checked).\n"


def _listing(fixed: list[FileFix], header: bool = True) -> str:
    """What was fixed (or, under a diff's summary, would be), per file and rule (`--show-fixes`)."""
    count = sum(len(r.applied) for r in fixed)
    out = (
        [f"Fixed {plural(count, 'finding')} in {plural(len(fixed), 'file')}:\n"]
        if count and header
        else []
    )
    for result in fixed:
        out.append(f"  {result.path}:\n")
        counts = Counter((d.code, d.name) for d in result.applied)
        out += [f"    {n:>3}  {code} {name}\n" for (code, name), n in sorted(counts.items())]
    return "".join(out)


def _fixed_summary(
    count: int, remaining: list[Diagnostic], settings: Settings, checked: int
) -> str:
    if not count and not remaining:
        return f"All checks passed ({plural(checked, 'file')} checked).\n"
    total = plural(count + len(remaining), "finding")
    return f"Found {total} ({count} fixed, {len(remaining)} remaining).\n" + fix_line(
        remaining, settings.unsafe_fixes
    )


def _report(results: list[FileFix], settings: Settings, options: RunOptions, checked: int) -> None:
    from torchlint.engine.lint import FileResult

    fixed = [r for r in results if r.applied]
    count = sum(len(r.applied) for r in fixed)
    if options.diff:
        if options.show_traceback:
            show_tracebacks([d for r in results for d in r.remaining])
        diff = _shown_diff("".join(r.diff for r in results), options)
        listing = _listing(fixed, header=False) if options.show_fixes else ""
        emit(
            diff + ("" if options.quiet else _would_fix(results, settings, checked) + listing),
            options.output_file,
            settings.root,
        )
        return
    listing = _listing(fixed) if options.show_fixes else ""
    if options.fix_only:
        emit(
            "" if options.quiet else listing or f"Fixed {plural(count, 'finding')}.\n",
            options.output_file,
            settings.root,
        )
        return
    remaining = [d for r in results for d in r.remaining]
    summary = (
        listing + ("\n" if listing else "") + _fixed_summary(count, remaining, settings, checked)
    )
    report(
        RunResult([FileResult(r.path, r.remaining) for r in results], []),
        settings,
        options,
        summary,
    )


def _exit_code(results: list[FileFix], options: RunOptions, missing: bool) -> int:
    if (
        missing
        or any(r.errors for r in results)
        or any(d.code == INTERNAL_ERROR[0] for r in results for d in r.remaining)
    ):
        return EXIT_ERROR
    applied = any(r.applied for r in results)
    remaining = any(r.remaining for r in results)
    if options.exit_non_zero_on_fix and applied:
        return EXIT_FINDINGS
    if options.exit_zero or options.fix_only:
        return EXIT_CLEAN
    if options.diff:
        return EXIT_FINDINGS if applied or remaining else EXIT_CLEAN
    return EXIT_FINDINGS if remaining else EXIT_CLEAN
