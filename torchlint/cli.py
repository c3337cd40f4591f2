"""The `torchlint` command: parses flags, runs the engine, hands results to a formatter.

Every failure a user can cause (bad flags, config, paths) ends in one line on stderr and
exit 2; tracebacks never reach the user.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click
from click.core import ParameterSource

from torchlint import __version__
from torchlint.cli_options import (
    EXIT_CLEAN,
    EXIT_ERROR,
    RunOptions,
    emit,
    fail,
    load,
    project_options,
    read_stdin,
    run_options,
    selection_options,
)
from torchlint.report import exit_code, report

if TYPE_CHECKING:
    from torchlint.config import Settings
    from torchlint.engine.run import RunResult

# Subcommands in their own rooms, imported only when named: `--version` and `check` never load
# pygls or the verifier (`fix` is declared here and loads the fixer only when it runs).
_LAZY = {
    "lsp": "torchlint.lsp.command:lsp",
    "verify": "torchlint.verify.command:verify",
}


class _Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *_LAZY])

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in _LAZY:
            module, attribute = _LAZY[name].split(":")
            return getattr(importlib.import_module(module), attribute)
        return super().get_command(ctx, name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Each command with the whole first sentence of its help (click cuts it at 45 columns);
        the formatter wraps a long one onto the next line."""
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=sys.maxsize)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="torchlint")
def main() -> None:
    """Find what makes PyTorch training slow, fix it, and prove the fix."""


@main.command()
@click.argument("paths", nargs=-1)
@selection_options
@run_options
@project_options
def check(paths, **values) -> None:
    """Report slow PyTorch patterns in PATHS (default: the current directory; `-` reads stdin)."""
    options = RunOptions.take(values)
    run(paths, options, values)


@main.command()
@click.argument("paths", nargs=-1)
@selection_options
@run_options
@project_options
@click.option(
    "--apply", "write", is_flag=True, help="Write the fixes to the files (the same as --fix)."
)
def fix(paths, write, **values) -> None:
    """Fix slow PyTorch patterns in PATHS: show the diff, or write it with --apply (`check --fix`)."""
    options = RunOptions.take(values)
    if write and options.diff:
        fail("--apply and --diff cannot be used together")
    writing = write or options.fixing
    options = replace(
        options,
        fix=options.fix or write,
        diff=not writing,
        show_fixes=options.show_fixes
        or writing,  # what was fixed is listed; what would be, if asked
    )
    run(paths, options, values, fixing_command=True)


def run(
    paths: tuple[str, ...], options: RunOptions, selection: dict, fixing_command: bool = False
) -> None:
    """`check` and `fix`: one flow, the mode chosen by the fix flags (`fix` diffs by default)."""
    if options.diff and options.fixing:
        fail("--diff cannot be combined with --fix or --fix-only (it writes nothing)")
    _refuse_idle_flags(options, fixing_command)
    stdin = paths == ("-",)
    if "-" in paths and not stdin:
        fail("`-` (stdin) cannot be combined with other paths")
    paths = paths or (".",)
    settings = load(
        (options.stdin_filename,) if stdin and options.stdin_filename else paths,
        unsafe_fixes=options.unsafe_fixes,
        **selection,
    )
    if selection.get("show_settings"):
        _show_settings(selection["show_settings"], settings, options)
    if options.show_files:
        _show_files(paths, settings, stdin, options)
    if options.add_noqa:
        from torchlint.fixes.noqa import add_noqa_command

        add_noqa_command(paths, settings, options)
    if options.fixing or options.diff or fixing_command:
        from torchlint.fixes.command import run_fixes

        run_fixes(paths, settings, options, stdin)
    result = _lint_stdin(settings, options) if stdin else _lint(paths, settings, options)
    report(result, settings, options)
    _leave(exit_code(result, options.exit_zero))


def _leave(code: int) -> NoReturn:
    """Ends a run without tearing the interpreter down, as mypy does: a run over a project holds
    syntax trees and summaries that the interpreter would walk in three final garbage
    collections and free one by one (1.6 % of the instructions of a whole-project check of
    cszn/KAIR). Nothing is left to release: files were written and closed, worker processes
    joined; the streams are flushed here."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # a reader that closed the pipe takes no more
    os._exit(code)


def _refuse_idle_flags(options: RunOptions, fixing_command: bool) -> None:
    """A usage error for each flag that would do nothing in this mode, saying why: a diff (`fix`
    without --apply, or --diff) has no findings to format or count and applies no fix."""
    if options.add_noqa and (options.fixing or options.diff or fixing_command):
        fail(
            "--add-noqa adds comments instead of fixing: use it with `check`, without --fix or --diff"
        )
    if not options.diff:
        return
    mode, remedy = (
        ("fix without --apply", "add --apply")
        if fixing_command
        else ("--diff", "use --fix instead of --diff")
    )
    if options.statistics:
        fail(f"--statistics counts findings, but {mode} prints a diff: {remedy}")
    if click.get_current_context().get_parameter_source("output_format") != ParameterSource.DEFAULT:
        fail(f"--output-format formats findings, but {mode} prints a diff: {remedy}")
    if options.exit_non_zero_on_fix:
        fail(
            f"--exit-non-zero-on-fix needs fixes applied, but {mode} applies none (it exits 1 "
            f"whenever a fix would apply): {remedy}"
        )


def _show_settings(path: Path, settings: Settings, options: RunOptions) -> None:
    from torchlint.config import ConfigError
    from torchlint.project import settings_report

    try:
        emit(settings_report(path, settings, _code_text), options.output_file, settings.root)
    except ConfigError as error:
        fail(str(error))
    sys.exit(EXIT_CLEAN)


def _code_text(path: Path, root: Path) -> str:
    """The code a file holds, as the linter reads it (a notebook's code cells); empty when it
    cannot be read, which `check` reports for itself."""
    from torchlint.engine.files import Unreadable, read_source
    from torchlint.engine.lint import decode
    from torchlint.notebook import NotebookError, parse_bytes

    try:
        data = read_source(path, root)
        return parse_bytes(data).text if path.suffix == ".ipynb" else decode(data)
    except (Unreadable, NotebookError, SyntaxError, UnicodeDecodeError, LookupError):
        return ""


def _lint(paths: tuple[str, ...], settings: Settings, options: RunOptions) -> RunResult:
    from torchlint.config import ConfigError
    from torchlint.engine.run import check_paths

    try:
        result = check_paths(
            list(paths), settings, jobs=options.jobs, use_cache=not options.no_cache
        )
    except ConfigError as error:  # a broken config file found beside one of the files
        fail(str(error))
    for warning in result.warnings:
        click.echo(f"torchlint: warning: {warning}", err=True)
    if not result.files and not result.missing:
        click.echo(f"torchlint: warning: no Python files found under {' '.join(paths)}", err=True)
    return result


def _lint_stdin(settings: Settings, options: RunOptions) -> RunResult:
    from torchlint.engine.files import Unreadable
    from torchlint.engine.lint import IO_ERROR, FileResult, builtin
    from torchlint.engine.run import RunResult, file_rules, lint_bytes

    shown = options.stdin_filename or "-"
    rules = file_rules(Path(shown), settings.enabled_rules(), settings)
    try:
        found = lint_bytes(shown, read_stdin(shown), rules, settings)
    except Unreadable as problem:  # too large: one finding, as for a file
        found = [builtin(IO_ERROR, shown, str(problem))]
    return RunResult([FileResult(shown, found)], [])


def _show_files(
    paths: tuple[str, ...], settings: Settings, stdin: bool, options: RunOptions
) -> None:
    from torchlint.engine.files import discover
    from torchlint.engine.run import display_path

    if stdin:
        emit(f"{options.stdin_filename or '-'}\n", options.output_file, settings.root)
        sys.exit(EXIT_CLEAN)
    discovery = discover(list(paths), settings)
    for name in discovery.missing:
        click.echo(f"torchlint: error: {name}: no such file or directory", err=True)
    emit(
        "".join(f"{name}\n" for name in sorted(map(display_path, discovery.files))),
        options.output_file,
        settings.root,
    )
    sys.exit(EXIT_ERROR if discovery.missing else EXIT_CLEAN)


@main.command()
@click.argument("paths", nargs=-1)
def clean(paths) -> None:
    """Remove the result cache of the project at PATHS (default: the current directory)."""
    from torchlint.engine.cache import cache_directory
    from torchlint.engine.files import link_out

    settings = load(paths or (".",), None, False)
    directory = cache_directory(settings)
    if link_out(directory, directory) is not None:
        fail(f"{directory}: reached through a symlink that leads out of the project; not removed")
    if directory.is_dir():
        shutil.rmtree(directory, ignore_errors=True)
        click.echo(f"Removed {directory}")


@main.command("rules")
@click.option(
    "--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def rules_command(output_format: str) -> None:
    """List every rule: code, name, default state (and preview), fix availability, summary."""
    from torchlint.registry import all_rules

    rows = [
        {
            "code": r.code,
            "name": r.name,
            "default": "on" if r.default_enabled else "opt-in",
            "preview": r.preview,
            "fix": r.fix_availability.value,
            "summary": r.summary,
        }
        for r in all_rules()
    ]
    if output_format == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        default = f"{row['default']}{' (preview)' if row['preview'] else ''}"
        click.echo(
            f"{row['code']}  {row['name']:<32} {default:<16} {row['fix']:<13} {row['summary']}"
        )
    if any(row["preview"] for row in rows):
        click.echo("\n(preview): runs only with --preview or `preview = true` in [tool.torchlint]")


@main.command("rule")
@click.argument("code_or_name")
def rule_command(code_or_name: str) -> None:
    """Print one rule's documentation (or a built-in code's: TL000, TL998, TL999)."""
    from torchlint.registry import find_rule
    from torchlint.rule_docs import builtin_page, page

    rule = find_rule(code_or_name)
    if rule is not None:
        click.echo(page(rule), nl=False)
        return
    builtin = builtin_page(code_or_name)
    if builtin is None:
        fail(f"unknown rule {code_or_name!r} (see `torchlint rules`)")
    click.echo(builtin, nl=False)
