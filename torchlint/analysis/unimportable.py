"""Modules of a project that cannot be imported, so their code never runs.

Projects vendor other projects' code: a copy of a model zoo or of mmcv under
`pkg/common/annotator/`, taken from a repository where `annotator` was a top-level package and
left importing itself by that old name (`from annotator.util import ckpt_path` in
`pkg/common/annotator/mlsd/__init__.py`). Where the project never puts that folder on the path,
the import fails, and so does importing any module below that package: Python runs every
`__init__.py` above a module before the module. Nothing the project runs builds those layers,
steps those optimizers or copies those tensors, so a performance finding there is about code
that never runs (`Rule.report` drops it).

The evidence is read, never guessed from a folder's name:
- an import at the top of the module or of a package above it, outside any `try`, `if` or
  function, names a dotted module `A.B...` absolutely;
- `A` cannot be found from the project's root (no `A.py`, no folder `A`, there or under `src/`);
- the importing file sits inside a folder named `A` whose parent holds `A/B...`: the import means
  this very copy, by the name it had at another root, not an installed package;
- that folder `A` sits inside a regular package of the project (a folder above it, below the root,
  has an `__init__.py`), so `A` is no source root a package installer could map (`python/pkg/`);
- `A` is no standard-library module, and no module of the project outside that folder imports `A`
  absolutely (then `A` is an installed package the project uses: `rlkit/torch/` holds a
  `distributions.py`, yet its `from torch.distributions import Normal` is torch's);
- no file of the project that touches the import path (`sys.path`, `PYTHONPATH`, pytest's
  `pythonpath`) names the folder holding `A` as a path part (`sys.path.insert(0, "lib")`).

A module whose file name is no Python name (`models/ deeplab.py`) cannot be imported either;
it still runs as a script, so only a file that defines things and runs nothing at its top is left.
A file with a `__main__` block may be run as a script, where no package `__init__.py` runs: it
is unimportable only when its own top-level imports ask the project's package for what it lacks
(`stale_imports`), which fails however the file is run.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import sys
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.analysis.nodes import is_main_guard, walk
from torchlint.analysis.stale_imports import asks_missing, top_imports

if TYPE_CHECKING:
    from collections.abc import Iterable

    from torchlint.analysis.context import FileContext
    from torchlint.analysis.project_index import ProjectIndex

# A package `__init__.py`'s top-level absolute imports, by content digest, per process.
_IMPORTS: dict[str, tuple[str, ...]] = {}


class Unimportable:
    """Whether the file's module cannot be imported, via `ctx.fact(Unimportable)`."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx

    @cached_property
    def holds(self) -> bool:
        """The module fails at import (its own imports ask the project's package for what it
        lacks, or name a vendored copy's old root), or is named so that no import reaches it;
        without a project (stdin, a notebook) nothing is unimportable."""
        index = self.ctx.project
        path = self.ctx.absolute_path
        if index is None or path.suffix != ".py":
            return False
        root = index.root.absolute()
        if path.is_relative_to(root) and asks_missing(index, root, path, self.ctx.module):
            return True
        if _runs_as_script(self.ctx.module):
            return False
        if not path.stem.isidentifier():
            return _defines_only(self.ctx.module)
        if not path.is_relative_to(root):
            return False
        breaks = [
            folder
            for importer, module in self._imports(index, root, path)
            for folder in [_broken_at(root, importer, module)]
            if folder is not None
        ]
        return bool(breaks) and not any(_put_on_path(index, root, f.parent.name) for f in breaks)

    def _imports(self, index: ProjectIndex, root: Path, path: Path) -> Iterable[tuple[Path, str]]:
        """(importer, dotted module) of the module's and its packages' top-level absolute imports."""
        for module in _own_imports(self.ctx.module):
            yield path, module
        for init in _package_inits(root, path):
            for module in _init_imports(index, init):
                yield init, module


def _runs_as_script(module: cst.Module) -> bool:
    return any(is_main_guard(s) for s in module.body)


def _defines_only(module: cst.Module) -> bool:
    """Imports, functions, classes, a docstring and constants: nothing runs when it is loaded."""
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef | cst.ClassDef):
            continue
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        for small in statement.body:
            if isinstance(small, cst.Import | cst.ImportFrom):
                continue
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString):
                continue
            if isinstance(small, cst.Assign | cst.AnnAssign) and not any(
                isinstance(n, cst.Call) for n in walk(small)
            ):
                continue
            return False
    return True


def _own_imports(module: cst.Module) -> Iterable[str]:
    """The dotted modules the file's top level imports absolutely, outside any block."""
    return (name for _, name, _ in top_imports(module))


def _package_inits(root: Path, path: Path) -> Iterable[Path]:
    """The `__init__.py` of every package above the module, below the root, innermost first."""
    folder = path.parent
    while folder != root and folder.is_relative_to(root):
        init = folder / "__init__.py"
        if init != path and init.is_file():
            yield init
        folder = folder.parent


def _init_imports(index: ProjectIndex, init: Path) -> tuple[str, ...]:
    """A package `__init__.py`'s top-level absolute imports; the file is recorded as one the
    answer rests on, so a cached finding is recomputed when it changes."""
    try:
        data = init.read_bytes()
    except OSError:
        return ()
    digest = hashlib.sha256(data).hexdigest()
    index.consulted[init] = digest
    if digest not in _IMPORTS:
        _IMPORTS[digest] = _top_imports(data)
    return _IMPORTS[digest]


def _top_imports(data: bytes) -> tuple[str, ...]:
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return ()
    found: list[str] = []
    for statement in tree.body:
        if isinstance(statement, ast.ImportFrom) and not statement.level and statement.module:
            found.append(statement.module)
        elif isinstance(statement, ast.Import):
            found += [a.name for a in statement.names]
    return tuple(found)


def _broken_at(root: Path, importer: Path, module: str) -> Path | None:
    """The folder `A` when `module` (`A.B...`), imported by `importer`, is the project's own copy
    named from a root it is not at, so the import fails (see the module's docstring)."""
    parts = module.split(".")
    head = parts[0]
    if len(parts) < 2 or head in sys.stdlib_module_names or _findable(root, head):
        return None
    folder = importer.parent
    while folder != root and folder.is_relative_to(root):
        if folder.name == head:
            target = folder.parent.joinpath(*parts)
            meant = target.with_suffix(".py").is_file() or target.is_dir()
            if not meant or not _inside_package(root, folder):
                return None
            return None if _imported_outside(root, head, folder) else folder
        folder = folder.parent
    return None


def _imported_outside(root: Path, head: str, folder: Path) -> bool:
    """Whether a module of the project outside `folder` imports `head` absolutely: then `head`
    is an installed package the project uses (`rlkit/torch/` importing `torch.distributions` is
    torch's, not `rlkit/torch/distributions.py`), not the copy's old name."""
    key = (root, head, folder)
    if key not in _OUTSIDE:
        line = re.compile(
            rb"^[ \t]*(?:import|from)[ \t]+" + re.escape(head.encode()) + rb"\b", re.M
        )
        _OUTSIDE[key] = any(
            line.search(data) is not None
            for path, data in _texts(root, (".py",), frozenset(), skip=folder)
        )
    return _OUTSIDE[key]


def _findable(root: Path, head: str) -> bool:
    """A top-level module or package (regular or namespace) at the root or under `src/`."""
    return any(
        (base / f"{head}.py").is_file() or (base / head).is_dir() for base in (root, root / "src")
    )


def _inside_package(root: Path, folder: Path) -> bool:
    """A folder between the root and `folder` is a regular package."""
    above = folder.parent
    while above != root and above.is_relative_to(root):
        if (above / "__init__.py").is_file():
            return True
        above = above.parent
    return False


# Files that may put a folder on the import path: Python, shell scripts, tool settings.
_PATH_FILES = (".py", ".sh", ".bash", ".cfg", ".ini", ".toml", ".yaml", ".yml", ".env")
_PATH_NAMES = frozenset({"Makefile", "Dockerfile"})
_NOT_SEARCHED = frozenset({"__pycache__", "node_modules", "site-packages"})
_MAX_PATH_FILES = 20_000
# root -> the texts of its files that touch the import path (`sys.path`, PYTHONPATH, pytest's
# `pythonpath`), read once per process.
_PATH_TEXTS: dict[Path, list[tuple[Path, bytes]]] = {}
# (root, name, folder) -> whether a file outside the folder imports the name
# (`_imported_outside`), answered once per process.
_OUTSIDE: dict[tuple[Path, str, Path], bool] = {}


def _put_on_path(index: ProjectIndex, root: Path, name: str) -> bool:
    """Whether a file of the project may put the folder `name` on the import path: it touches
    the path and writes the name as a path part (`'lib'`, `"./lib"`, `/lib:`). Then `A` may be
    found from there, and the import is not known to fail."""
    pattern = re.compile(rb"[\'\"/\\=]" + re.escape(name.encode()) + rb"(?=[\'\"/\\:;\s]|$)", re.M)
    found = False
    for path, data in _path_texts(root):
        index.consulted[path] = hashlib.sha256(data).hexdigest()
        found = found or pattern.search(data) is not None
    return found


def _path_texts(root: Path) -> list[tuple[Path, bytes]]:
    if root not in _PATH_TEXTS:
        _PATH_TEXTS[root] = [
            (path, data)
            for path, data in _texts(root, _PATH_FILES, _PATH_NAMES)
            if b"sys.path" in data or b"pythonpath" in data.lower()
        ]
    return _PATH_TEXTS[root]


def _texts(
    root: Path, suffixes: tuple[str, ...], names: frozenset[str], skip: Path | None = None
) -> Iterable[tuple[Path, bytes]]:
    """The project's files with these suffixes or names, and their bytes, one at a time (a
    bounded walk, not entering `skip`)."""
    seen = 0
    for directory, folders, files in os.walk(root):
        folders[:] = [
            f
            for f in folders
            if not f.startswith(".")
            and f not in _NOT_SEARCHED
            and (skip is None or Path(directory, f) != skip)
        ]
        for name in files:
            seen += 1
            if name.endswith(suffixes) or name in names:
                yield Path(directory, name), _read(Path(directory, name))
        if seen > _MAX_PATH_FILES:
            return


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""
