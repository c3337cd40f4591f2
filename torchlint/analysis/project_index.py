"""What one file of a project can learn from the others: which classes are nn.Modules, and
which functions every other file calls only with autograd off.

A method of `class Net(Backbone)` is module API (its callers choose the grad mode) when
`Backbone`, imported from another file of the project, is an `nn.Module` subclass. An
`evaluate(model, loader)` that the file never calls runs without grad when every call of it in
the project's other files sits under `no_grad`/`inference_mode` (a `with` or a decorator). The index
follows imports through the project's files, read with `ast` (a tenth of a libcst parse) only
when a rule asks, and keeps one summary per file content, so an editor or a pre-commit run on
a single file sees the same answer as a run over the whole project. What cannot be resolved
(a module outside the project, a computed base) stays unknown: rules stay silent on unknown.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from torchlint.analysis.names import NOT_CALLABLE_MODULES
from torchlint.analysis.text import precision_mentions

_MAX_DEPTH = 8
_GRAD_OFF = frozenset({"no_grad", "inference_mode"})
_ACCELERATORS = frozenset({"cuda", "xpu", "mps", "npu", "hpu", "xla"})
# Folders that hold no code of the project's own; a larger project is not scanned for call sites.
_NOT_PROJECT = frozenset(
    {"venv", "env", "site-packages", "node_modules", "build", "dist", "__pycache__"}
)
_MAX_FILES = 3000


@dataclass(frozen=True)
class _Summary:
    """One file's imports (local name -> (level, dotted target)) and classes (name -> bases)."""

    imports: dict[str, tuple[int, str]] = field(default_factory=dict)
    classes: dict[str, tuple[bool, tuple[str, ...]]] = field(
        default_factory=dict
    )  # name -> (defines forward, bases)
    calls: list[tuple[str, bool]] = field(
        default_factory=list
    )  # callee as written, whether grad is off there
    devices: dict[str, bool] = field(
        default_factory=dict
    )  # module-level name -> whether the device can be a GPU
    stars: list[tuple[int, str]] = field(
        default_factory=list
    )  # `from module import *`: (level, module)
    torch: bool = False  # whether it imports torch itself
    # `f` and `Class.method` decorated no_grad/inference_mode
    grad_off: frozenset[str] = frozenset()
    # module-level function -> whether the device it returns can be a GPU
    device_functions: dict[str, bool] = field(default_factory=dict)
    # `f` and `Class.method` that read their arguments' values on the host (`v.item()`)
    syncs: frozenset[str] = frozenset()
    # What the text may say about numeric precision (`text.precision_mentions`): "tf32",
    # "mixed", "channels_last".
    precision: frozenset[str] = frozenset()
    # False for a header: imports, classes, star imports and `torch` only, which is all the class
    # questions read; the other fields take walks of the whole tree, read for a few files only
    full: bool = True


def _summarise(text: str, full: bool = True, tree: ast.Module | None = None) -> _Summary:
    """The summary of `text`; `tree` is its syntax tree when the caller has it already."""
    if tree is None:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return _Summary()
    summary = _Summary()
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                summary.imports[alias.asname or alias.name.split(".")[0]] = (
                    0,
                    alias.name if alias.asname else alias.name.split(".")[0],
                )
        elif isinstance(node, ast.ImportFrom):
            if node.names[0].name == "*":
                summary.stars.append((node.level, node.module or ""))
                continue
            for alias in node.names:
                target = f"{node.module}.{alias.name}" if node.module else alias.name
                summary.imports[alias.asname or alias.name] = (node.level, target)
        elif isinstance(node, ast.ClassDef):
            forward = any(
                isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) and s.name == "forward"
                for s in node.body
            )
            bases = tuple(b for b in (_dotted(base) for base in node.bases) if b)
            summary.classes[node.name] = (forward, bases)
    if full:
        _collect_devices(tree, summary.devices)
        if "device" in text:  # a function that returns a device builds or names one
            _collect_device_functions(tree, summary.device_functions)
        _collect_calls(tree, False, summary.calls)
        summary = replace(
            summary,
            grad_off=_decorated_grad_off(tree),
            syncs=_syncing_functions(tree) if _HOST_READ_TEXT.search(text) else frozenset(),
        )
    modules = [t for level, t in summary.imports.values() if not level] + [
        t for level, t in summary.stars if not level
    ]
    return replace(
        summary,
        torch=any(t == "torch" or t.startswith("torch.") for t in modules),
        precision=precision_mentions(text),
        full=full,
    )


def _collect_calls(node: ast.AST, grad_off: bool, calls: list[tuple[str, bool]]) -> None:
    """Every call's callee and whether a `with` or decorator around it turns autograd off.

    Iterative: a deeply nested file must not exhaust the stack."""
    stack = [(node, grad_off)]
    while stack:
        node, off = stack.pop()
        if isinstance(node, ast.Call) and (callee := _dotted(node.func)):
            calls.append((callee, off))
        if isinstance(node, ast.With | ast.AsyncWith) and any(
            _turns_grad_off(item.context_expr) for item in node.items
        ):
            stack.extend((child, True) for child in node.body)
            stack.extend((item, off) for item in node.items)
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            off = off or any(_turns_grad_off(d) for d in node.decorator_list)
        stack += [(child, off) for child in _children(node)]


def _decorated_grad_off(tree: ast.Module) -> frozenset[str]:
    """Module-level functions and methods whose own decorator turns autograd off."""
    found = set()
    for node in tree.body:
        members = [(node, "")]
        if isinstance(node, ast.ClassDef):
            members = [(s, node.name + ".") for s in node.body]
        for member, prefix in members:
            if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef) and any(
                _turns_grad_off(d) for d in member.decorator_list
            ):
                found.add(prefix + member.name)
    return frozenset(found)


def _collect_devices(tree: ast.Module, devices: dict[str, bool]) -> None:
    """Module-level names bound to a device. A name bound anywhere in the file (any scope, any
    branch) to something else, or to both kinds, is unknown: `device = "cpu"` then
    `if cuda: device = "cuda"` says nothing for sure."""
    bound: dict[str, set[bool | None]] = {}
    for node in _walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, set()).add(_device_kind(node.value))
    module_level = {
        t.id
        for n in tree.body
        if isinstance(n, ast.Assign | ast.AnnAssign)
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
        if isinstance(t, ast.Name)
    }
    for name in module_level & bound.keys():
        kinds = bound[name]
        if kinds in ({True}, {False}):
            devices[name] = True in kinds


_HOST_READS = frozenset({"item", "tolist", "cpu", "numpy"})
_HOST_READ_TEXT = re.compile(r"\.\s*(?:item|tolist|cpu|numpy)\s*\(")


def _syncing_functions(tree: ast.Module) -> frozenset[str]:
    """Module-level functions and methods that read what they are passed on the host: a
    `.item()`/`.tolist()`/`.cpu()`/`.numpy()` of a parameter, or of a loop variable over one
    (`for k, v in values.items(): v.item()`). A tensor passed to one syncs at the call."""
    found = set()
    for node in tree.body:
        members = [(node, "")]
        if isinstance(node, ast.ClassDef):
            members = [(s, node.name + ".") for s in node.body]
        for member, prefix in members:
            if isinstance(member, ast.FunctionDef) and _reads_arguments(member):
                found.add(prefix + member.name)
    return frozenset(found)


def _reads_arguments(function: ast.FunctionDef) -> bool:
    loops, reads = [], []
    for node in _walk(function):  # one walk: the loops and the host reads
        if isinstance(node, ast.For):
            loops.append(node)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _HOST_READS
            and not node.args
        ):
            reads.append(node.func.value)
    if not reads:
        return False
    args = function.args
    params = {
        a.arg
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        if a is not None and a.arg not in ("self", "cls")
    }
    for loop in loops:  # loop variables over a parameter carry its values
        if _root(loop.iter) in params:
            params |= {n.id for n in _walk(loop.target) if isinstance(n, ast.Name)}
    return any(_root(value) in params for value in reads)


def _root(node: ast.expr) -> str | None:
    """The name under `v`, `values.items()`, `v[0]`, `v.loss`."""
    while True:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value
        elif isinstance(node, ast.Attribute | ast.Subscript):
            node = node.value
        else:
            return node.id if isinstance(node, ast.Name) else None


def _collect_device_functions(tree: ast.Module, found: dict[str, bool]) -> None:
    """Module-level functions whose every return gives a device of one kind: `def dev(): return
    torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")`."""
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or not isinstance(node.body[-1], ast.Return):
            continue  # a device helper ends by returning the device
        returns = [n.value for n in _walk(node) if isinstance(n, ast.Return)]
        kinds = {_device_kind(r) if r is not None else None for r in returns}
        if kinds in ({True}, {False}):
            found[node.name] = True in kinds


def _device_kind(value: ast.expr) -> bool | None:
    """True for a device that can be a GPU (`"cuda"`, `torch.device("cuda:0")`, `"cuda" if ... else
    "cpu"`), False for the CPU alone, None for anything else."""
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        name = value.value.split(":")[0]
        return True if name in _ACCELERATORS else (False if name == "cpu" else None)
    if (
        isinstance(value, ast.Call)
        and (_dotted(value.func) or "").rsplit(".", 1)[-1] == "device"
        and value.args
    ):
        return _device_kind(value.args[0])
    if isinstance(value, ast.IfExp):
        kinds = {_device_kind(value.body), _device_kind(value.orelse)}
        return True if True in kinds else (False if kinds == {False} else None)
    return None


def _turns_grad_off(expr: ast.expr) -> bool:
    """`torch.no_grad()`, `@torch.inference_mode`, `torch.set_grad_enabled(False)` and their aliases."""
    call = expr if isinstance(expr, ast.Call) else None
    name = (_dotted(call.func) if call else _dotted(expr)) or ""
    leaf = name.rsplit(".", 1)[-1]
    if leaf in _GRAD_OFF:
        return not (
            call
            and call.args
            and not (isinstance(call.args[0], ast.Constant) and call.args[0].value is True)
        )
    return (
        leaf == "set_grad_enabled"
        and call is not None
        and bool(call.args)
        and isinstance(call.args[0], ast.Constant)
        and call.args[0].value is False
    )


def _walk(node: ast.AST) -> list[ast.AST]:
    """`node` and every node below it, in `ast.walk`'s breadth-first order, as a list: a third
    cheaper than `ast.walk`'s generators, and a summary walks each file several times."""
    nodes = [node]
    for each in nodes:
        nodes += _children(each)
    return nodes


def _children(node: ast.AST) -> list[ast.AST]:
    """`ast.iter_child_nodes(node)` as a list, read from the fields directly."""
    found = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            found.append(value)
        elif isinstance(value, list):
            found += [item for item in value if isinstance(item, ast.AST)]
    return found


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


@dataclass(frozen=True)
class _Question:
    """What a class resolution asks: how a torch class answers it, and whether a class of the
    project that defines `forward` is a yes on its own."""

    torch_answer: Callable[[str], bool | None]
    settled_by_forward: bool = False


def _torch_module(full: str) -> bool | None:
    return (
        full.rsplit(".", 1)[-1] not in NOT_CALLABLE_MODULES
        if full.startswith("torch.nn.")
        else None
    )


_is_module = _Question(_torch_module, settled_by_forward=True)


class ProjectIndex:
    """Summaries of a project's files, built lazily and cached by content."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._summaries: dict[str, _Summary] = {}  # content digest -> summary
        self._digests: dict[Path, tuple[int, int, str]] = {}  # path -> (mtime, size, digest)
        self.consulted: dict[
            Path, str
        ] = {}  # files read for the current question -> content digest
        self._files: list[Path] | None = None  # the project's .py files, walked once per process
        self._modules: dict[tuple[Path, int, str], Path | None] = {}
        # path -> (its summary, its calls' grad modes by the project function they reach)
        self._targets: dict[Path, tuple[_Summary, dict[tuple[Path, str], list[bool]]]] = {}
        # While a file is linted: its text and the syntax tree CPython's check of it built.
        self._parsed: tuple[str, ast.Module] | None = None

    @contextmanager
    def parsed(self, text: str, tree: ast.Module) -> Iterator[None]:
        """While one file is linted, its syntax tree: the questions a file asks are mostly about
        itself (its own classes and imports), and its summary then needs no parse of its own.
        Used only for a file whose bytes on disk decode to this very text."""
        self._parsed = (text, tree)
        try:
            yield
        finally:
            self._parsed = None

    def _tree_of(self, text: str) -> ast.Module | None:
        parsed = self._parsed
        return parsed[1] if parsed is not None and parsed[0] == text else None

    def is_module_class(self, file: Path, name: str) -> bool | None:
        """Whether `name`, as written in `file`, is an nn.Module subclass; None when unknown."""
        return self._resolve(file.absolute(), name, 0, set(), _is_module)

    def derives_from(self, file: Path, name: str, torch_classes: frozenset[str]) -> bool | None:
        """Whether `name`, as written in `file`, is one of `torch_classes` (full names) or a
        project class derived from one; None when unknown."""
        return self._resolve(file.absolute(), name, 0, set(), _Question(torch_classes.__contains__))

    def star_imports_torch(self, file: Path) -> bool:
        """Whether `from module import *` hands `file` torch's names: a star-imported project
        module imports torch, itself or through its own star imports."""
        return self._star_torch(file.absolute(), 0, set())

    def _star_torch(self, file: Path, depth: int, seen: set[Path]) -> bool:
        summary = self._summary(file)
        if summary is None or depth > _MAX_DEPTH or file in seen:
            return False
        seen.add(file)
        for level, module in summary.stars:
            if not level and (module == "torch" or module.startswith("torch.")):
                return True
            source = self._module_file(file, level, module)
            if source is None:
                continue
            other = self._summary(source)
            if other is not None and (
                other.torch or self._star_torch(source.absolute(), depth + 1, seen)
            ):
                return True
        return False

    def names_gpu(self, file: Path, name: str) -> bool | None:
        """Whether `name`, as written in `file`, is a module-level device of the project that can
        be a GPU (True) or is the CPU alone (False); None when unknown."""
        return self._device(file.absolute(), name, 0)

    def syncs_arguments(self, file: Path, name: str, method: str | None = None) -> bool:
        """Whether the function `name` (or the method `method` of the class `name`), as written
        in `file` and defined in another file of the project, reads its arguments on the host."""
        file = file.absolute()
        summary = self._summary(file)
        target = self._target(file, summary, name) if summary is not None else None
        if target is None:
            return False
        source = self._summary(target[0], full=True)
        member = f"{target[1]}.{method}" if method else target[1]
        return source is not None and member in source.syncs

    def returns_gpu(self, file: Path, name: str) -> bool | None:
        """Whether the function `name`, as written in `file`, returns a device of the project
        that can be a GPU (True) or only the CPU (False); None when unknown."""
        return self._device(file.absolute(), name, 0, functions=True)

    def _device(self, file: Path, name: str, depth: int, functions: bool = False) -> bool | None:
        summary = self._summary(file, full=True)
        if summary is None or depth > _MAX_DEPTH:
            return None
        head, _, rest = name.partition(".")
        known = summary.device_functions if functions else summary.devices
        if not rest and head in known:
            return known[head]
        target = self._target(file, summary, name)
        if target is None:
            return None
        return self._device(target[0], target[1], depth + 1, functions)

    def decorated_grad_off(self, file: Path, name: str, method: str | None = None) -> bool:
        """Whether the function `name` (or the method `method` of the class `name`), as written
        in `file` and defined in another file of the project, carries a no_grad/inference_mode
        decorator: whoever calls it, it runs without grad."""
        file = file.absolute()
        summary = self._summary(file)
        target = self._target(file, summary, name) if summary is not None else None
        if target is None:
            return False
        source = self._summary(target[0], full=True)
        member = f"{target[1]}.{method}" if method else target[1]
        return source is not None and member in source.grad_off

    def imported_precision(self, file: Path) -> frozenset[str]:
        """What the project modules that `file` imports, directly or through their own imports,
        may say about numeric precision: a process-wide setting such as TF32 made in a config
        module the entry point imports is made for the entry point too. A setting inside a
        function of such a module counts as well (it may be called): precision first."""
        file = file.absolute()
        found: set[str] = set()
        seen = {file}
        frontier = [file]
        for _ in range(_MAX_DEPTH):
            following = []
            for current in frontier:
                for module in self._imported_files(current):
                    if module not in seen:
                        seen.add(module)
                        following.append(module)
                        summary = self._summary(module)
                        found |= summary.precision if summary else frozenset()
            frontier = following
        return frozenset(found)

    def _imported_files(self, file: Path) -> list[Path]:
        """The project files `file` imports: `import config`, `from config import setup` (the
        module `config`, or the submodule `config.setup`), `from . import x`, star imports."""
        summary = self._summary(file)
        if summary is None:
            return []
        wanted = [*summary.imports.values(), *summary.stars]
        found = []
        for level, target in wanted:
            for module in (target, target.rpartition(".")[0]):
                source = self._module_file(file, level, module) if module or level else None
                if source is not None:
                    found.append(source.absolute())
        return found

    def always_called_without_grad(self, file: Path, function: str) -> bool:
        """Whether the project's other files call `function` of `file`, and only with grad off.

        False when unknown: no call found, a call with grad on, or too many files to read."""
        file = file.absolute()
        modes = []
        for other in self._project_files():
            if other == file or not _mentions(other, function):
                continue
            summary = self._summary(other, consult=False, full=True)
            found = self._call_targets(other, summary).get((file, function), ()) if summary else ()
            if found:
                self.consulted[other] = self._digests[other][2]
                modes += found
        return bool(modes) and all(modes)

    def _call_targets(self, file: Path, summary: _Summary) -> dict[tuple[Path, str], list[bool]]:
        """The grad modes of `file`'s calls by the project function they reach, resolved once per
        file content: each question would otherwise resolve every call of every file again."""
        known = self._targets.get(file)
        if known is not None and known[0] is summary:
            return known[1]
        targets: dict[tuple[Path, str], list[bool]] = {}
        for callee, off in summary.calls:
            if (target := self._target(file, summary, callee)) is not None:
                targets.setdefault(target, []).append(off)
        self._targets[file] = (summary, targets)
        return targets

    def _target(self, file: Path, summary: _Summary, callee: str) -> tuple[Path, str] | None:
        """The file and name an imported callee resolves to: `evaluate` or `utils.evaluate`."""
        head, _, rest = callee.partition(".")
        if head not in summary.imports:
            return None
        level, target = summary.imports[head]
        module, _, leaf = (f"{target}.{rest}" if rest else target).rpartition(".")
        if not leaf or "." in rest:
            return None
        source = self._module_file(file, level, module)
        return (source.absolute(), leaf) if source is not None else None

    def _project_files(self) -> list[Path]:
        if self._files is None:
            found: list[Path] = []
            for directory, folders, names in os.walk(self.root):
                folders[:] = [f for f in folders if not f.startswith(".") and f not in _NOT_PROJECT]
                found += [Path(directory, n).absolute() for n in names if n.endswith(".py")]
                if len(found) > _MAX_FILES:
                    found = []
                    break
            self._files = found
        return self._files

    def _resolve(
        self, file: Path, name: str, depth: int, seen: set[tuple[Path, str]], question: _Question
    ) -> bool | None:
        if depth > _MAX_DEPTH or (file, name) in seen:
            return None
        seen.add((file, name))
        summary = self._summary(file)
        if summary is None:
            return None
        head, _, rest = name.partition(".")
        if not rest and head in summary.classes:
            forward, bases = summary.classes[head]
            if forward and question.settled_by_forward:
                return True
            answers = [self._resolve(file, base, depth + 1, seen, question) for base in bases]
            return (
                True
                if any(answers)
                else (False if answers and all(a is False for a in answers) else None)
            )
        if head not in summary.imports:
            return None
        level, target = summary.imports[head]
        full = f"{target}.{rest}" if rest else target
        if level == 0 and full.startswith("torch."):
            return question.torch_answer(full)
        module, _, leaf = full.rpartition(".")
        source = self._module_file(file, level, module)
        if source is None:  # `from package import module` then `module.Class`
            return None
        return self._resolve(source, leaf, depth + 1, seen, question)

    def _module_file(self, file: Path, level: int, module: str) -> Path | None:
        """The project file a module name refers to, remembered per folder: asked for every
        call of an imported name, most of them modules outside the project."""
        key = (file.parent if level else self.root, level, module)
        if key not in self._modules:
            self._modules[key] = self._find_module_file(file, level, module)
        return self._modules[key]

    def _find_module_file(self, file: Path, level: int, module: str) -> Path | None:
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
            for path in (
                candidate.with_suffix(".py") if parts else None,
                candidate / "__init__.py",
            ):
                if path is not None and path.is_file() and _inside(path, self.root):
                    return path
        return None

    def _summary(self, path: Path, consult: bool = True, full: bool = False) -> _Summary | None:
        """The file's summary; its header alone unless `full` (see `_Summary.full`)."""
        try:
            info = path.stat()
            known = self._digests.get(path)
            data = None
            if known is not None and known[:2] == (info.st_mtime_ns, info.st_size):
                digest = known[2]
            else:
                data = path.read_bytes()
                digest = hashlib.sha256(data).hexdigest()
                self._digests[path] = (info.st_mtime_ns, info.st_size, digest)
            summary = self._summaries.get(digest)
            if summary is None or (full and not summary.full):
                text = (data if data is not None else path.read_bytes()).decode("utf-8", "replace")
                summary = self._summaries[digest] = _summarise(text, full, self._tree_of(text))
        except OSError:
            return None
        if consult:
            self.consulted[path] = digest
        return summary


def _mentions(path: Path, name: str) -> bool:
    """Whether the file's text holds `name`: a file that never writes a function's name cannot
    call it, and reading its bytes costs a hundredth of summarising it."""
    try:
        return name.encode() in path.read_bytes()
    except OSError:
        return False


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
