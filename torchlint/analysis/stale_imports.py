"""Top-level imports that ask the project's own package for something it does not have.

A project's example scripts outlive its API: `example/train.py` still starts with
`from speech import Logs, Output` and `from speech.sampler import Wrapper` after the package
`speech/` (a folder with an `__init__.py` at the project's root) dropped those names and that
submodule. The script fails on its first import, whether it is run or imported, so nothing in it
ever builds a layer or steps an optimizer (`Unimportable` holds for it, and `Rule.report` drops
its performance findings).

The evidence is read from the tree, and anything unknown means the import may work:
- two or more import statements ask for what is missing: the API the file was written for is
  gone. One alone may be a single file the author moved or never committed (rlpyt's
  `from rlpyt.ul.models.inv_models import InverseModel`, whose module sits one folder lower),
  a slip a user fixes in one line, in code judges still call live;
- each import sits at the module's top, outside any `try`, `if` or function, and is absolute;
- its first name is no standard-library module, and the project holds exactly one copy of it: the
  package folder at the root or under `src/` (no `name.py`, no second folder `name/` that a
  `sys.path` edit or the script's own folder could put first);
- each submodule on the way is a file or package folder of that package, and the name imported
  from a package is bound nowhere in its `__init__.py` (no assignment, definition or import of
  it, anywhere in the file), is no submodule entry of its folder (`name.py`, `name/`, a compiled
  `name.cpython-310.so` or a `name.pyx`), and the package defines no module `__getattr__`, has no
  star import and writes no `globals()`, `sys.modules`, `__path__` or `__dict__`;
- names the build may write are never counted missing: a name that starts with `_` (`_C`,
  `_ext`), that holds `version` or ends in `pb2`, or that the project's build files
  (`setup.py`, `setup.cfg`, `pyproject.toml`, `CMakeLists.txt`, `Makefile`) write as a word.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.analysis.symbols import dotted

if TYPE_CHECKING:
    from collections.abc import Iterable

    from torchlint.analysis.project_index import ProjectIndex

# A package `__init__.py`'s bound names by content digest (None: it may provide any), per process.
_BOUND: dict[str, frozenset[str] | None] = {}
# A package folder's entries, per process.
_ENTRIES: dict[Path, frozenset[str]] = {}
# A project root's build files, read once per process: (path, digest, text).
_BUILD: dict[Path, list[tuple[Path, str, bytes]]] = {}
_BUILD_FILES = ("setup.py", "setup.cfg", "pyproject.toml", "CMakeLists.txt", "Makefile")
# Names an `__init__.py` uses to bind what no statement shows.
_DYNAMIC_NAMES = frozenset({"globals", "vars", "setattr", "exec", "eval", "__getattr__"})
_DYNAMIC_ATTRIBUTES = frozenset({"modules", "__path__", "__dict__", "extend_path", "attach"})


def asks_missing(index: ProjectIndex, root: Path, importer: Path, module: cst.Module) -> bool:
    """Whether two or more top-level import statements of `module` (the file `importer`) ask a
    package of the project for a name or submodule it does not have (see the module's
    docstring)."""
    broken = 0
    for statement, name, names in top_imports(module):
        if names is None:
            continue  # a star import asks for no name in particular
        if broken != statement and _missing(index, root, importer, name.split("."), names):
            if broken:
                return True
            broken = statement
    return False


def top_imports(module: cst.Module) -> Iterable[tuple[int, str, tuple[str, ...] | None]]:
    """(statement's number from 1, dotted module, names imported from it: None for a star) of
    the absolute imports at the file's top level, outside any block (`Unimportable` reads the
    modules too)."""
    for number, statement in enumerate(module.body, 1):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.ImportFrom) and not small.relative and small.module:
                name = dotted(small.module)
                if not name:
                    continue
                if isinstance(small.names, cst.ImportStar):
                    yield number, name, None
                else:
                    yield number, name, tuple(dotted(a.name) or "." for a in small.names)
            elif isinstance(small, cst.Import):
                for alias in small.names:
                    name = dotted(alias.name)
                    if name:
                        yield number, name, ()


def _missing(
    index: ProjectIndex, root: Path, importer: Path, parts: list[str], names: tuple[str, ...]
) -> bool:
    head = parts[0]
    if head in sys.stdlib_module_names or _shadowed(root, importer, head):
        return False
    copies = index.copies_of(head)
    package = next(iter(copies), None)
    if len(copies) != 1 or package is None or package.parent not in (root, root / "src"):
        return False
    for part in parts[1:]:
        if _bound(index, package) is None or _built(index, root, part):
            return False
        if part not in _entries(package) and not _has_module(package, part):
            return True
        package = package / part
        if not (package / "__init__.py").is_file():
            return False  # a module file or a namespace folder: its names are not read here
    bound = _bound(index, package)
    if bound is None:
        return False
    return any(
        name not in bound and not _has_module(package, name) and not _built(index, root, name)
        for name in names
    )


def _shadowed(root: Path, importer: Path, head: str) -> bool:
    """A folder between the importer and the root holds its own `head`, found first when the
    importer runs as a script."""
    folder = importer.parent
    while folder != root and folder.is_relative_to(root):
        if head in _entries(folder) or f"{head}.py" in _entries(folder):
            return True
        folder = folder.parent
    return False


def _has_module(package: Path, name: str) -> bool:
    """A submodule entry `name` of the package folder: a folder, a source, stub or compiled file."""
    return name in _entries(package) or any(e.startswith(f"{name}.") for e in _entries(package))


def _entries(folder: Path) -> frozenset[str]:
    if folder not in _ENTRIES:
        try:
            _ENTRIES[folder] = frozenset(os.listdir(folder))
        except OSError:
            _ENTRIES[folder] = frozenset()
    return _ENTRIES[folder]


def _bound(index: ProjectIndex, package: Path) -> frozenset[str] | None:
    """The names the package's `__init__.py` binds anywhere; None when it may bind any. The file
    is recorded as one the answer rests on, so a cached finding is recomputed when it changes."""
    init = package / "__init__.py"
    try:
        data = init.read_bytes()
    except OSError:
        return None
    digest = hashlib.sha256(data).hexdigest()
    index.consulted[init] = digest
    if digest not in _BOUND:
        _BOUND[digest] = _bound_names(data)
    return _BOUND[digest]


def _bound_names(data: bytes) -> frozenset[str] | None:
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return None
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if node.id in _DYNAMIC_NAMES:
                return None
            if isinstance(node.ctx, ast.Store):
                names.add(node.id)
        elif isinstance(node, ast.Attribute) and node.attr in _DYNAMIC_ATTRIBUTES:
            return None
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            if node.name == "*":
                return None
            names.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.Global):
            names.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return None if names & _DYNAMIC_NAMES or "__path__" in names else frozenset(names)


def _built(index: ProjectIndex, root: Path, name: str) -> bool:
    """A name the build may write into the package rather than the tree holding it."""
    if name.startswith("_") or "version" in name.lower() or name.endswith(("pb2", "pb2_grpc")):
        return True
    word = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
    found = False
    for path, digest, text in _build_files(root):
        index.consulted[path] = digest
        found = found or word.search(text) is not None
    return found


def _build_files(root: Path) -> list[tuple[Path, str, bytes]]:
    if root not in _BUILD:
        found = []
        for name in _BUILD_FILES:
            try:
                data = (root / name).read_bytes()
            except OSError:
                continue
            found.append((root / name, hashlib.sha256(data).hexdigest(), data))
        _BUILD[root] = found
    return _BUILD[root]
