"""Which project a file belongs to, and the settings that apply to it, found from the file itself.

As in Ruff, settings come from the nearest `[tool.torchlint]` (pyproject.toml or torchlint.toml)
above the file, so findings and fixes never depend on which paths were passed or in what order.
Without one, the project root is the nearest folder that declares a project (pyproject.toml,
setup.cfg, a setup.py that calls `setup()`, requirements*.txt), else the git root, else the
file's own folder.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from torchlint.analysis.test_code import (
    imports_test_framework,
    is_test_code,
    is_test_path,
    named_like_script_test,
    runs_as_script,
    test_by_name_only,
)
from torchlint.config import (
    ConfigError,
    Settings,
    find_config,
    load_settings,
    project_root,
)
from torchlint.registry import matches

if TYPE_CHECKING:
    from torchlint.catalogue import RuleEntry
    from torchlint.rule import Rule

# A rule or its catalogue entry: a file's rules are of the kind it was given.
RuleT = TypeVar("RuleT", bound="RuleEntry | type[Rule]")


def relative_path(path: Path, root: Path) -> str:
    try:
        return Path(os.path.abspath(path)).relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def rules_for(path_rel: str, rules: Sequence[RuleT], settings: Settings) -> list[RuleT]:
    """The rules for one file: less its per-file-ignores, and less the performance rules in test
    code (its toy models and DataParallel tests are not training) unless `lint-tests` is set."""
    if not settings.lint_tests and is_test_path(path_rel) and not test_by_name_only(path_rel):
        rules = [r for r in rules if not r.performance]
    ignored = settings.ignored_for(path_rel)
    if not ignored:
        return list(rules)
    return [r for r in rules if not any(matches(r, s) for s in ignored)]


class FileSettings:
    """The settings of each file, found once per folder, with the command line's values on top."""

    def __init__(self, base: Settings) -> None:
        self.base = base
        self._by_folder: dict[Path, Settings] = {}

    def for_file(self, path: Path) -> Settings:
        # As named, not resolved: a file reached through a folder symlink belongs to the project
        # it is named in, the one whose torch target, cache and refusal apply to it.
        folder = Path(os.path.abspath(path)).parent
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


def settings_report(path: Path, base: Settings, code_text: Callable[[Path, Path], str]) -> str:
    """What `--show-settings FILE` prints: everything that decides the file's findings.
    `code_text(path, root)` reads the file's code as the linter does (the engine's reader, which
    lies above this module), for the test-framework imports that make it test code."""
    if not path.is_file():
        raise ConfigError(f"{path}: --show-settings needs an existing file")
    settings = FileSettings(base).for_file(path)
    return _describe(path.absolute(), settings, code_text(path, settings.root))


def _describe(path: Path, settings: Settings, text: str) -> str:
    relpath = relative_path(path, settings.root)
    rules = for_text(
        relpath, text, rules_for(relpath, settings.enabled_rules(), settings), settings
    )
    test_code = is_test_code(relpath, text)
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
        f"preview: {'on' if settings.preview else 'off (preview rules do not run)'}",
        f"enabled rules: {', '.join(r.code for r in rules)}",
    ]
    return "\n".join(lines) + "\n"


def for_text(path: str, text: str, rules: Sequence[RuleT], settings: Settings) -> list[RuleT]:
    """`rules` less the performance rules in a unit-test module found by its text: one that
    imports pytest or unittest, whatever its path, or one named like a test module that is no
    script (`rules_for` leaves that to the text), unless `lint-tests` is set."""
    if settings.lint_tests:
        return list(rules)
    name = os.path.basename(path)
    if imports_test_framework(text) or (named_like_script_test(name) and not runs_as_script(text)):
        return [rule for rule in rules if not rule.performance]
    return list(rules)
