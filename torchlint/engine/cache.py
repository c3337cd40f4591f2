"""Result cache: a file's findings keyed by its content, its path, torchlint and the config,
and checked against the content of the other project files they were drawn from.

One small JSON file per entry, written to a temporary name and renamed into place, so two
runs sharing the cache never see half an entry. Each entry carries a checksum of its key and
findings, so a damaged or planted entry is recomputed rather than trusted. Nothing is written
through a symlink: the cache folder and its subfolders must be real folders inside the project,
no folder symlink above it may lead out of the project, and its marker files are created
exclusively. A cache that cannot be read or written is simply
not used.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import torchlint
from torchlint.analysis.project_index import digest_of
from torchlint.config import Settings
from torchlint.diagnostics import Applicability, Diagnostic, Edit, FileSpan, Fix, Position
from torchlint.engine.files import link_out

if TYPE_CHECKING:
    from torchlint.catalogue import RuleEntry
    from torchlint.rule import Rule

CACHE_DIR = ".torchlint_cache"


@cache
def _code_fingerprint() -> str:
    """torchlint's version plus the size and mtime of its modules, so edited rules invalidate."""
    package = Path(torchlint.__file__).parent
    # Found, not imported: checks start without the rules.
    rules = importlib.util.find_spec("torchlint.rules")
    parts = [torchlint.__version__]
    for directory in (
        package,
        *(Path(p) for p in (rules and rules.submodule_search_locations) or ()),
    ):
        for path in sorted(directory.rglob("*.py")):
            stat = path.stat()
            parts.append(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def settings_fingerprint(settings: Settings, rules: Sequence[RuleEntry | type[Rule]]) -> str:
    described = json.dumps(
        [
            _code_fingerprint(),
            [r.code for r in rules],
            settings.rule_options,
            settings.torch_version,
            settings.preview,
        ],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(described.encode()).hexdigest()


def cache_directory(settings: Settings) -> Path:
    """`--cache-dir` / TORCHLINT_CACHE_DIR, else one cache at the project root."""
    return settings.cache_dir or settings.root / CACHE_DIR


class ResultCache:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        # A cache reached through a folder symlink that leads out of its project (a linked
        # project folder, or a linked folder above --cache-dir) is neither read nor written.
        self.usable = link_out(directory, directory) is None

    def key(self, fingerprint: str, path: str, data: bytes) -> str:
        digest = hashlib.sha256(fingerprint.encode())
        digest.update(path.encode("utf-8", "surrogateescape"))
        digest.update(b"\0")
        digest.update(data)
        return digest.hexdigest()

    def get(self, key: str) -> list[Diagnostic] | None:
        """The entry, unless another project file its findings were drawn from has changed."""
        if not self.usable:
            return None
        try:
            entry = self.directory / key[:2] / f"{key}.json"
            if not _real_folder(entry.parent, self.directory) or entry.is_symlink():
                return None
            stored = json.loads(entry.read_text(encoding="utf-8"))
            records, depends_on = stored["findings"], stored["depends_on"]
            if stored["checksum"] != _checksum(key, [records, depends_on]):
                return None
            if any(digest_of(Path(path)) != digest for path, digest in depends_on.items()):
                return None
            return [_diagnostic(item) for item in records]
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            return None

    def put(self, key: str, diagnostics: list[Diagnostic], depends_on: dict[str, str]) -> None:
        if not self.usable:
            return
        folder = self.directory / key[:2]
        records = [_record(d) for d in diagnostics]
        try:
            if self.directory.is_symlink() or folder.is_symlink():
                return
            folder.mkdir(parents=True, exist_ok=True)
            if not _real_folder(folder, self.directory):
                return
            _write_tags(self.directory)
            fd, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(
                    {
                        "checksum": _checksum(key, [records, depends_on]),
                        "findings": records,
                        "depends_on": depends_on,
                    },
                    handle,
                )
            # Replaces a planted symlink, never writes through it.
            os.replace(temporary, folder / f"{key}.json")
        except OSError:
            return


def _real_folder(directory: Path, cache: Path) -> bool:
    """A folder that is no symlink and really lies inside the cache (itself no symlink)."""
    try:
        real = not directory.is_symlink() and not cache.is_symlink() and directory.is_dir()
        return real and directory.resolve().is_relative_to(cache.resolve())
    except (OSError, RuntimeError):
        return False


def _checksum(key: str, content: list) -> str:
    return hashlib.sha256(json.dumps([key, content], sort_keys=True).encode()).hexdigest()


def _write_tags(directory: Path) -> None:
    _create(
        directory / "CACHEDIR.TAG",
        "Signature: 8a477f597d28d172789f06886806bc55\n# torchlint's result cache\n",
    )
    _create(directory / ".gitignore", "*\n")


def _create(path: Path, text: str) -> None:
    """Write a new file; one that exists, or a symlink (even a dangling one), is left alone."""
    try:
        fd = os.open(
            path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644
        )
    except FileExistsError:
        return
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


def _pos(at: Position) -> list[int]:
    return [at.row, at.column]


def _record(d: Diagnostic) -> dict:
    fix = None
    if d.fix is not None:
        fix = [
            d.fix.message,
            d.fix.applicability.value,
            [[_pos(e.start), _pos(e.end), e.content] for e in d.fix.edits],
        ]
    span = None
    if d.file_span is not None:
        edits = (
            None
            if d.file_span.edits is None
            else [[_pos(e.start), _pos(e.end), e.content] for e in d.file_span.edits]
        )
        span = [_pos(d.file_span.start), _pos(d.file_span.end), edits]
    return {
        "c": d.code,
        "n": d.name,
        "m": d.message,
        "p": d.path,
        "s": _pos(d.start),
        "e": _pos(d.end),
        "f": fix,
        "cell": d.cell,
        "u": d.url,
        "l": d.source_line,
        "cb": d.context_before,
        "ca": d.context_after,
        "fs": span,
    }


def _edits(items: list) -> tuple[Edit, ...]:
    return tuple(Edit(Position(*a), Position(*b), c) for a, b, c in items)


def _diagnostic(item: dict) -> Diagnostic:
    fix = None
    if item["f"] is not None:
        message, applicability, edits = item["f"]
        fix = Fix(message, Applicability(applicability), _edits(edits))
    span = None
    if item["fs"] is not None:
        start, end, edits = item["fs"]
        span = FileSpan(Position(*start), Position(*end), None if edits is None else _edits(edits))
    return Diagnostic(
        item["c"],
        item["n"],
        item["m"],
        item["p"],
        Position(*item["s"]),
        Position(*item["e"]),
        fix,
        item["cell"],
        item["u"],
        item["l"],
        tuple(item["cb"]),
        tuple(item["ca"]),
        file_span=span,
    )
