"""A whole run: discover files, lint each, return results in a deterministic order."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from torchlint.config import Settings
from torchlint.diagnostics import Diagnostic
from torchlint.engine.files import discover
from torchlint.engine.lint import IO_ERROR, SYNTAX_ERROR, FileResult, builtin, decode, lint_text, rules_for
from torchlint.rule import Rule


@dataclass
class RunResult:
    files: list[FileResult]
    missing: list[str]

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for f in self.files for d in f.diagnostics]


def display_path(path: Path) -> str:
    """Paths relative to the working directory when below it, as users typed them."""
    try:
        return path.absolute().relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path.as_posix()


def read_source(path: Path) -> tuple[str | None, Diagnostic | None]:
    """The decoded text of a file, or the one-line finding that says why it cannot be read."""
    shown = display_path(path)
    try:
        if not path.is_file():
            return None, builtin(IO_ERROR, shown, "not a regular file")
        data = path.read_bytes()
    except OSError as error:
        return None, builtin(IO_ERROR, shown, f"cannot read file: {error.strerror or error}")
    try:
        return decode(data), None
    except (UnicodeDecodeError, SyntaxError, LookupError) as error:
        reason = error.reason if isinstance(error, UnicodeDecodeError) else str(error)
        return None, builtin(SYNTAX_ERROR, shown, f"cannot decode file: {reason}")


def lint_file(path: Path, rules: list[type[Rule]], settings: Settings) -> FileResult:
    shown = display_path(path)
    text, problem = read_source(path)
    if problem is not None:
        return FileResult(shown, [problem])
    relative = _relative_to_root(path, settings.root)
    return FileResult(shown, lint_text(shown, text, rules_for(relative, rules, settings), settings))


def _relative_to_root(path: Path, root: Path) -> str:
    try:
        return path.absolute().relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def check_paths(paths: list[str], settings: Settings) -> RunResult:
    discovery = discover(paths, settings)
    rules = settings.enabled_rules()
    results = [lint_file(path, rules, settings) for path in discovery.files]
    return RunResult(results, discovery.missing)
