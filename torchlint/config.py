"""`[tool.torchlint]` in pyproject.toml or torchlint.toml, merged with the command line.

Validation is strict because a silently ignored typo in a CI config is a rule that never
runs: unknown keys, bad values and unparsable TOML raise ConfigError naming file and key.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from dataclasses import dataclass, field, replace
from fnmatch import fnmatch
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pathspec
from pathspec.patterns.gitwildmatch import GitWildMatchPatternError

from torchlint.analysis.ast_names import ast_dotted
from torchlint.catalogue import RuleEntry, entries
from torchlint.folders import holds, holds_file, matching
from torchlint.registry import matches
from torchlint.torch_target import NEWEST_TORCH, DeclarationError, TorchTarget, infer

if TYPE_CHECKING:
    from torchlint.rule import Rule

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_VERSION = re.compile(r"^\s*(\d+)\.(\d+)")
# The files that declare a project: the nearest folder with one is its root.
DECLARATIONS = ("pyproject.toml", "setup.cfg", "setup.py")
_LIST_KEYS = ("select", "ignore", "extend-select", "exclude", "extend-exclude")


def git_root(directory: Path) -> Path | None:
    for folder in [directory, *directory.parents]:
        if holds(folder, ".git"):
            return folder
    return None


def project_root(directory: Path) -> Path:
    """The nearest folder that declares a project, else the git root, else `directory`."""
    return declared_root(directory) or directory


def declared_root(directory: Path) -> Path | None:
    """The nearest folder that declares a project, else the git root, else None: no project."""
    stop = git_root(directory)
    for folder in [directory, *directory.parents]:
        if any(_declares(folder, name) for name in DECLARATIONS) or any(
            matching(folder, "requirements*.txt")
        ):
            return folder
        if folder == stop:
            return folder
    return None


def _declares(folder: Path, name: str) -> bool:
    """Whether a declaration file is one: a `setup.py` must call `setup()` (`setuptools.setup`),
    since a helper module named setup.py (a Sphinx hook, a script's `setup(args)`) declares
    nothing, and the enclosing project's root and requirements still apply to its folder."""
    if not holds_file(folder, name):
        return False
    if name != "setup.py":
        return True
    try:
        text = (folder / name).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(
        isinstance(node, ast.Call) and ast_dotted(node.func) in _SETUP_CALLS
        for node in ast.walk(tree)
    )


_SETUP_CALLS = frozenset({"setup", "setuptools.setup", "distutils.core.setup", "core.setup"})


class ConfigError(Exception):
    """A configuration problem, shown to the user as one line."""


@dataclass(frozen=True)
class Selection:
    """One layer of rule selection; a later layer (the command line) overrides an earlier one."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def apply(self, rules: tuple[RuleEntry, ...], chosen: list[RuleEntry]) -> list[RuleEntry]:
        if self.select is not None:
            chosen = [r for r in rules if any(matches(r, s) for s in self.select)]
        codes = {r.code for r in chosen}  # a set: `r not in chosen` compares whole entries
        chosen = chosen + [
            r
            for r in rules
            if r.code not in codes and any(matches(r, s) for s in self.extend_select)
        ]
        return [r for r in chosen if not any(matches(r, s) for s in self.ignore)]


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    target_torch_version: tuple[int, int] | None = None
    unsafe_fixes: bool = False
    lint_tests: bool = False  # performance rules also report in test code
    preview: bool = False  # preview rules run (`--preview`, `preview = true`)
    rule_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    root: Path = field(default_factory=Path.cwd)
    source: Path | None = None  # the config file these settings came from
    overrides: tuple[Selection, ...] = ()  # command-line selections, applied after the config's
    # The command line's values, kept so that settings found for another file get them too.
    cli: tuple[tuple[str, Any], ...] = ()
    pinned: bool = False  # --config or --isolated: the same settings for every file
    directory: Path | None = None  # the folder of the files these settings serve
    cache_dir: Path | None = None  # --cache-dir / TORCHLINT_CACHE_DIR

    @cached_property
    def torch_target(self) -> TorchTarget:
        """Read once per settings: inferring it reads the project's declaration files."""
        if self.target_torch_version is not None:
            where = (
                f"target-torch-version in {self.source}"
                if self.source and not self._cli_target
                else "--target-torch-version"
            )
            return TorchTarget(self.target_torch_version, where)
        if self.directory is None:  # settings of no file on disk (text in memory): newest torch
            return TorchTarget(NEWEST_TORCH, "no file: newest torch")
        # Up to the repository's root, not the project root: a folder whose requirements.txt names
        # no torch (an example inside a repository) is a project of its own for settings, yet its
        # code runs on the torch its enclosing project pins.
        try:
            found = infer(self.directory, stop=git_root(self.directory))
        except DeclarationError as error:
            raise ConfigError(str(error)) from None
        return found or TorchTarget(NEWEST_TORCH, "no torch requirement declared: newest torch")

    @property
    def _cli_target(self) -> bool:
        return any(name == "target_torch_version" and value for name, value in self.cli)

    @property
    def torch_version(self) -> tuple[int, int]:
        return self.torch_target.version

    def enabled_rules(self) -> list[RuleEntry]:
        rules = entries()
        chosen = [r for r in rules if r.default_enabled]
        for layer in self._layers():
            chosen = layer.apply(rules, chosen)
        # As in Ruff, a preview rule runs only in preview mode, however it was selected.
        return chosen if self.preview else [r for r in chosen if not r.preview]

    def _layers(self) -> tuple[Selection, ...]:
        return (Selection(self.select, self.extend_select, self.ignore), *self.overrides)

    def preview_warnings(self) -> list[str]:
        """One line per selector that names a preview rule exactly (its code or name) outside
        preview mode: Ruff's "has no effect" warning, so the rule's silence is no surprise.
        Prefixes and `ALL` leave preview rules out without a word, as they do in Ruff."""
        if self.preview:
            return []
        named = [
            (selector, entry)
            for layer in self._layers()
            for selector in (*(layer.select or ()), *layer.extend_select)
            for entry in entries()
            if entry.preview
            and (selector.strip().upper() == entry.code or selector.strip().lower() == entry.name)
        ]
        return [
            f"selecting {selector!r} has no effect: {entry.code} is a preview rule, which runs "
            "only with --preview (or `preview = true` in [tool.torchlint])"
            for selector, entry in dict.fromkeys(named)
        ]

    def ignored_for(self, relpath: str) -> tuple[str, ...]:
        """Selectors that per-file-ignores switches off for a path relative to the root."""
        found: list[str] = []
        for pattern, selectors in self.per_file_ignores.items():
            if fnmatch(relpath, pattern) or fnmatch(Path(relpath).name, pattern):
                found.extend(selectors)
        return tuple(found)

    def merged(self, **overrides: Any) -> Settings:
        """Command-line values over config values, as in ruff: `--select` starts the selection
        afresh (the config's ignore no longer applies), `--extend-select` can re-enable a rule
        the config ignores, `--ignore` takes rules off the result."""
        changes: dict[str, Any] = {}
        for name in ("select", "ignore", "extend_select"):
            for selector in overrides.get(name) or ():
                _check_selector(selector, f"--{name.replace('_', '-')}")
        if overrides.get("select") or overrides.get("ignore") or overrides.get("extend_select"):
            layer = Selection(
                tuple(overrides["select"]) if overrides.get("select") else None,
                tuple(overrides.get("extend_select") or ()),
                tuple(overrides.get("ignore") or ()),
            )
            changes["overrides"] = self.overrides + (layer,)
        if overrides.get("target_torch_version"):
            changes["target_torch_version"] = parse_version(
                overrides["target_torch_version"], "--target-torch-version"
            )
        if overrides.get("unsafe_fixes"):
            changes["unsafe_fixes"] = True
        if overrides.get("preview") is not None:  # --preview or --no-preview; None: the config's
            changes["preview"] = overrides["preview"]
        if overrides.get("cache_dir"):
            changes["cache_dir"] = Path(overrides["cache_dir"]).absolute()
        changes["cli"] = tuple(
            sorted(
                (k, tuple(v) if isinstance(v, list) else v)
                for k, v in overrides.items()
                if v or (k == "preview" and v is not None)  # --no-preview is a value too
            )
        )
        return replace(self, **changes)


def parse_version(value: Any, where: str) -> tuple[int, int]:
    match = _VERSION.match(str(value)) if isinstance(value, str) else None
    if match is None:
        raise ConfigError(f'{where}: expected a version like "2.1", got {value!r}')
    return int(match.group(1)), int(match.group(2))


def _check_selector(selector: str, where: str) -> None:
    if not any(matches(rule, selector) for rule in entries()):
        raise ConfigError(f"{where}: unknown rule selector {selector!r}")


def _check_patterns(patterns: list[str], where: str) -> None:
    for pattern in patterns:
        try:
            pathspec.PathSpec.from_lines("gitwildmatch", [pattern])
        except (GitWildMatchPatternError, ValueError, TypeError):
            raise ConfigError(f"{where}: invalid pattern {pattern!r}") from None


def find_config(start: Path) -> Path | None:
    """The nearest torchlint.toml, or pyproject.toml with a [tool.torchlint] table, above the
    folder as named: a folder reached through a symlink belongs to the project it is named in."""
    start = Path(os.path.abspath(start))
    for directory in [start, *start.parents]:
        if holds_file(directory, "torchlint.toml"):
            return directory / "torchlint.toml"
        candidate = directory / "pyproject.toml"
        if holds_file(directory, "pyproject.toml") and _has_torchlint_table(_read_toml(candidate)):
            return candidate
    return None


def _has_torchlint_table(data: dict[str, Any]) -> bool:
    """An empty `[tool.torchlint]` still marks the project's root, as in Ruff."""
    tool = data.get("tool")
    return isinstance(tool, dict) and "torchlint" in tool


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: nested too deeply") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None


def load_settings(
    config: Path | None = None, *, start: Path | None = None, isolated: bool = False
) -> Settings:
    """Settings from `config`, else from the nearest config file above `start`."""
    start = Path(os.path.abspath(start or Path.cwd()))  # as named, like find_config
    directory = start if start.is_dir() else start.parent
    pinned = isolated or config is not None
    if isolated:
        return Settings(root=project_root(directory), pinned=True, directory=directory)
    if config is None:
        config = find_config(directory)
        if config is None:
            return Settings(root=project_root(directory), directory=directory)
    elif not config.is_file():
        raise ConfigError(f"{config}: config file not found")
    data = _read_toml(config)
    _check_project_table(data, config)
    settings = _settings_from_table(_torchlint_table(data, config), config)
    return replace(settings, pinned=pinned, directory=directory)


def _check_project_table(data: dict[str, Any], path: Path) -> None:
    """The torch target is read from `[project]`: a malformed one is a config error, not a guess."""
    project = data.get("project", {})
    if not isinstance(project, dict):
        raise ConfigError(f"{path}: [project] must be a table")
    if not isinstance(project.get("dependencies", []), list):
        raise ConfigError(f"{path}: [project] dependencies must be a list of strings")


def _torchlint_table(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """The file's [tool.torchlint] table; a file other than pyproject.toml may also be the table itself."""
    tool = data.get("tool")
    nested = tool.get("torchlint") if isinstance(tool, dict) else None
    if nested is None:
        return {} if path.name == "pyproject.toml" else data
    if not isinstance(nested, dict):
        raise ConfigError(f"{path}: [tool.torchlint] must be a table")
    return nested


def _settings_from_table(table: dict[str, Any], path: Path) -> Settings:
    values: dict[str, Any] = {"root": Path(os.path.abspath(path.parent)), "source": path}
    options: dict[str, dict[str, Any]] = {}
    for key, value in table.items():
        where = f"{path}: [tool.torchlint] {key}"
        if key in _LIST_KEYS:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{where}: expected a list of strings")
            if key in ("select", "ignore", "extend-select"):
                for selector in value:
                    _check_selector(selector, where)
            else:
                _check_patterns(value, where)
            values[key.replace("-", "_")] = tuple(value)
        elif key == "per-file-ignores":
            if not isinstance(value, dict) or not all(
                isinstance(v, list) and all(isinstance(s, str) for s in v) for v in value.values()
            ):
                raise ConfigError(f"{where}: expected a table of glob = [rule selectors]")
            for selectors in value.values():
                for selector in selectors:
                    _check_selector(selector, where)
            values["per_file_ignores"] = {k: tuple(v) for k, v in value.items()}
        elif key == "target-torch-version":
            values["target_torch_version"] = parse_version(value, where)
        elif key in ("unsafe-fixes", "lint-tests", "preview"):
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: expected true or false")
            values[key.replace("-", "_")] = value
        elif (entry := _rule_named(key)) is not None and isinstance(value, dict):
            options[entry.name] = _rule_options(entry.load(), value, where)
        else:
            raise ConfigError(f"{path}: unknown key {key!r} in [tool.torchlint]")
    return Settings(rule_options=options, **values)


def _rule_named(key: str) -> RuleEntry | None:
    """The rule a `[tool.torchlint.<rule>]` table names, by name or code."""
    return next(
        (e for e in entries() if key.strip().lower() == e.name or key.strip().upper() == e.code),
        None,
    )


def _rule_options(rule: type[Rule], value: dict[str, Any], where: str) -> dict[str, Any]:
    parsed: dict[str, Any] = {}
    for key, option in value.items():
        name = key.replace("-", "_")
        if name not in rule.options:
            raise ConfigError(f"{where}: unknown option {key!r} for {rule.code}")
        default = rule.options[name]
        if not isinstance(option, type(default)):
            raise ConfigError(f"{where}.{key}: expected {type(default).__name__}")
        parsed[name] = option
    return parsed
