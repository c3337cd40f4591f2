"""Flags and helpers that every subcommand shares (check, fix, verify, lsp)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from torchlint.config import ConfigError, Settings, load_settings

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _split(values: tuple[str, ...]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def selection_options(command):
    """The rule-selection and config flags that check, fix and verify share."""
    for decorator in reversed(
        [
            click.option("--select", multiple=True, help="Rules to enable (codes, prefixes or names), replacing the config."),
            click.option("--ignore", multiple=True, help="Rules to disable."),
            click.option("--extend-select", multiple=True, help="Rules to enable on top of the selection."),
            click.option("--config", "config_path", type=click.Path(path_type=Path), help="Use this config file."),
            click.option("--isolated", is_flag=True, help="Ignore all configuration files."),
            click.option("--target-torch-version", metavar="X.Y", help="The torch version the code must run on."),
        ]
    ):
        command = decorator(command)
    return command


def load(paths: tuple[str, ...], config_path: Path | None, isolated: bool, **overrides) -> Settings:
    """Settings for this run, or exit 2 with a one-line message."""
    start = Path(paths[0]) if paths and Path(paths[0]).exists() else Path.cwd()
    if not start.is_dir():  # a file's own folder, not its symlink target's: the target may lie outside
        start = start.absolute().parent
    try:
        settings = load_settings(config_path, start=start, isolated=isolated)
        settings = settings.merged(
            select=_split(overrides.get("select", ())),
            ignore=_split(overrides.get("ignore", ())),
            extend_select=_split(overrides.get("extend_select", ())),
            target_torch_version=overrides.get("target_torch_version"),
            unsafe_fixes=overrides.get("unsafe_fixes", False),
            cache_dir=overrides.get("cache_dir"),
        )
        settings.torch_version  # inferred from the project's declarations, which may be malformed
        return settings
    except ConfigError as error:
        fail(str(error))


def fail(message: str) -> None:
    click.echo(f"torchlint: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def emit(text: str, output_file: Path | None) -> None:
    """Report text to stdout, or to `-o/--output-file`."""
    if output_file is None:
        click.echo(text, nl=False)
        return
    try:
        output_file.write_text(text, encoding="utf-8")
    except OSError as error:
        fail(f"{output_file}: cannot write: {error.strerror}")


