"""What the server lints with: the project's `[tool.torchlint]` under the editor's settings.

Editor settings act like command-line flags on top of the nearest config file. The config is
cached per directory and re-read when any pyproject.toml/torchlint.toml above the directory
changes its modification time or size, so a change is seen even by clients that cannot watch
files; file-watch notifications only make the re-read immediate.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from torchlint.config import ConfigError, Settings, load_settings

DEFAULT_DEBOUNCE_MS = 200
CONFIG_NAMES = ("torchlint.toml", "pyproject.toml")


@dataclass(frozen=True)
class ClientSettings:
    """Editor settings (initializationOptions / workspace configuration, camelCase keys)."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    unsafe_fixes: bool | None = None
    target_torch_version: str | None = None
    preview: bool | None = None  # None: the config's `preview`
    debounce_ms: int = DEFAULT_DEBOUNCE_MS

    def apply(self, settings: Settings) -> Settings:
        merged = settings.merged(
            select=self.select,
            ignore=self.ignore,
            target_torch_version=self.target_torch_version,
            preview=self.preview,
        )
        if self.unsafe_fixes is None:
            return merged
        return replace(merged, unsafe_fixes=self.unsafe_fixes)


def _selectors(value: Any, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"setting {key!r}: expected a list of rule selectors")
    return tuple(v.strip() for v in value if v.strip())


def _parse(key: str, value: Any) -> dict[str, Any]:
    if key in ("select", "ignore"):
        selectors = _selectors(value, key)
        Settings().merged(**{key: selectors})  # raises on an unknown selector
        return {key: selectors}
    if key == "unsafeFixes":
        if not isinstance(value, bool):
            raise ConfigError("setting 'unsafeFixes': expected true or false")
        return {"unsafe_fixes": value}
    if key == "preview":
        if not isinstance(value, bool):
            raise ConfigError("setting 'preview': expected true or false")
        return {"preview": value}
    if key == "targetTorchVersion":
        if value is None or value == "":
            return {}
        Settings().merged(target_torch_version=value)
        return {"target_torch_version": value}
    if key == "debounceMs":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError("setting 'debounceMs': expected a whole number of milliseconds >= 0")
        return {"debounce_ms": value}
    raise ConfigError(f"unknown setting {key!r}")


def parse_client_settings(raw: Any) -> tuple[ClientSettings, list[str]]:
    """Settings from a client's JSON (flat, or under a "torchlint" key) and one line per problem.

    A bad value is reported and left out, so one typo does not disable the rest.
    """
    table = raw.get("torchlint", raw) if isinstance(raw, dict) else None
    if not isinstance(table, dict):
        return ClientSettings(), []
    values: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in table.items():
        try:
            values.update(_parse(key, value))
        except ConfigError as error:
            problems.append(str(error))
    return ClientSettings(**values), problems


def _stamp(directory: Path) -> tuple[tuple[str, int, int], ...]:
    """Identity of every config file that could apply to `directory`."""
    found = []
    for folder in (directory, *directory.parents):
        for name in CONFIG_NAMES:
            path = os.path.join(folder, name)
            try:
                info = os.stat(path)
            except OSError:
                continue
            found.append((path, info.st_mtime_ns, info.st_size))
    return tuple(found)


class ProjectSettings:
    """Project settings per directory; a broken config yields defaults and the error."""

    def __init__(self) -> None:
        self._entries: dict[Path, tuple[tuple, Settings, str | None]] = {}

    def clear(self) -> None:
        self._entries.clear()

    def for_directory(self, directory: Path) -> tuple[Settings, str | None]:
        stamp = _stamp(directory)
        entry = self._entries.get(directory)
        if entry is not None and entry[0] == stamp:
            return entry[1], entry[2]
        try:
            settings, problem = load_settings(start=directory), None
        except ConfigError as error:
            settings, problem = Settings(root=directory), str(error)
        # Resolve the inferred torch version once rather than on every lint.
        settings = replace(settings, target_torch_version=settings.torch_version)
        self._entries[directory] = (stamp, settings, problem)
        return settings, problem
