"""Flags and helpers that every subcommand shares (check, fix, verify, lsp).

`check` and `fix` take the same flags (`run_options`), so a Ruff user's habits work on
either; `RunOptions` carries them from click to the code that runs.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from torchlint.output import FORMATS

if TYPE_CHECKING:
    from torchlint.config import Settings
    from torchlint.diagnostics import Diagnostic

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _split(values: tuple[str, ...]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def _apply(command, decorators):
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


def selection_options(command):
    """The rule-selection and config flags that check, fix and verify share."""
    return _apply(
        command,
        [
            click.option(
                "--select",
                multiple=True,
                help="Rules to enable (codes, prefixes or names), replacing the config.",
            ),
            click.option("--ignore", multiple=True, help="Rules to disable."),
            click.option(
                "--extend-select", multiple=True, help="Rules to enable on top of the selection."
            ),
            click.option(
                "--config",
                "config_path",
                type=click.Path(path_type=Path),
                help="Use this config file.",
            ),
            click.option("--isolated", is_flag=True, help="Ignore all configuration files."),
            click.option(
                "--target-torch-version",
                metavar="X.Y",
                help="The torch version the code must run on.",
            ),
            click.option(
                "--preview/--no-preview",
                default=None,
                help="Run the preview rules too (new rules still earning their place), or not, "
                "whatever the config says.",
            ),
        ],
    )


@dataclass(frozen=True)
class RunOptions:
    """What `check` and `fix` were asked to do, beyond which rules run."""

    output_format: str = "full"
    output_file: Path | None = None
    statistics: bool = False
    exit_zero: bool = False
    quiet: bool = False
    jobs: int | None = None
    no_cache: bool = False
    show_traceback: bool = False
    color: str = "auto"
    stdin_filename: str | None = None
    show_files: bool = False
    add_noqa: bool = False
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False
    show_fixes: bool = False
    fix_only: bool = False
    exit_non_zero_on_fix: bool = False

    @classmethod
    def take(cls, values: dict) -> RunOptions:
        """The run options out of click's keyword arguments; what is left is the selection."""
        return cls(**{f.name: values.pop(f.name) for f in fields(cls) if f.name in values})

    @property
    def fixing(self) -> bool:
        return self.fix or self.fix_only


def run_options(command):
    """The flags of `check` and `fix`, in one place so that both take every one of them."""
    return _apply(
        command,
        [
            click.option(
                "--output-format",
                type=click.Choice(sorted(FORMATS)),
                default="full",
                show_default=True,
                help="How to print findings.",
            ),
            click.option(
                "-o",
                "--output-file",
                type=click.Path(dir_okay=False, path_type=Path),
                help="Write the findings here.",
            ),
            click.option(
                "--statistics",
                is_flag=True,
                help="Count findings per rule instead of listing them.",
            ),
            click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings."),
            click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary."),
            click.option(
                "-j",
                "--jobs",
                type=click.IntRange(min=1),
                help="Processes to lint with (default: all cores).",
            ),
            click.option(
                "--no-cache", is_flag=True, help="Neither read nor write the result cache."
            ),
            click.option(
                "--show-traceback",
                is_flag=True,
                help="Print the traceback of internal errors (for bug reports).",
            ),
            click.option(
                "--color",
                type=click.Choice(["auto", "always", "never"]),
                default="auto",
                show_default=True,
                help="Colour the output (auto: on a terminal, unless NO_COLOR is set).",
            ),
            click.option(
                "--stdin-filename",
                metavar="PATH",
                help="The path of the file read from stdin (`-`): for config, per-file-ignores and notebooks.",
            ),
            click.option(
                "--show-files", is_flag=True, help="List the files that would be checked, and exit."
            ),
            click.option(
                "--add-noqa",
                is_flag=True,
                help="Add `# noqa: CODE` comments to every current finding.",
            ),
            click.option(
                "--fix",
                is_flag=True,
                help="Apply the safe fixes (and unsafe ones with --unsafe-fixes).",
            ),
            click.option(
                "--unsafe-fixes",
                is_flag=True,
                help="Also apply or offer fixes that may change behaviour.",
            ),
            click.option(
                "--diff", is_flag=True, help="Print the diff of the fixes and write nothing."
            ),
            click.option(
                "--show-fixes",
                is_flag=True,
                help="List what was fixed in each file (with a diff: what would be).",
            ),
            click.option(
                "--fix-only", is_flag=True, help="Apply fixes and report nothing that remains."
            ),
            click.option(
                "--exit-non-zero-on-fix",
                is_flag=True,
                help="Exit 1 when a fix was applied, even if nothing remains.",
            ),
        ],
    )


def load(paths: tuple[str, ...], config_path: Path | None, isolated: bool, **overrides) -> Settings:
    """Settings for this run, or exit 2 with a one-line message."""
    from torchlint.config import ConfigError, load_settings

    start = Path(paths[0]) if paths and Path(paths[0]).exists() else Path.cwd()
    if (
        not start.is_dir()
    ):  # a file's own folder, not its symlink target's: the target may lie outside
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
            preview=overrides.get("preview"),
        )
        for warning in settings.preview_warnings():
            click.echo(f"torchlint: warning: {warning}", err=True)
        _ = (
            settings.torch_version
        )  # inferred from the project's declarations, which may be malformed
        return settings
    except ConfigError as error:
        fail(str(error))


def install_hint(extra: str) -> str:
    """How to install an extra: torchlint is installed from a clone or its git URL, not an index."""
    from torchlint import REPOSITORY

    return f"`pip install -e '.[{extra}]'` in a clone, or `pip install \"torchlint[{extra}] @ git+{REPOSITORY}\"`"


def fail(message: str) -> NoReturn:
    click.echo(f"torchlint: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def read_stdin(name: str) -> bytes:
    """stdin as the file `name` would be read: at most its byte limit, else Unreadable (TooLarge)."""
    from torchlint.engine.files import byte_limit, read_capped

    return read_capped(sys.stdin.buffer, byte_limit(name))


def show_tracebacks(diagnostics: list[Diagnostic]) -> None:
    """`--show-traceback`: the traceback of each internal error, on stderr."""
    for d in diagnostics:
        if d.detail:
            click.echo(f"{d.path}: {d.code} {d.message}\n{d.detail}", err=True)


def use_color(choice: str, output_file: Path | None) -> bool:
    """Colour for `--color`, else for a terminal: NO_COLOR turns it off, FORCE_COLOR on."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return output_file is None and sys.stdout.isatty()


def emit(text: str, output_file: Path | None, root: Path | None = None) -> None:
    """Report text to stdout, or to `-o/--output-file`: never through a link that leads out of
    the project (`root`) and the working directory, where it would overwrite a stranger's file."""
    if output_file is None:
        click.echo(text, nl=False, color=True)  # escapes are in `text` only when colour was chosen
        return
    if _leaves_project(output_file, root):
        fail(
            f"{output_file}: refusing to write through a symbolic link that leads out of the project"
        )
    try:
        output_file.write_text(text, encoding="utf-8")
    except OSError as error:
        fail(f"{output_file}: cannot write: {error.strerror}")


def _leaves_project(path: Path, root: Path | None) -> bool:
    """A link (the file itself, or a folder on a path inside the project) whose target is outside it."""
    from torchlint.engine.files import link_out

    if link_out(path, root or Path.cwd()) is not None:  # a linked folder above the root too
        return True
    homes = [Path.cwd().resolve()] + ([root.resolve()] if root else [])
    try:
        real = path.resolve()
    except (OSError, RuntimeError):  # a symlink loop: nothing to write to
        return True
    if any(_inside(real, home) for home in homes):
        return False
    lexical = Path(os.path.normpath(path.absolute()))
    return path.is_symlink() or any(_inside(lexical, home) for home in homes)


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def project_options(command):
    """`--show-settings FILE` and `--cache-dir`, kept here so cli.py only names them."""
    command = click.option(
        "--show-settings",
        type=click.Path(path_type=Path),
        metavar="FILE",
        help="Print the settings that apply to FILE and exit.",
    )(command)
    return click.option(
        "--cache-dir",
        envvar="TORCHLINT_CACHE_DIR",
        type=click.Path(file_okay=False, path_type=Path),
        help="Where to keep the result cache (default: .torchlint_cache at the project root).",
    )(command)
