"""Which files a run looks at: Python files and Jupyter notebooks under the given paths, less excluded ones.

Paths named on the command line are always checked; exclusions and .gitignore apply to
what a directory walk finds, as in ruff.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pathspec

from torchlint.config import Settings

DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".hg", ".ipynb_checkpoints", ".mypy_cache", ".nox",
    ".pytest_cache", ".ruff_cache", ".svn", ".tox", ".venv", ".torchlint_cache", "__pypackages__",
    "_build", "buck-out", "build", "dist", "node_modules", "site-packages", "venv",
)
SUFFIXES = (".py", ".ipynb")


@dataclass(frozen=True)
class Discovery:
    files: list[Path]
    missing: list[str]  # paths that were named but do not exist


def _spec(patterns: tuple[str, ...]) -> pathspec.PathSpec:
    return pathspec.PathSpec.from_lines("gitwildmatch", patterns)


def _gitignore(directory: Path) -> pathspec.PathSpec | None:
    path = directory / ".gitignore"
    if not path.is_file():
        return None
    try:
        return _spec(tuple(path.read_text(encoding="utf-8", errors="replace").splitlines()))
    except OSError:
        return None


def discover(paths: list[str], settings: Settings) -> Discovery:
    exclude = _spec((settings.exclude or DEFAULT_EXCLUDE) + settings.extend_exclude)
    files: list[Path] = []
    missing: list[str] = []
    seen: set[Path] = set()
    for name in paths:
        path = Path(name)
        if path.is_dir():
            found = _walk(path, settings.root, exclude)
        elif path.exists() or path.is_symlink():
            found = [path]
        else:
            missing.append(name)
            continue
        for file in found:
            key = file.absolute()
            if key not in seen:
                seen.add(key)
                files.append(file)
    return Discovery(files, missing)


def _relative(path: Path, root: Path, top: Path) -> str:
    """The path as exclusion patterns see it: below the project root, else below the walked
    folder, so the folders above a path the user named never exclude it."""
    try:
        return path.resolve().relative_to(root).as_posix()
    except (ValueError, OSError, RuntimeError):
        pass
    try:
        return path.relative_to(top).as_posix()
    except ValueError:
        return path.as_posix()


def _walk(top: Path, root: Path, exclude: pathspec.PathSpec) -> list[Path]:
    found: list[Path] = []
    ignores: dict[str, list[tuple[Path, pathspec.PathSpec]]] = {}
    for directory, dirnames, filenames in os.walk(top, followlinks=False):
        here = Path(directory)
        inherited = ignores.get(str(here.parent), []) if here != top else []
        own = _gitignore(here)
        active = inherited + ([(here, own)] if own else [])
        ignores[directory] = active

        def skipped(path: Path, is_dir: bool) -> bool:
            rel = _relative(path, root, top) + ("/" if is_dir else "")
            if exclude.match_file(rel) or exclude.match_file(path.name + ("/" if is_dir else "")):
                return True
            for base, spec in active:
                local = path.relative_to(base).as_posix() + ("/" if is_dir else "")
                if spec.match_file(local):
                    return True
            return False

        dirnames[:] = sorted(d for d in dirnames if not skipped(here / d, True))
        for filename in sorted(filenames):
            path = here / filename
            if path.suffix in SUFFIXES and not skipped(path, False):
                found.append(path)
    return found
