"""What a folder holds, listed once for each state of the folder.

Finding a file's project root, config and torch target looks in every folder above it for
declaration files; a run asks that for each of its folders, so the same parents (the home or
temporary directory, often large) were listed again and again: a tenth of the parse on torch's
training folders. A listing is kept while the folder's modification time stays the same, which
any file created, removed or renamed in it changes."""

from __future__ import annotations

import os
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path


def names_in(folder: Path) -> frozenset[str]:
    """The names of the entries of `folder`; none when it cannot be listed."""
    return _listing(folder, _changed(folder))


def _changed(folder: Path) -> int:
    try:
        return folder.stat().st_mtime_ns
    except OSError:
        return -1


@lru_cache(maxsize=4096)
def _listing(folder: Path, changed: int) -> frozenset[str]:
    if changed < 0:
        return frozenset()
    try:
        return frozenset(os.listdir(folder))
    except OSError:
        return frozenset()


def holds_file(folder: Path, name: str) -> bool:
    """Whether `folder/name` is a file (or a link to one)."""
    return name in names_in(folder) and (folder / name).is_file()


def holds(folder: Path, name: str) -> bool:
    """Whether `folder/name` exists, whatever it is."""
    return name in names_in(folder) and (folder / name).exists()


def matching(folder: Path, pattern: str) -> list[Path]:
    """The entries of `folder` whose names match the glob `pattern`, sorted (as `Path.glob`
    finds them, case-sensitively)."""
    return list(_matching(folder, _changed(folder), pattern))


@lru_cache(maxsize=4096)
def _matching(folder: Path, changed: int, pattern: str) -> tuple[Path, ...]:
    names = _listing(folder, changed)
    return tuple(sorted(folder / name for name in names if fnmatchcase(name, pattern)))
