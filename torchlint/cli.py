"""The `torchlint` command: parses flags, runs the engine, hands results to a formatter.

Every failure a user can cause (bad flags, config, paths) ends in one line on stderr and
exit 2; tracebacks never reach the user.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections import Counter
from pathlib import Path

import click

from torchlint import __version__
from torchlint.cli_options import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, emit, fail, load, selection_options
from torchlint.config import ConfigError
from torchlint.diagnostics import Diagnostic
from torchlint.engine.cache import cache_directory
from torchlint.engine.lint import INTERNAL_ERROR
from torchlint.engine.run import RunResult, check_paths
from torchlint.output import FORMATS, HUMAN_FORMATS, render
from torchlint.project import project_options, settings_report
from torchlint.registry import all_rules, find_rule

@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="torchlint")
def main() -> None:
    """Find what makes PyTorch training slow, fix it, and prove the fix."""


@main.command()
@click.argument("paths", nargs=-1)
@selection_options
@click.option(
    "--output-format", type=click.Choice(sorted(FORMATS)), default="full", show_default=True, help="How to print findings."
)
@click.option("-o", "--output-file", type=click.Path(dir_okay=False, path_type=Path), help="Write the findings here.")
@click.option("--statistics", is_flag=True, help="Count findings per rule instead of listing them.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), help="Processes to lint with (default: all cores).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache.")
@click.option("--show-traceback", is_flag=True, help="Print the traceback of internal errors (for bug reports).")
@project_options
def check(paths, config_path, isolated, output_format, output_file, statistics, exit_zero, quiet, jobs, no_cache, show_traceback, **selection) -> None:
    """Report slow PyTorch patterns in PATHS (default: the current directory)."""
    paths = paths or (".",)
    settings = load(paths, config_path, isolated, **selection)
    try:
        if selection.get("show_settings"):
            emit(settings_report(selection["show_settings"], settings), output_file)
            sys.exit(EXIT_CLEAN)
        result = check_paths(list(paths), settings, jobs=jobs, use_cache=not no_cache)
    except ConfigError as error:
        fail(str(error))
    for warning in result.warnings:
        click.echo(f"torchlint: warning: {warning}", err=True)
    for name in result.missing:
        click.echo(f"torchlint: error: {name}: no such file or directory", err=True)
    if not result.files and not result.missing:
        click.echo(f"torchlint: warning: no Python files found under {' '.join(paths)}", err=True)
    diagnostics = result.diagnostics
    if show_traceback:
        for d in diagnostics:
            if d.detail:
                click.echo(f"{d.path}: {d.code} {d.message}\n{d.detail}", err=True)
    text = _statistics(diagnostics) if statistics else render(output_format, diagnostics)
    if output_format in HUMAN_FORMATS and not quiet and not statistics:
        text += ("\n" if output_format in ("full", "grouped") and diagnostics else "") + _summary(result)
    emit(text, output_file)
    sys.exit(exit_code(result, exit_zero))


def exit_code(result: RunResult, exit_zero: bool) -> int:
    if result.missing or any(d.code == INTERNAL_ERROR[0] for d in result.diagnostics):
        return EXIT_ERROR
    if result.diagnostics and not exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _summary(result: RunResult) -> str:
    diagnostics = result.diagnostics
    if not diagnostics and result.missing:
        return ""  # the error lines said what went wrong; "all checks passed" would mislead
    if not diagnostics:
        checked = len(result.files)
        return f"All checks passed ({checked} {'file' if checked == 1 else 'files'} checked).\n"
    files = len({d.path for d in diagnostics})
    fixable = sum(1 for d in diagnostics if d.fixable)
    noun = "finding" if len(diagnostics) == 1 else "findings"
    where = "file" if files == 1 else "files"
    return f"Found {len(diagnostics)} {noun} in {files} {where} ({fixable} fixable).\n"


def _statistics(diagnostics: list[Diagnostic]) -> str:
    counts = Counter((d.code, d.name) for d in diagnostics)
    fixable = Counter(d.code for d in diagnostics if d.fixable)
    lines = [
        f"{count:>5}  {code:<6} {name}{'  [*]' if fixable[code] else ''}"
        for (code, name), count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]
    return "\n".join(lines) + ("\n" if lines else "")


@main.command()
@click.argument("paths", nargs=-1)
def clean(paths) -> None:
    """Remove the result cache of the project at PATHS (default: the current directory)."""
    settings = load(paths or (".",), None, False)
    directory = cache_directory(settings)
    if directory.is_dir():
        shutil.rmtree(directory, ignore_errors=True)
        click.echo(f"Removed {directory}")


@main.command("rules")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules_command(output_format: str) -> None:
    """List every rule: code, name, default state, fix availability, summary."""
    rows = [
        {
            "code": r.code,
            "name": r.name,
            "default": "on" if r.default_enabled else "opt-in",
            "fix": r.fix_availability,
            "summary": r.summary,
        }
        for r in all_rules()
    ]
    if output_format == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        click.echo(f"{row['code']}  {row['name']:<32} {row['default']:<7} {row['fix']:<13} {row['summary']}")


@main.command("rule")
@click.argument("code_or_name")
def rule_command(code_or_name: str) -> None:
    """Print one rule's documentation."""
    rule = find_rule(code_or_name)
    if rule is None:
        fail(f"unknown rule {code_or_name!r} (see `torchlint rules`)")
    state = "enabled by default" if rule.default_enabled else "opt-in (enable with --extend-select)"
    versions = "".join(f"\nFix writing {what} needs torch >= {since}." for what, since in rule.fix_versions.items())
    click.echo(f"# {rule.name} ({rule.code})\n\n{rule.summary}.\n\n{state}; fix: {rule.fix_availability}.{versions}\n{rule.docs}")


# Subcommands that live in their own rooms register here.
from torchlint.lsp.command import lsp  # noqa: E402  (pygls itself loads only when `lsp` runs)

main.add_command(lsp)
from torchlint.fixes.command import fix  # noqa: E402

main.add_command(fix)
from torchlint.verify.command import verify  # noqa: E402

main.add_command(verify)
