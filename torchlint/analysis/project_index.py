"""What one file of a project can learn from the others: here, which classes are nn.Modules.

A method of `class Net(Backbone)` is module API (its callers choose the grad mode) when
`Backbone`, imported from another file of the project, is an `nn.Module` subclass. The index
follows imports through the project's files, read with `ast` (a tenth of a libcst parse) only
when a rule asks, and keeps one summary per file content, so an editor or a pre-commit run on
a single file sees the same answer as a run over the whole project. What cannot be resolved
(a module outside the project, a computed base) stays unknown: rules stay silent on unknown.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

_NOT_CALLABLE = frozenset({"Parameter", "ParameterList", "ParameterDict", "ModuleList", "ModuleDict", "Buffer"})
_MAX_DEPTH = 8


@dataclass(frozen=True)
class _Summary:
    """One file's imports (local name -> (level, dotted target)) and classes (name -> bases)."""

    imports: dict[str, tuple[int, str]] = field(default_factory=dict)
    classes: dict[str, tuple[bool, tuple[str, ...]]] = field(default_factory=dict)  # name -> (defines forward, bases)


def _summarise(text: str) -> _Summary:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _Summary()
    summary = _Summary()
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                summary.imports[alias.asname or alias.name.split(".")[0]] = (0, alias.name if alias.asname else alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                target = f"{node.module}.{alias.name}" if node.module else alias.name
                summary.imports[alias.asname or alias.name] = (node.level, target)
        elif isinstance(node, ast.ClassDef):
            forward = any(isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) and s.name == "forward" for s in node.body)
            bases = tuple(b for b in (_dotted(base) for base in node.bases) if b)
            summary.classes[node.name] = (forward, bases)
    return summary


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


class ProjectIndex:
    """Summaries of a project's files, built lazily and cached by content."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._summaries: dict[str, _Summary] = {}  # content digest -> summary
        self._digests: dict[Path, tuple[int, int, str]] = {}  # path -> (mtime, size, digest)
        self.consulted: dict[Path, str] = {}  # files read for the current question -> content digest

    def is_module_class(self, file: Path, name: str) -> bool | None:
        """Whether `name`, as written in `file`, is an nn.Module subclass; None when unknown."""
        return self._resolve(file.absolute(), name, 0, set())

    def _resolve(self, file: Path, name: str, depth: int, seen: set[tuple[Path, str]]) -> bool | None:
        if depth > _MAX_DEPTH or (file, name) in seen:
            return None
        seen.add((file, name))
        summary = self._summary(file)
        if summary is None:
            return None
        head, _, rest = name.partition(".")
        if not rest and head in summary.classes:
            forward, bases = summary.classes[head]
            if forward:
                return True
            answers = [self._resolve(file, base, depth + 1, seen) for base in bases]
            return True if any(answers) else (False if answers and all(a is False for a in answers) else None)
        if head not in summary.imports:
            return None
        level, target = summary.imports[head]
        full = f"{target}.{rest}" if rest else target
        if level == 0 and full.startswith("torch.nn."):
            return full.rsplit(".", 1)[-1] not in _NOT_CALLABLE
        module, _, leaf = full.rpartition(".")
        source = self._module_file(file, level, module)
        if source is None:  # `from package import module` then `module.Class`
            return None
        return self._resolve(source, leaf, depth + 1, seen)

    def _module_file(self, file: Path, level: int, module: str) -> Path | None:
        if level:
            base = file.parent
            for _ in range(level - 1):
                base = base.parent
            bases = [base]
        else:
            bases = [self.root, self.root / "src"]
        parts = [p for p in module.split(".") if p]
        for base in bases:
            candidate = base.joinpath(*parts)
            for path in (candidate.with_suffix(".py") if parts else None, candidate / "__init__.py"):
                if path is not None and path.is_file() and _inside(path, self.root):
                    return path
        return None

    def _summary(self, path: Path) -> _Summary | None:
        try:
            info = path.stat()
            known = self._digests.get(path)
            if known is not None and known[:2] == (info.st_mtime_ns, info.st_size):
                digest = known[2]
            else:
                data = path.read_bytes()
                digest = hashlib.sha256(data).hexdigest()
                self._digests[path] = (info.st_mtime_ns, info.st_size, digest)
                if digest not in self._summaries:
                    self._summaries[digest] = _summarise(data.decode("utf-8", "replace"))
        except OSError:
            return None
        self.consulted[path] = digest
        return self._summaries[digest]


def digest_of(path: Path) -> str | None:
    """The content digest the index keys a file by; None when it cannot be read."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


_INDEXES: dict[Path, ProjectIndex] = {}


def index_for(root: Path) -> ProjectIndex:
    """One index per project root and process, shared by every file the process lints."""
    found = _INDEXES.get(root)
    if found is None:
        found = _INDEXES[root] = ProjectIndex(root)
    return found
