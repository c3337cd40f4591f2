"""`[tool.torchlint]` in pyproject.toml or torchlint.toml, merged with the command line.

Validation is strict because a silently ignored typo in a CI config is a rule that never
runs: unknown keys, bad values and unparsable TOML raise ConfigError naming file and key.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, replace
from fnmatch import fnmatch
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pathspec
from pathspec.patterns.gitwildmatch import GitWildMatchPatternError

from torchlint.registry import all_rules, find_rule, matches

if TYPE_CHECKING:
    from torchlint.rule import Rule

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

NEWEST_TORCH = (2, 13)
LAST_1X = (1, 13)
_VERSION = re.compile(r"^\s*(\d+)\.(\d+)")
_LIST_KEYS = ("select", "ignore", "extend-select", "exclude", "extend-exclude")


class ConfigError(Exception):
    """A configuration problem, shown to the user as one line."""


@dataclass(frozen=True)
class Selection:
    """One layer of rule selection; a later layer (the command line) overrides an earlier one."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def apply(self, rules: tuple[type[Rule], ...], chosen: list[type[Rule]]) -> list[type[Rule]]:
        if self.select is not None:
            chosen = [r for r in rules if any(matches(r, s) for s in self.select)]
        chosen = chosen + [r for r in rules if r not in chosen and any(matches(r, s) for s in self.extend_select)]
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
    rule_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    root: Path = field(default_factory=Path.cwd)
    source: Path | None = None  # the config file these settings came from
    overrides: tuple[Selection, ...] = ()  # command-line selections, applied after the config's

    @cached_property
    def torch_version(self) -> tuple[int, int]:
        """Read once per run: inferring it reads the project's requirement files."""
        return self.target_torch_version or infer_torch_version(self.root) or NEWEST_TORCH

    def enabled_rules(self) -> list[type[Rule]]:
        rules = all_rules()
        chosen = [r for r in rules if r.default_enabled]
        for layer in (Selection(self.select, self.extend_select, self.ignore), *self.overrides):
            chosen = layer.apply(rules, chosen)
        return chosen

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
            changes["target_torch_version"] = parse_version(overrides["target_torch_version"], "--target-torch-version")
        if overrides.get("unsafe_fixes"):
            changes["unsafe_fixes"] = True
        return replace(self, **changes)


def parse_version(value: Any, where: str) -> tuple[int, int]:
    match = _VERSION.match(str(value)) if isinstance(value, str) else None
    if match is None:
        raise ConfigError(f"{where}: expected a version like \"2.1\", got {value!r}")
    return int(match.group(1)), int(match.group(2))


def _check_selector(selector: str, where: str) -> None:
    if not any(matches(rule, selector) for rule in all_rules()):
        raise ConfigError(f"{where}: unknown rule selector {selector!r}")


def _check_patterns(patterns: list[str], where: str) -> None:
    for pattern in patterns:
        try:
            pathspec.PathSpec.from_lines("gitwildmatch", [pattern])
        except (GitWildMatchPatternError, ValueError, TypeError):
            raise ConfigError(f"{where}: invalid pattern {pattern!r}") from None


def find_config(start: Path) -> Path | None:
    """The nearest torchlint.toml, or pyproject.toml with a [tool.torchlint] table."""
    start = start.resolve()
    for directory in [start, *start.parents]:
        candidate = directory / "torchlint.toml"
        if candidate.is_file():
            return candidate
        candidate = directory / "pyproject.toml"
        if candidate.is_file() and _torchlint_table(_read_toml(candidate), candidate):
            return candidate
    return None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: nested too deeply") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None


def load_settings(config: Path | None = None, *, start: Path | None = None, isolated: bool = False) -> Settings:
    """Settings from `config`, else from the nearest config file above `start`."""
    root = (start or Path.cwd()).resolve()
    if isolated:
        return Settings(root=root if root.is_dir() else root.parent)
    if config is None:
        config = find_config(root if root.is_dir() else root.parent)
        if config is None:
            return Settings(root=root if root.is_dir() else root.parent)
    elif not config.is_file():
        raise ConfigError(f"{config}: config file not found")
    return _settings_from_table(_torchlint_table(_read_toml(config), config), config)


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
    values: dict[str, Any] = {"root": path.parent.resolve(), "source": path}
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
        elif key == "unsafe-fixes":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: expected true or false")
            values["unsafe_fixes"] = value
        elif (rule := find_rule(key)) is not None and isinstance(value, dict):
            options[rule.name] = _rule_options(rule, value, where)
        else:
            raise ConfigError(f"{path}: unknown key {key!r} in [tool.torchlint]")
    return Settings(rule_options=options, **values)


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


# -- target torch version inferred from the project's own requirement ---------------------
_TORCH_REQ = re.compile(r"^\s*torch\s*(?:\[[^\]]*\])?\s*(?P<spec>[^;#]*)", re.IGNORECASE)
_SPEC = re.compile(r"(==|~=|>=|<=|>|<|!=)\s*(\d+(?:\.\d+)*)")


def infer_torch_version(root: Path) -> tuple[int, int] | None:
    """The oldest torch the project admits, from pyproject dependencies or requirements*.txt."""
    requirements: list[str] = []
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            project = _read_toml(pyproject).get("project", {})
        except ConfigError:
            project = {}
        if not isinstance(project, dict):
            raise ConfigError(f"{pyproject}: [project] must be a table")
        dependencies = project.get("dependencies", [])
        if not isinstance(dependencies, list):
            raise ConfigError(f"{pyproject}: [project] dependencies must be a list of strings")
        requirements += [r for r in dependencies if isinstance(r, str)]
    for path in sorted(root.glob("requirements*.txt")):
        try:
            requirements += path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
    for requirement in requirements:
        match = _TORCH_REQ.match(requirement)
        if match and not requirement.strip().lower().startswith(("torchvision", "torchaudio", "torchtext")):
            version = _oldest_admitted(match.group("spec"))
            if version is not None:
                return version
    return None


def _oldest_admitted(spec: str) -> tuple[int, int] | None:
    lower: tuple[int, int] | None = None
    upper: tuple[int, int] | None = None
    for op, version in _SPEC.findall(spec):
        parts = [int(p) for p in version.split(".")] + [0]
        major_minor = (parts[0], parts[1])
        if op in ("==", "~=", ">=", ">"):
            lower = major_minor
        elif op == "<=":
            upper = major_minor
        elif op == "<":
            if parts[1] > 0:
                upper = (parts[0], parts[1] - 1)
            else:
                upper = LAST_1X if parts[0] == 2 else NEWEST_TORCH
    return lower or upper
