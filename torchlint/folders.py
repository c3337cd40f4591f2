"""What a folder holds, listed once for each state of the folder.

Finding a file's project root, config and torch target looks in every folder above it for
declaration files; a run asks that for each of its folders, so the same parents (the home or
temporary directory, often large) were listed again and again: a tenth of the parse on torch's
training folders. A listing is kept while the folder's modification time stays the same, which
any file created, removed or renamed in it changes."""

from __future__ import annotations

import os
import time
from fnmatch import fnmatchcase
from pathlib import Path

# File systems stamp changes with a coarse clock (a few ms): a listing taken within one tick of
# the folder's last change could miss a second change stamped with the same time, so such a
# listing is used once and not kept.
_SETTLED_NS = 100_000_000
_MAX_KEPT = 4096


class _Listing:
    def __init__(self, names: frozenset[str]) -> None:
        self.names = names
        self.matches: dict[str, list[str]] = {}  # glob pattern -> the names matching it, sorted


_kept: dict[tuple[Path, int], _Listing] = {}


def _listing(folder: Path) -> _Listing:
    try:
        changed = folder.stat().st_mtime_ns
    except OSError:
        return _Listing(frozenset())
    known = _kept.get((folder, changed))
    if known is not None:
        return known
    listed_at = time.time_ns()
    try:
        listing = _Listing(frozenset(os.listdir(folder)))
    except OSError:
        return _Listing(frozenset())
    if listed_at - changed > _SETTLED_NS:
        if len(_kept) >= _MAX_KEPT:
            _kept.clear()
        _kept[(folder, changed)] = listing
    return listing


def holds_file(folder: Path, name: str) -> bool:
    """Whether `folder/name` is a file (or a link to one)."""
    return name in _listing(folder).names and (folder / name).is_file()


def holds(folder: Path, name: str) -> bool:
    """Whether `folder/name` exists, whatever it is."""
    return name in _listing(folder).names and (folder / name).exists()


def matching(folder: Path, pattern: str) -> list[Path]:
    """The entries of `folder` whose names match the glob `pattern`, sorted, as `Path.glob`
    finds them (case-sensitively)."""
    listing = _listing(folder)
    names = listing.matches.get(pattern)
    if names is None:
        names = listing.matches[pattern] = sorted(
            n for n in listing.names if fnmatchcase(n, pattern)
        )
    return [folder / name for name in names]
