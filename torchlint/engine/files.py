"""Which files a run looks at, and the one safe way to read them.

Paths named on the command line are always checked; exclusions and .gitignore apply to
what a directory walk finds, as in ruff. Every room that reads a source file (check, fix,
the language server) reads it through `read_source`: regular files only, one size cap, and
never through a symlink that leaves the project, so nothing outside it is shown or rewritten.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import pathspec
from pathspec.patterns.gitwildmatch import GitWildMatchPatternError

from torchlint.config import Settings

DEFAULT_EXCLUDE = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pytest_cache",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    ".torchlint_cache",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)
SUFFIXES = (".py", ".ipynb")
# What a training run writes into its output folder, beside the copies of the model code some
# training scripts save there (`shutil.copy(model_file, log_dir)`, wandb's `files/code/`): a
# folder of saved weights, TensorBoard event files, Hydra's record of the run, wandb's metadata.
# Weights alone, beside code, are no such record: pretrained weights sit next to the code that
# loads them.
_CHECKPOINT_FOLDERS = frozenset({"checkpoint", "checkpoints", "ckpt", "ckpts"})
_WEIGHTS = (".pth", ".pt", ".ckpt", ".tar", ".bin", ".safetensors")
_RUN_FILES = ("events.out.tfevents.", "wandb-metadata.json")
# Parsing takes minutes beyond this much code; such files are generated data, not training code.
# It caps a Python file, and a notebook's code cells (the module that is parsed).
MAX_FILE_BYTES = 2 * 2**20
# A notebook's JSON is mostly outputs (base64 images, tables): it is read up to this ceiling, so
# a 5 MiB notebook of 10 KiB code is analysed while nothing unbounded is read into memory.
MAX_NOTEBOOK_BYTES = 64 * 2**20


class Unreadable(Exception):
    """A source file that is not read; the message says why in one line."""


class TooLarge(Unreadable):
    """A source over the limit; `head` holds what was read of it (at most the limit and a byte)."""

    def __init__(self, message: str, head: bytes = b"") -> None:
        super().__init__(message)
        self.head = head


@dataclass(frozen=True)
class Discovery:
    files: list[Path]
    missing: list[str]  # paths that were named but do not exist
    unreadable: list[tuple[Path, str]] = field(
        default_factory=list
    )  # directories the walk could not enter
    warnings: list[str] = field(default_factory=list)  # ignore-file lines that were skipped


def inside(path: Path, root: Path) -> bool:
    """Whether the file `path` names really lies in `root`: a symlink on the way may lead out."""
    try:
        path.absolute().relative_to(root)
    except ValueError:
        return True  # named outside the project by the user: not reached through the project
    try:
        path.resolve(strict=True).relative_to(root.resolve())
    except (OSError, RuntimeError, ValueError):
        return False
    return True


def link_out(path: Path, root: Path) -> Path | None:
    """The first symlink on the way to `path` (as named) that leads out of the project it lies in,
    or None. Links below `root` must stay in `root`; a link above it (the root itself, a linked
    project folder) must stay in the nearest declared project or git root above the link."""
    from torchlint.config import declared_root

    named = path.absolute()  # `..` kept: the walk must pass every link the system passes
    link = Path(named.anchor)
    for part in named.parts[1:]:
        link = link / part
        if not link.is_symlink():
            continue
        home = root if link.parent.is_relative_to(root) else declared_root(link.parent)
        if home is None:
            continue  # above every project (a linked home folder, /tmp): nothing to leave
        try:
            link.resolve(strict=True).relative_to(home.resolve())
        except (OSError, RuntimeError, ValueError):
            return link
    return None


def refusal(path: Path, root: Path) -> str | None:
    """Why `path` is neither read nor written: a symlink on its way leads out of the project.
    The one answer for check, fix, --add-noqa and the cache; None when it may be used."""
    link = link_out(path, root)
    if link is None and inside(path, root):
        return None
    if link is None or link == path.absolute():
        return "symlink to a file outside the project; not followed"
    return _through(link)


def _through(link: Path) -> str:
    try:
        shown = link.relative_to(Path.cwd()).as_posix()
    except ValueError:
        shown = link.as_posix()
    return f"reached through {shown!r}, a symlink to a folder outside the project; not followed"


def _linked_out(folder: Path) -> str | None:
    """Why a folder named on the command line is not walked: a link on its way leads out of the
    project it is named in. One line for the folder; nothing outside is listed or read."""
    from torchlint.config import project_root

    link = link_out(folder, project_root(Path(os.path.abspath(folder))))
    return None if link is None else _through(link)


def byte_limit(name: str) -> int:
    """How many bytes of a source named `name` are read at most: a notebook's JSON, or a file."""
    return MAX_NOTEBOOK_BYTES if name.endswith(".ipynb") else MAX_FILE_BYTES


def _too_large(size: float | None, limit: int, head: bytes = b"") -> TooLarge:
    what = f"{size / 2**20:.1f} MiB > " if size is not None else "over "
    return TooLarge(f"file too large to analyse ({what}{limit // 2**20} MiB)", head)


def read_source(path: Path, root: Path) -> bytes:
    """The bytes of a regular file in the project, or Unreadable. Opened without blocking and
    checked on the open descriptor, so a FIFO, a device or a file swapped in meanwhile is refused."""
    refused = refusal(path, root)
    if refused is not None:
        raise Unreadable(refused)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise Unreadable(f"cannot read file: {error.strerror or error}") from None
    limit = byte_limit(path.name)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable("not a regular file")
        if info.st_size > limit:
            raise _too_large(info.st_size, limit)
        try:
            return read_capped(handle, limit)  # it may have grown after the check
        except OSError as error:
            raise Unreadable(f"cannot read file: {error.strerror or error}") from None


def read_capped(stream: BinaryIO, limit: int) -> bytes:
    """At most `limit` bytes of `stream` (a file, or stdin), or Unreadable: never more in memory."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise _too_large(None, limit, data)
    return data


def check_code_size(code: str) -> None:
    """Unreadable when a notebook's code cells, joined, are more code than a file may be."""
    size = len(code.encode("utf-8", "surrogatepass"))
    if size > MAX_FILE_BYTES:
        raise Unreadable(
            f"notebook code too large to analyse ({size / 2**20:.1f} MiB of code cells"
            f" > {MAX_FILE_BYTES // 2**20} MiB)"
        )


def compile_patterns(lines: list[str] | tuple[str, ...]) -> tuple[pathspec.PathSpec, list[str]]:
    """A spec of the valid gitignore-style patterns, and the lines that are not valid patterns:
    git skips those, and so do we, rather than stop the run."""
    valid: list[str] = []
    bad: list[str] = []
    for line in lines:
        try:
            pathspec.PathSpec.from_lines("gitwildmatch", [line])
        except (GitWildMatchPatternError, ValueError, TypeError):
            bad.append(line)
            continue
        valid.append(line)
    return pathspec.PathSpec.from_lines("gitwildmatch", valid), bad


def _spec(patterns: tuple[str, ...]) -> pathspec.PathSpec:
    return compile_patterns(patterns)[0]


def _gitignore(directory: Path, warnings: list[str]) -> pathspec.PathSpec | None:
    path = directory / ".gitignore"
    if not path.is_file():
        return None
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    spec, bad = compile_patterns(lines)
    warnings += [f"{path}: skipped invalid pattern {line!r}" for line in bad]
    return spec


def discover(paths: list[str], settings: Settings) -> Discovery:
    exclude = _spec((settings.exclude or DEFAULT_EXCLUDE) + settings.extend_exclude)
    by_default = not settings.exclude  # run-output folders are a default exclusion, like build/
    files: list[Path] = []
    missing: list[str] = []
    seen: set[Path] = set()
    discovery = Discovery(files, missing)
    for name in paths:
        path = Path(name)
        if path.is_dir():
            refused = _linked_out(path)
            if refused is not None:
                discovery.unreadable.append((path, refused))
                continue
            runs: set[Path] = set()
            found = _walk(path, settings.root, exclude, discovery, runs if by_default else None)
            if runs:
                found = _without_run_copies(found, runs)
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
    return discovery


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


def _without_run_copies(found: list[Path], runs: set[Path]) -> list[Path]:
    """The walk's files less those of run-output folders: a folder that holds a training run's
    record (`_run_record`), is no package, and whose every source file, at any depth, has a
    namesake the walk found outside it (the file it is a copy of). Code found nowhere else is
    the project's own, whatever lies beside it; nothing runs the copies, so their findings
    would repeat those of the real files, or be stale."""
    dropped: set[Path] = set()
    for run in runs:
        inside = [f for f in found if run in f.parents]
        outside = {f.name for f in found if run not in f.parents}
        if inside and all(f.name in outside for f in inside):
            dropped.update(inside)
    return [f for f in found if f not in dropped] if dropped else found


def _run_record(directory: str, dirnames: list[str], filenames: list[str]) -> bool:
    """Whether a folder holds what a training run writes: TensorBoard event files or wandb's
    metadata, Hydra's `.hydra/`, or a checkpoint folder with saved weights in it; and is no
    package (`__init__.py`), which the project imports."""
    if "__init__.py" in filenames:
        return False
    if ".hydra" in dirnames or any(name.startswith(_RUN_FILES) for name in filenames):
        return True
    return any(
        name.lower() in _CHECKPOINT_FOLDERS and _holds_weights(os.path.join(directory, name))
        for name in dirnames
    )


def _holds_weights(folder: str) -> bool:
    try:
        return any(entry.name.endswith(_WEIGHTS) for entry in os.scandir(folder))
    except OSError:
        return False


def _walk(
    top: Path,
    root: Path,
    exclude: pathspec.PathSpec,
    discovery: Discovery,
    runs: set[Path] | None = None,
) -> list[Path]:
    """The source files below `top`, less excluded and ignored ones; with `runs`, also the
    folders below `top` that hold a training run's record (`_run_record`) are added to it."""
    found: list[Path] = []
    ignores: dict[str, list[tuple[Path, pathspec.PathSpec]]] = {}

    def unreadable(error: OSError) -> None:
        discovery.unreadable.append(
            (Path(error.filename), f"cannot read directory: {error.strerror or error}")
        )

    for directory, dirnames, filenames in os.walk(top, onerror=unreadable, followlinks=False):
        here = Path(directory)
        inherited = ignores.get(str(here.parent), []) if here != top else []
        own = _gitignore(here, discovery.warnings)
        active = inherited + ([(here, own)] if own else [])
        ignores[directory] = active

        def skipped(path: Path, is_dir: bool, active: list[tuple[Path, pathspec.PathSpec]]) -> bool:
            rel = _relative(path, root, top) + ("/" if is_dir else "")
            if exclude.match_file(rel) or exclude.match_file(path.name + ("/" if is_dir else "")):
                return True
            for base, spec in active:
                local = path.relative_to(base).as_posix() + ("/" if is_dir else "")
                if spec.match_file(local):
                    return True
            return False

        if runs is not None and here != top and _run_record(directory, dirnames, filenames):
            runs.add(here)
        dirnames[:] = sorted(d for d in dirnames if not skipped(here / d, True, active))
        for filename in sorted(filenames):
            path = here / filename
            if path.suffix in SUFFIXES and not skipped(path, False, active):
                found.append(path)
    return found
