"""Which project a file belongs to, and the settings that apply to it, found from the file itself.

As in Ruff, settings come from the nearest `[tool.torchlint]` (pyproject.toml or torchlint.toml)
above the file, so findings and fixes never depend on which paths were passed or in what order.
Without one, the project root is the nearest folder that declares a project (pyproject.toml,
setup.cfg, setup.py, requirements*.txt), else the git root, else the file's own folder.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from torchlint.config import ConfigError, Settings, find_config, load_settings

DECLARATIONS = ("pyproject.toml", "setup.cfg", "setup.py")
_TEST_DIRECTORY = re.compile(r"(^|/)tests?/")
_TEST_NAME = re.compile(r"^(test_.*|.*_test|tests|conftest)\.(py|ipynb)$")


def git_root(directory: Path) -> Path | None:
    for folder in [directory, *directory.parents]:
        if (folder / ".git").exists():
            return folder
    return None


def project_root(directory: Path) -> Path:
    """The nearest folder that declares a project, else the git root, else `directory`."""
    stop = git_root(directory)
    for folder in [directory, *directory.parents]:
        if any((folder / name).is_file() for name in DECLARATIONS) or any(
            folder.glob("requirements*.txt")
        ):
            return folder
        if folder == stop:
            return folder
    return directory


def is_test_path(relpath: str) -> bool:
    """Test code by its path: under tests/ or test/, or named test_*.py, *_test.py, tests.py, conftest.py."""
    return bool(_TEST_DIRECTORY.search(relpath)) or bool(
        _TEST_NAME.match(relpath.rsplit("/", 1)[-1])
    )


def relative_path(path: Path, root: Path) -> str:
    try:
        return path.absolute().relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


class FileSettings:
    """The settings of each file, found once per folder, with the command line's values on top."""

    def __init__(self, base: Settings) -> None:
        self.base = base
        self._by_folder: dict[Path, Settings] = {}

    def for_file(self, path: Path) -> Settings:
        folder = path.absolute().parent
        found = self._by_folder.get(folder)
        if found is None:
            found = self._by_folder[folder] = self._resolve(folder)
        return found

    def _resolve(self, folder: Path) -> Settings:
        """Raises ConfigError for a broken config file found on the way."""
        if self.base.pinned:  # --config keeps its root; --isolated still finds the project's
            root = self.base.root if self.base.source else project_root(folder)
            return replace(self.base, directory=folder, root=root)
        config = find_config(folder)
        if config is not None and config == self.base.source:
            return replace(self.base, directory=folder)
        return replace(load_settings(start=folder).merged(**dict(self.base.cli)), directory=folder)


def settings_report(path: Path, base: Settings) -> str:
    """What `--show-settings FILE` prints: everything that decides the file's findings."""
    if not path.is_file():
        raise ConfigError(f"{path}: --show-settings needs an existing file")
    return _describe(path.absolute(), FileSettings(base).for_file(path))


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


def _describe(path: Path, settings: Settings) -> str:
    relpath = relative_path(path, settings.root)
    from torchlint.engine.lint import for_text, imports_test_framework, rules_for

    text = _code_text(path, settings.root)
    rules = for_text(text, rules_for(relpath, settings.enabled_rules(), settings), settings)
    test_code = is_test_path(relpath) or imports_test_framework(text)
    lines = [
        f"file: {path}",
        f"project root: {settings.root}",
        f"config file: {settings.source or '(none: defaults)'}",
        f"torch target: {settings.torch_target.describe()}",
        f"test code: {'yes' if test_code else 'no'}"
        + (
            " (performance rules report nothing here; set lint-tests = true to lint it)"
            if test_code and not settings.lint_tests
            else ""
        ),
        f"per-file-ignores: {', '.join(settings.ignored_for(relpath)) or '(none)'}",
        f"enabled rules: {', '.join(r.code for r in rules)}",
    ]
    return "\n".join(lines) + "\n"
