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
import builtins
import hashlib
import os
import re
from collections.abc import Callable, Iterator
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TypeVar, cast

from torchlint.analysis.ast_names import ast_dotted
from torchlint.analysis.frameworks import framework_of
from torchlint.analysis.names import (
    BATCH_COUNT_NAME,
    LOADER_NAME,
    NOT_CALLABLE_MODULES,
    RUN_ONCE_NAMES,
    WRITER_NAME,
    is_module_name,
    is_optimizer_name,
)
from torchlint.analysis.names import (
    EPOCH_NAME as _EPOCH,
)
from torchlint.analysis.receivers import (
    attribute_builders,
    built_by,
    built_locals,
    cached_locals,
    constructed_class,
)
from torchlint.analysis.test_code import is_test_code
from torchlint.analysis.text import precision_mentions

_MAX_DEPTH = 8
# The methods calling an instance runs: its class's own `__call__`, or an nn.Module's `forward`.
_INSTANCE_CALLS = (".__call__", ".forward")
# Bases that bind no attribute of their instances: a class deriving only from these and from
# project classes holds only what the project binds.
_PLAIN_BASES = frozenset({"object", "ABC", "abc.ABC", "Generic", "typing.Generic"})
_GRAD_OFF = frozenset({"no_grad", "inference_mode"})
_ACCELERATORS = frozenset({"cuda", "xpu", "mps", "npu", "hpu", "xla"})
# Folders that hold no code of the project's own; a larger project is not scanned for call sites.
_NOT_PROJECT = frozenset(
    {"venv", "env", "site-packages", "node_modules", "build", "dist", "__pycache__"}
)
_MAX_FILES = 3000
# Source characters whose syntax trees the index holds for the engine (`ProjectIndex.tree_for`):
# a tree takes about forty times its source, so at most about 80 MB.
_PENDING_CHARACTERS = 2_000_000
# What `ProjectIndex._remembered` keeps answers by: a method name, (file, class, target class).
_Key = TypeVar("_Key")
# The text patterns below read every file of a project: their runs (`\w++`, `[ \t]*+`) are
# possessive where what follows can never match inside them, so a failed match gives up at once
# instead of retrying each shorter run (the same matches, a third to half the regex time).
_CALLED = re.compile(r"\b(\w++)\s*+\(")
# A call whose result is bound: `train = train_fns.make_train_fn(G, D)` (the callee's last name)
_BOUND_CALL = re.compile(r"=\s*+(?:\w++\s*+\.\s*+)*+(\w+)\s*\(")
# The bases of a class statement: `class Demo(IO, metaclass=Meta):` (across lines too)
_CLASS_BASES = re.compile(r"^[ \t]*+class\s++\w++\s*+\(([^)]*+)\)", re.MULTILINE)
_WORD = re.compile(r"\w+")
# The private methods of `torch.nn.Module` that its own code calls on a subclass, which a
# subclass may override: hooks, never dead for want of a call in the project
_MODULE_HOOKS = frozenset(
    {
        "_apply",
        "_call_impl",
        "_conv_forward",
        "_check_input_dim",
        "_get_backward_hooks",
        "_get_backward_pre_hooks",
        "_get_name",
        "_load_from_state_dict",
        "_named_members",
        "_replicate_for_data_parallel",
        "_save_to_state_dict",
        "_slow_forward",
        "_wrapped_call_impl",
    }
)
# A pyproject.toml table that makes the folder an installable distribution, not only settings
_DISTRIBUTION_TABLE = re.compile(r"^\[(?:project|tool\.poetry|build-system)\]", re.MULTILINE)
# Declarations that may ship a folder without an `__init__.py`: a namespace package finder
# (`find_namespace_packages`, setup.cfg's `find_namespace:`, pyproject's
# `[tool.setuptools.packages.find]`, whose `namespaces` is on by default).
_NAMESPACE_FINDER = re.compile(r"namespace|packages\.find")
# An `exclude=[...]` or `exclude = (...)` list of a package finder: names there are not shipped.
_EXCLUDE_LIST = re.compile(r"exclude\s*[=:]\s*[\[(][^\])]*[\])]")
# Folders setuptools' automatic discovery (a declaration that lists no packages) leaves out.
_NOT_DISCOVERED = frozenset(
    {
        "benchmark", "benchmarks", "bin", "build", "ci", "debian", "dist", "doc", "docs",
        "documentation", "env", "example", "examples", "exercise", "exercises", "scripts",
        "site_scons", "tasks", "test", "tests", "tools", "unit_test", "unit_tests", "util",
        "utils", "venv",
    }
)  # fmt: skip
_CONFIGS = (".yaml", ".yml", ".json", ".toml", ".cfg", ".gin")
# A name looked up from text: `eval(name)` (not `model.eval()`), `exec`, `globals()[name]`,
# `vars(module)`, `module.__dict__[name]` (not `self.__dict__`), `sys.modules`, `importlib`,
# `inspect.getmembers`, `__subclasses__()`, or `getattr(models, cfg["type"])`, an attribute
# named by a value (not of `self` or `cls`: an instance's attributes build no class).
# Each branch opens on one of its rarer letters and checks the text around it with fixed-width
# look-behinds, so that the engine tries a branch at few positions (nine times faster than
# the plain alternation, with the same matches on the corpus).
_DICT_BASE = re.compile(rb"(?<![\w.])([A-Za-z_]\w*)(?:\s*\.\s*\w+)*\s*\.\s*__\Z")
_GETATTR_BASE = re.compile(rb"getattr\(\s*([A-Za-z_]\w*)")
_BUILTIN_NAMES = frozenset(dir(builtins))
# Writes of an attribute whose name the text does not show (`attribute_set_only_in`).
_COMPUTED_WRITES = re.compile(rb"setattr\(|__dict__|\bvars\(")
_EVALUATES = re.compile(
    rb"val(?<=eval)(?<![\w.]eval)\s*+\(|xec(?<=exec)(?<![\w.]exec)\s*+\("
    rb"|bals\(\)(?<=\bglobals\(\))\s*+\[|cals\(\)(?<=\blocals\(\))\s*+\["
    rb"|v(?<!\wv)ars\(\s*+\w++\s*+\)\s*+\["
    rb"|dict__(?<=\w\.__dict__)(?<!\bself\.__dict__)(?<!\bcls\.__dict__)\s*+\["
    rb"|ys\.modules\b(?<=\bsys\.modules)|portlib\b(?<=\bimportlib)"
    rb"|members\((?<=\bgetmembers\()|ubclasses__\((?<=__subclasses__\()"
    rb"|g(?<!\wg)etattr\(\s*+(?!(?:self|cls)\b)[\w.\[\]\"']++\s*+,\s*+[^\s'\"]"
)
# A whole object read back from a file (`torch.load(path)` other than straight into
# `load_state_dict(...)`, `pickle.load`, `joblib.load`): an instance of any importable class.
_UNPICKLES = re.compile(
    rb"torch\.load\((?<![\w.]torch\.load\()(?<!load_state_dict\(torch\.load\()"
    rb"|pickle\.loads?\(|dill\.loads?\(|joblib\.load\("
)
# A script's guard, `if __name__ == "__main__":`.
_MAIN_GUARD = re.compile(rb"__name__\s*+==\s*+[\"']__main__[\"']")
# An import by a computed name, whose module no import line names (not `importlib.util.find_spec`,
# which only asks whether a package is installed).
_IMPORTS_BY_NAME = re.compile(
    rb"import_module\(|__import__\(|runpy\.run_|spec_from_file_location\(|SourceFileLoader\("
)
# A run of word characters (ASCII or any byte of a UTF-8 sequence) holding one that is no digit.
_CONFIG_WORD = re.compile(rb"[0-9]*+[A-Za-z_\x80-\xff][\w\x80-\xff]*+")
# The dotted name after `import` or `from`, at every place one starts (matches may overlap).
_IMPORTED_NAME = re.compile(rb"(?=(?:import|from)\s++([\w.]+))")
_ASCII_WORD = re.compile(rb"\w+")
_LOOP_LINE = re.compile(r"^([ \t]*+)(?:async\s++)?(?:for|while)\b", re.MULTILINE)


@dataclass(eq=False)
class _Summary:
    """One file's imports (local name -> (level, dotted target)) and classes (name -> bases),
    and the parts (`_PARTS`) of what its code says that questions have asked for so far.

    Filled in place, part by part: a question needs one part of a few files (the host reads of
    a helper module, the eval loaders of another), and a whole summary of a large module costs
    three times its parse. The object stays the same, so what was resolved from it holds."""

    imports: dict[str, tuple[int, str]] = field(default_factory=dict)
    classes: dict[str, tuple[bool, tuple[str, ...]]] = field(
        default_factory=dict
    )  # name -> (defines forward, bases)
    # callee as written (`super().m`; `?.m` for a method of another computed receiver), whether grad
    # is off there, the function that makes the call (`f`, `Class.method`; None at module
    # level, "" in a nested function or lambda, whose callers are not followed), and how that
    # function repeats it: `_LOOPED` (a loop or comprehension) and `_GUARDED` (a periodic
    # guard, `if step % n == 0:`, with no loop between it and the call), or 0
    calls: list[tuple[str, bool, str | None, int]] = field(default_factory=list)
    # attribute names read other than as a called method (`fn = self.inference`): a method
    # handed over may be called anywhere, so its callers are not all known
    attribute_reads: frozenset[str] = frozenset()
    # names imported inside functions (`from utils.summary import flops` in `main()`), for
    # resolving the calls they make
    local_imports: dict[str, tuple[int, str]] = field(default_factory=dict)
    devices: dict[str, bool] = field(
        default_factory=dict
    )  # module-level name -> whether the device can be a GPU
    stars: list[tuple[int, str]] = field(
        default_factory=list
    )  # `from module import *`: (level, module)
    torch: bool = False  # whether it imports torch itself
    # `f` and `Class.method` decorated no_grad/inference_mode
    grad_off: frozenset[str] = frozenset()
    # module-level `@contextmanager` functions that yield only inside a grad-off `with`
    grad_off_contexts: frozenset[str] = frozenset()
    # `Class.method` whose own body enters `torch.enable_grad()`/`set_grad_enabled(True)`
    grad_on: frozenset[str] = frozenset()
    # module-level function -> whether the device it returns can be a GPU
    device_functions: dict[str, bool] = field(default_factory=dict)
    # module-level functions that return an argument moved to a GPU on one of their paths
    # (`def gpu(t, on=False): if on: return t.cuda()`) -> the position and name of the
    # parameter that gives the device (`def to_device(x, device): return x.to(device)`), or
    # (-1, "") when the move names none (`.cuda()`, `.to("cuda")`)
    device_movers: dict[str, tuple[int, str]] = field(default_factory=dict)
    # module-level functions that return, on one of their paths, an instance of a class of the
    # module whose `__iter__` yields what it moved to a GPU (a prefetching loader)
    device_loaders: frozenset[str] = frozenset()
    # `f` and `Class.method` that read their arguments' values on the host (`v.item()`)
    syncs: frozenset[str] = frozenset()
    # those of `syncs` that also write files (`plt.savefig`, `save_image`) or render images
    # (`Image.fromarray`): output helpers
    writers: frozenset[str] = frozenset()
    # `Class.method` that returns a host read of the instance's own buffer or parameter
    # (`return self.step.data.item()` after `self.register_buffer("step", ...)`)
    state_reads: frozenset[str] = frozenset()
    # `f` and `Class.method` that compute with numpy on what they are passed
    # (`_host_array_functions`: `np.bincount` over a confusion matrix's inputs)
    host_arrays: frozenset[str] = frozenset()
    # `f` and `Class.method` that wait for the device on every call (`_waiting_functions`:
    # `torch.cuda.synchronize()`, a distributed barrier)
    waits: frozenset[str] = frozenset()
    # module-level function -> (position, name) of the parameter it returns unchanged on one
    # of its paths (`reduce_dict(d)`: `if world_size < 2: return d`)
    passthrough: dict[str, tuple[int, str]] = field(default_factory=dict)
    # module-level functions whose every return is a module put in eval mode
    eval_loaders: frozenset[str] = frozenset()
    # module-level function -> where its returns give a dataset already in memory
    # (`_in_memory_returns`): `WHOLE` for its every return of a single value, `i` for element `i`
    # of its every returned tuple (`return examples, TensorDataset(ids, labels)`)
    datasets: dict[str, frozenset[int]] = field(default_factory=dict)
    # whether each function (`f`, `Class.method`) answers with a modulo test (`answers_periodically`)
    periodic: dict[str, bool] = field(default_factory=dict)
    # `Class.method` (not a forward) that runs its own module's forward with grad left as the
    # caller has it (`method_runs_forward`)
    forwarding: frozenset[str] = frozenset()
    # What the text may say about numeric precision (`text.precision_mentions`): "tf32",
    # "mixed", "channels_last".
    precision: frozenset[str] = frozenset()
    # class -> the names of the methods it defines itself (header)
    methods: dict[str, frozenset[str]] = field(default_factory=dict)
    # Calls made in the body of a loop that may run per step (see `_LoopCall`)
    loop_calls: list[_LoopCall] = field(default_factory=list)
    # class -> attribute -> the callees that build what `self.<attribute> = ...` holds
    attr_classes: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    # `f`, `Class.method` and `factory()` (the closure `factory` returns) that run a training
    # step themselves: a `.backward()` or an optimizer's `.step()`
    stepping: frozenset[str] = frozenset()
    # those of `stepping` (`f`, `Class.method`) that run it outside any loop of theirs: one
    # training step per call, not a whole training run
    stepping_once: frozenset[str] = frozenset()
    # those of `stepping` (`f`, `Class.method`) that run a training loop themselves: every step
    # inside their own loops, one of them over epochs or a loader (`_trains_over_data`), so
    # their straight-line code runs once per training run (or epoch), whoever calls them
    training_runs: frozenset[str] = frozenset()
    # module-level names bound by an assignment (header): only these can be `devices`, so a
    # name outside them needs no full summary to say it is none
    assigned: frozenset[str] = frozenset()
    # module-level functions (header): what a star import of the module brings in, with `classes`
    functions: frozenset[str] = frozenset()
    # class -> the registries, as written, its decorators register it with (header):
    # `@EVALUATORS.register()` or `@EVALUATORS.register` gives ("EVALUATORS",)
    registered: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # module-level function -> the registries, as written, whose class it returns an instance
    # of: `return EVALUATORS.get(name)(cfg)` (scopes)
    registry_factories: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # whether the text writes `.eval()` (header): without it, `eval_loaders` is empty
    evals: bool = False
    # whether the text writes a host read (`.item()`, header): without one, `syncs` is empty
    host_reads: bool = False
    # whether the text calls a `synchronize` or a `barrier` (header): without one, `waits` is empty
    synchronizes: bool = False
    # The parts filled so far: the header fields (imports, classes, methods, star imports,
    # `torch`, `assigned`, `evals`, `host_reads`, `precision`) are always there, the others take
    # walks of the whole tree and are filled when a question asks for their part
    parts: set[str] = field(default_factory=set)


# A call of a project function: the file making it, whether grad is off there, the function
# making it and how that function repeats it (`_LOOPED`, `_GUARDED`: `_Summary.calls`)
_Site = tuple[Path, bool, str | None, int]
_LOOPED = 1  # a loop or comprehension of the calling function runs the call
_GUARDED = 2  # a periodic guard runs it now and then, no loop between the two


@dataclass(frozen=True)
class _LoopCall:
    """A call in the body of a loop, as written: `self.model.optimize`, `train`, `score.add_batch`.

    kind: "batch" when the loop iterates a loader (`for x, y in train_loader`), "loop" for any
    other loop that is not over epochs; a call under a periodic guard (`if i % n == 0:`) is
    left out. owner: the class whose method makes the call (for `self.`). bound: the callees
    whose results the call's head name is bound to in its function (`Score` for `score =
    Score(c)`, `train_fns.make_train_fn` for `train = train_fns.make_train_fn(G, D)`).
    """

    callee: str
    kind: str
    owner: str | None
    bound: tuple[str, ...]


def _summarise(text: str, tree: ast.Module | None) -> _Summary:
    """The header of the summary of `text`, whose syntax tree is `tree` (None: it does not parse,
    and nothing is known of it)."""
    if tree is None:
        return _Summary(parts=set(_PARTS))
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
            bases = tuple(b for b in (ast_dotted(base) for base in node.bases) if b)
            summary.classes[node.name] = (forward, bases)
            summary.methods[node.name] = frozenset(
                s.name for s in node.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
            )
            registries = tuple(r for r in map(_registers_with, node.decorator_list) if r)
            if registries:
                summary.registered[node.name] = registries
    modules = [t for level, t in summary.imports.values() if not level] + [
        t for level, t in summary.stars if not level
    ]
    summary.assigned = frozenset(_module_level_names(tree))
    summary.functions = frozenset(
        n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    )
    summary.evals = ".eval()" in text
    summary.host_reads = _may_read_on_host(text)
    summary.synchronizes = _may_synchronize(text)
    summary.torch = any(t == "torch" or t.startswith("torch.") for t in modules)
    summary.precision = precision_mentions(text)
    return summary


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _fill(summary: _Summary, part: str, text: str, tree: ast.Module) -> None:
    """Fill one part (`_PARTS`) of `text`'s summary from its syntax tree."""
    if part == "devices":
        _collect_devices(tree, summary.devices)
    elif part == "device_functions":
        if "device" in text:  # a function that returns a device builds or names one
            _collect_device_functions(tree, summary.device_functions)
        if ".cuda(" in text or ".to(" in text:  # a mover calls one of them
            summary.device_movers = _device_movers(tree)
            summary.device_loaders = _device_loaders(tree)
    elif part == "calls":
        reads: set[str] = set()
        _collect_calls(
            tree, summary.calls, reads, summary.local_imports, lambda: _periodic_part(summary, tree)
        )
        summary.attribute_reads = frozenset(reads)
    elif part == "scopes":
        summary.stepping, summary.stepping_once, summary.training_runs = _collect_scopes(
            tree, summary.loop_calls, summary.attr_classes, summary.registry_factories
        )
    elif part == "grad_off":
        summary.grad_off = _decorated_grad_off(tree)
        summary.grad_off_contexts = _grad_off_contexts(tree)
        if "enable_grad" in text or "set_grad_enabled(True" in text:
            summary.grad_on = _grad_on_methods(tree)
    elif part == "syncs":
        if summary.host_reads:
            summary.syncs, summary.writers = _syncing_functions(tree)
            summary.state_reads = _state_reading_methods(tree)
    elif part == "host_arrays":
        if "numpy" in text:
            summary.host_arrays = _host_array_functions(tree, summary.imports)
    elif part == "waits":
        if summary.synchronizes:
            summary.waits = _waiting_functions(tree, summary.imports)
    elif part == "passthrough":
        summary.passthrough = _passthrough_functions(tree)
    elif part == "eval_loaders":
        summary.eval_loaders = _eval_loaders(tree) if summary.evals else frozenset()
    elif part == "datasets":
        summary.datasets = _in_memory_returns(tree, summary.imports)
    elif part == "periodic":
        summary.periodic = _periodic_members(tree)
    elif part == "forwarding":
        summary.forwarding = _forwarding_methods(tree)
    summary.parts.add(part)


def _periodic_part(summary: _Summary, tree: ast.Module) -> dict[str, bool]:
    """The summary's periodic helpers, filled on first need: the calls walk and the
    `periodic` part share one reading of the file's helpers."""
    if "periodic" not in summary.parts:
        _fill(summary, "periodic", "", tree)
    return summary.periodic


# The parts of a summary beyond its header, each filled by one walk (`_fill`): "calls" gives
# `calls`, `attribute_reads` and `local_imports`; "scopes" gives `loop_calls`, `attr_classes`
# and `stepping`; "grad_off" gives `grad_off` and `grad_off_contexts`; the others give the
# field of their name.
_PARTS = (
    "devices",
    "device_functions",
    "calls",
    "scopes",
    "grad_off",
    "syncs",
    "waits",
    "host_arrays",
    "passthrough",
    "eval_loaders",
    "datasets",
    "periodic",
    "forwarding",
)


_STEP_TEXT = re.compile(r"\.\s*(?:backward|manual_backward|step)\s*\(")
_STEP_BYTES = re.compile(_STEP_TEXT.pattern.encode())
_STEPPER_DEF = re.compile(rb"def\s+(?:__call__|step)\s*\(")  # see `_attribute_call`
_ITERABLE_WRAPPERS = frozenset({"enumerate", "tqdm", "zip", "iter", "trange", "list"})


def _scopes(tree: ast.Module) -> list[tuple[ast.AST, str | None]]:
    """The module, its functions and its classes' methods, each with the class it belongs to."""
    found: list[tuple[ast.AST, str | None]] = [(tree, None)]
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append((node, None))
        elif isinstance(node, ast.ClassDef):
            found += [
                (s, node.name)
                for s in node.body
                if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
            ]
    return found


def _collect_scopes(
    tree: ast.Module,
    loop_calls: list[_LoopCall],
    attr_classes: dict[str, dict[str, tuple[str, ...]]],
    registry_factories: dict[str, tuple[str, ...]],
) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """One walk per scope (the module, its functions, its classes' methods) for what the
    cross-module call graph reads: the calls made in loops (`_LoopCall`), what `self.<attr>`
    is built by in each class, and which functions run a training step, which of those
    run it outside their own loops, and which run a training loop over data (returned)."""
    stepping = set()
    once = set()
    runs = set()
    for scope, owner in _scopes(tree):
        walk = _ScopeWalk(scope)
        loop_calls += [
            _LoopCall(callee, kind, owner, tuple(walk.bound.get(callee.split(".")[0], ())))
            for callee, kind in walk.loop_calls
        ]
        if owner is not None:
            for attribute, callee in walk.self_bound:
                attrs = attr_classes.setdefault(owner, {})
                attrs[attribute] = (*attrs.get(attribute, ()), callee)
        if not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if owner is None and walk.registry_returns:
            registry_factories[scope.name] = tuple(walk.registry_returns)
        if walk.steps:
            stepping.add(f"{owner}.{scope.name}" if owner else scope.name)
            if _steps_outside_loops(scope):
                once.add(f"{owner}.{scope.name}" if owner else scope.name)
            elif _trains_over_data(scope):
                runs.add(f"{owner}.{scope.name}" if owner else scope.name)
        returned = [f for f in walk.nested if f.name in walk.returned]
        if owner is None and any(_ScopeWalk(f).steps for f in returned):
            stepping.add(scope.name + "()")
    return frozenset(stepping), frozenset(once), frozenset(runs)


# The node types `_ScopeWalk` notes something of (a parse builds these exact types, no subclass)
_SCOPE_WALK_KINDS = frozenset(
    {ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.Call, ast.Assign}
    | {ast.Return, ast.For, ast.AsyncFor, ast.While, ast.If}
)


class _ScopeWalk:
    """What one scope's own body (not nested functions or classes) says, from one walk."""

    def __init__(self, scope: ast.AST) -> None:
        self.bound: dict[str, list[str]] = {}  # name -> callees of the calls it is bound to
        self.self_bound: list[tuple[str, str]] = []  # (attribute, callee) of `self.x = C(...)`
        self.loop_calls: list[tuple[str, str]] = []  # (callee, loop kind)
        self.returned: set[str] = set()  # names returned: `return train`
        # registries whose class the scope returns an instance of: `return REG.get(n)(cfg)`,
        # or a name bound to one (`head = REG.get(n)(cfg)`, then `return head`)
        self.registry_returns: list[str] = []
        registry_bound: dict[str, list[str]] = {}
        self.nested: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        self.steps = False
        me = None
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            params = scope.args.posonlyargs + scope.args.args
            me = params[0].arg if params else None
            for param in [*params, *scope.args.kwonlyargs]:
                annotation = _annotated_class(param.annotation)
                if annotation:  # `metrics: Metrics`: what it holds is built by that class
                    self.bound.setdefault(param.arg, []).append(annotation)
        # A module's `forward` in training mode runs on every training step, whoever calls it
        # (a framework's trainer, a registry-built model): what its `if self.training:` branch
        # calls runs per batch, like a loop's body over a loader.
        training = me if me is not None and getattr(scope, "name", "") == "forward" else None
        body = getattr(scope, "body", [])
        stack: list[tuple[ast.AST, str | None]] = [(node, None) for node in body]
        while stack:
            node, kind = stack.pop()
            if type(node) not in _SCOPE_WALK_KINDS:  # most nodes: only their children count
                stack += [(c, kind) for c in _children(node)]
                continue
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.nested.append(node)
                continue
            if isinstance(node, ast.ClassDef | ast.Lambda):
                continue
            if isinstance(node, ast.Call):
                self._call(node, kind)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                self._assign(node.targets[0], node.value, me)
                registry = _registry_instance(node.value)
                if registry and isinstance(node.targets[0], ast.Name):
                    registry_bound.setdefault(node.targets[0].id, []).append(registry)
            elif isinstance(node, ast.Return) and isinstance(node.value, ast.Name):
                self.returned.add(node.value.id)
                self.registry_returns += registry_bound.get(node.value.id, [])
            elif isinstance(node, ast.Return) and node.value is not None:
                registry = _registry_instance(node.value)
                self.registry_returns += [registry] if registry else []
            elif isinstance(node, ast.For | ast.AsyncFor | ast.While):
                inner = _loop_kind(node)
                heads = [node.test] if isinstance(node, ast.While) else [node.target, node.iter]
                stack += [(c, kind) for c in [*heads, *node.orelse]]
                stack += [(c, inner) for c in node.body]
                continue
            elif isinstance(node, ast.If) and kind is not None and _periodic(node.test):
                # A guard whose branch steps the optimizer (gradient accumulation) runs with
                # every update: "update", which questions counting per update take as "batch".
                every = "update" if kind != "epoch" and _steps_optimizer(node.body) else None
                stack += [(node.test, kind), *((c, every) for c in node.body)]
                stack += [(c, kind) for c in node.orelse]
                continue
            elif isinstance(node, ast.If) and kind is None and training is not None:
                sense = _training_test(node.test, training)
                if sense is not None:
                    stack += [(node.test, None)]
                    stack += [(c, "batch" if sense else None) for c in node.body]
                    stack += [(c, None if sense else "batch") for c in node.orelse]
                    continue
            stack += [(c, kind) for c in _children(node)]

    def _call(self, node: ast.Call, kind: str | None) -> None:
        callee = ast_dotted(node.func)
        if callee and kind in ("batch", "loop", "update"):
            self.loop_calls.append((callee, kind))
        if not self.steps:
            self.steps = _training_step(node)

    def _assign(self, target: ast.expr, value: ast.expr, me: str | None) -> None:
        callee = built_by(value)
        if not callee:
            return
        if isinstance(target, ast.Name):
            self.bound.setdefault(target.id, []).append(callee)
        elif (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == me
        ):
            self.self_bound.append((target.attr, callee))


def _training_step(node: ast.Call) -> bool:
    """`loss.backward()`, `self.manual_backward(loss)` or an optimizer's `step()`
    (`_optimizer_step`): a call that runs a training step."""
    func = node.func
    return isinstance(func, ast.Attribute) and (
        func.attr in ("backward", "manual_backward") or _optimizer_step(node)
    )


def _optimizer_step(node: ast.Call) -> bool:
    """`optimizer.step()`, `self.opt.step()`, `scaler.step(opt)` (not a scheduler's)."""
    func = node.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "step"
        and is_optimizer_name((ast_dotted(func.value) or "").rsplit(".", 1)[-1])
    )


def _registers_with(decorator: ast.expr) -> str | None:
    """The registry a class decorator registers the class with, as written: `@REG.register()`,
    `@REG.register("name")` or `@REG.register` give `REG`."""
    func = decorator.func if isinstance(decorator, ast.Call) else decorator
    if isinstance(func, ast.Attribute) and func.attr == "register":
        return ast_dotted(func.value)
    return None


def _registry_instance(value: ast.expr) -> str | None:
    """The registry, as written, whose class `value` builds an instance of: `REG.get(name)(cfg)`
    gives `REG`."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Call)):
        return None
    func = value.func.func
    return (
        ast_dotted(func.value) if isinstance(func, ast.Attribute) and func.attr == "get" else None
    )


def _steps_outside_loops(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether `function` calls `.backward()` or an optimizer's `step()` outside its own loops
    (nested functions left out): each call runs one training step."""
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES):
            continue
        if isinstance(node, ast.For | ast.AsyncFor | ast.While):
            stack += [*node.orelse]
            continue
        if isinstance(node, ast.Call) and _training_step(node):
            return True
        stack += _children(node)
    return False


def _trains_over_data(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether `function` runs a training step inside one of its own loops that is, or sits
    inside, a loop over epochs or a loader (`_loop_kind`; nested functions left out): a
    training run (or one epoch of it), not an inner loop of gradient steps on one batch (an
    adversarial perturbation's `for _ in range(steps)`)."""
    stack: list[tuple[ast.AST, bool]] = [(node, False) for node in function.body]
    while stack:
        node, over_data = stack.pop()
        if isinstance(node, _SCOPES):
            continue
        if isinstance(node, ast.For | ast.AsyncFor | ast.While):
            inner = over_data or _loop_kind(node) in ("batch", "epoch")
            stack += [(c, inner) for c in node.body]
            stack += [(c, over_data) for c in node.orelse]
            continue
        if over_data and isinstance(node, ast.Call) and _training_step(node):
            return True
        stack += [(c, over_data) for c in _children(node)]
    return False


def _steps_optimizer(body: list[ast.stmt]) -> bool:
    """Whether a block calls an optimizer's `step()` itself (nested functions left out)."""
    return any(isinstance(n, ast.Call) and _optimizer_step(n) for n in _own_nodes(body))


def _annotated_class(annotation: ast.expr | None) -> str | None:
    """The class a parameter's annotation names, as written (`Metrics`, `metrics.Metrics`,
    `"Metrics"`); None for anything else (`Optional[Metrics]`, `list[int]`)."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        text = annotation.value.strip()
        return text if all(p.isidentifier() for p in text.split(".")) else None
    return ast_dotted(annotation) if annotation is not None else None


def _training_test(test: ast.expr, me: str) -> bool | None:
    """True for `self.training`, False for `not self.training`, None for any other test."""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    operand = test.operand if isinstance(test, ast.UnaryOp) and negated else test
    if ast_dotted(operand) != f"{me}.training":
        return None
    return not negated


def _loop_kind(loop: ast.For | ast.AsyncFor | ast.While) -> str:
    """ "batch" for a loop over a loader, "epoch" for one over epochs, else "loop"."""
    if isinstance(loop, ast.While):
        return "epoch" if _names_epoch(loop.test) else "loop"
    if _names_epoch(loop.target) or _names_epoch(loop.iter):
        return "epoch"
    iterable = loop.iter
    while (
        isinstance(iterable, ast.Call)
        and (ast_dotted(iterable.func) or "").rsplit(".", 1)[-1] in _ITERABLE_WRAPPERS
        and iterable.args
    ):
        iterable = iterable.args[0]
    if isinstance(iterable, ast.Subscript):  # `loaders[0]`
        iterable = iterable.value
    if (
        isinstance(iterable, ast.Call)
        and ast_dotted(iterable.func) in ("range", "trange")
        and iterable.args
    ):  # `range(nBatch)`: batch numbers
        stop = iterable.args[0] if len(iterable.args) == 1 else iterable.args[1]
        name = (ast_dotted(stop) or "").rsplit(".", 1)[-1].lower()
        return "batch" if BATCH_COUNT_NAME.search(name) else "loop"
    if isinstance(iterable, ast.Call):
        return "batch" if (ast_dotted(iterable.func) or "").endswith("DataLoader") else "loop"
    name = (ast_dotted(iterable) or "").rsplit(".", 1)[-1].lower()
    return "batch" if name and (LOADER_NAME.search(name) or name.endswith("loaders")) else "loop"


def _names_epoch(node: ast.AST) -> bool:
    return any(
        isinstance(n, ast.Name)
        and _EPOCH.search(n.id)
        or isinstance(n, ast.Attribute)
        and _EPOCH.search(n.attr)
        or isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and _EPOCH.search(n.value)
        for n in _walk(node)
    )


def _periodic(test: ast.expr) -> bool:
    """`if i % log_every == 0:` and other tests on a remainder: the body runs now and then."""
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for n in _walk(test))


def _text_loop_names(text: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """Names called in the blocks of `for`/`while` headers: those under a header that names a
    loader (`for x, y in train_loader:`), and those under any; and the callees whose results
    are bound (`train = fns.make_train_fn(...)`). Read from the text by indentation alone
    (regular expressions, no parse): a superset of what the file's loops call, a gate and not
    an answer."""
    called = frozenset(_BOUND_CALL.findall(text))
    batch: set[str] = set()
    any_loop: set[str] = set()
    done = 0  # the end of the last block read: loops inside it were read with it
    for header in _LOOP_LINE.finditer(text):
        if header.start() < done:
            continue
        done = _loop_block(text, header, batch, any_loop)
    return frozenset(batch), frozenset(any_loop), called


def _loop_block(
    text: str, header: re.Match[str], batch: set[str], any_loop: set[str] | None
) -> int:
    """Reads one loop's block (its names into `any_loop` unless None, and into `batch` under a
    loader's header or a nested one's) and returns where the block ends. A nested loop's block
    is read for `batch` alone: its names are already in its outer block's."""
    indent = len(header.group(1))
    line_end = text.find("\n", header.end())
    if line_end < 0:
        return len(text)
    end = _block_end(indent).search(text, line_end)
    stop = end.start() if end else len(text)
    words = _WORD.findall(text[header.start() : line_end].lower())
    loader = any(
        LOADER_NAME.search(w) or "loader" in w or BATCH_COUNT_NAME.search(w) for w in words
    )
    if loader or any_loop is not None:
        names = _CALLED.findall(text[line_end:stop])
        if any_loop is not None:
            any_loop.update(names)
        if loader:
            batch.update(names)
            return stop
    inner_done = line_end
    for inner in _LOOP_LINE.finditer(text, line_end, stop):
        if inner.start() >= inner_done:
            inner_done = _loop_block(text, inner, batch, None)
    return stop


@lru_cache(maxsize=64)
def _block_end(indent: int) -> re.Pattern[str]:
    """The first line of code indented no deeper than `indent`: where a block ends."""
    return re.compile(r"\n(?=[ \t]{0," + str(indent) + r"}[^ \t\n#\r])")


# The node types `_collect_calls` notes something of or walks in its own way (exact types)
_CALL_WALK_KINDS = frozenset(
    {ast.Call, ast.Attribute, ast.ImportFrom, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor}
    | {ast.If}
    | {ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp}
    | {ast.SetComp, ast.DictComp, ast.GeneratorExp}
)

_SUPER = "super()"


def _computed_receiver(receiver: ast.expr) -> str:
    """How a call's summary names a receiver that is no dotted name: `super()` (of the calling
    method's class: a base's method, never the class's own), else `?`."""
    if (
        isinstance(receiver, ast.Call)
        and isinstance(receiver.func, ast.Name)
        and receiver.func.id == "super"
        and not receiver.args
    ):
        return _SUPER
    return "?"


def _collect_calls(
    tree: ast.Module,
    calls: list[tuple[str, bool, str | None, int]],
    reads: set[str],
    local_imports: dict[str, tuple[int, str]],
    periodic_members: Callable[[], dict[str, bool]],
) -> None:
    """Every call's callee, whether a `with` or decorator around it turns autograd off, the
    function that makes it and how that function repeats it (`_LOOPED`; `_GUARDED`: in the
    body of an `if` whose test takes a remainder, `if step % n == 0:`, or calls a function or
    method of the file that answers so, `if self.check_frequency(step):`, with no loop
    between the guard and the call); and the attribute names read other than as a call's
    callee or the argument of `callable(...)`, which hands nothing over.

    Iterative: a deeply nested file must not exhaust the stack."""
    stack: list[tuple[ast.AST, bool, str | None, int]] = [(tree, False, None, 0)]
    periodic: dict[str, bool] | None = None  # the file's periodic helpers, read on first need
    called: set[int] = set()  # ids of the `func` nodes of calls seen
    while stack:
        node, off, owner, looped = stack.pop()
        if type(node) not in _CALL_WALK_KINDS:  # most nodes: only their children count
            stack += [(child, off, owner, looped) for child in _children(node)]
            continue
        if isinstance(node, ast.Call):
            called.add(id(node.func))
            if isinstance(node.func, ast.Name) and node.func.id == "callable" and node.args:
                called.add(id(node.args[0]))  # `callable(x.m)` asks, hands nothing over
            callee = ast_dotted(node.func)
            if callee is None and isinstance(node.func, ast.Attribute):
                callee = _computed_receiver(node.func.value) + "." + node.func.attr
            if callee:
                calls.append((callee, off, owner, looped))
        elif isinstance(node, ast.Attribute) and id(node) not in called:
            reads.add(node.attr)
        elif isinstance(node, ast.ImportFrom) and owner is not None and node.module:
            for alias in node.names:
                local_imports[alias.asname or alias.name] = (
                    node.level,
                    f"{node.module}.{alias.name}",
                )
        if isinstance(node, ast.With | ast.AsyncWith) and any(
            _turns_grad_off(item.context_expr) for item in node.items
        ):
            stack.extend((child, True, owner, looped) for child in node.body)
            stack.extend((item, off, owner, looped) for item in node.items)
            continue
        if isinstance(node, ast.If):
            guarded = _periodic(node.test)
            if not guarded and owner and any(isinstance(n, ast.Call) for n in _walk(node.test)):
                periodic = periodic_members() if periodic is None else periodic
                guarded = _calls_periodic_helper(node.test, owner, periodic)
            inner = looped | _GUARDED if guarded else looped
            # in `_children`'s order: a name imported in both arms keeps the body's, as before
            stack.append((node.test, off, owner, looped))
            stack += [(c, off, owner, inner) for c in node.body]
            stack += [(c, off, owner, looped) for c in node.orelse]
            continue
        if isinstance(node, ast.For | ast.AsyncFor | ast.While):
            heads = [node.test] if isinstance(node, ast.While) else [node.target, node.iter]
            stack += [(c, off, owner, looped) for c in heads]
            inner = (looped | _LOOPED) & ~_GUARDED
            stack += [(c, off, owner, inner) for c in [*node.body, *node.orelse]]
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            owner, looped = _member_key(tree, node, owner), 0
            if not isinstance(node, ast.Lambda):
                off = off or any(_turns_grad_off(d) for d in node.decorator_list)
        elif isinstance(node, ast.ClassDef):
            owner = "" if owner is not None else owner  # a class nested in a function
        elif isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            looped = (looped | _LOOPED) & ~_GUARDED
        stack += [(child, off, owner, looped) for child in _children(node)]


def _calls_periodic_helper(test: ast.expr, owner: str, periodic: dict[str, bool]) -> bool:
    """Whether `test`, in the function `owner` (`f`, `Class.method`), calls a function of the
    file, or a method of `owner`'s class through `self`, that answers periodically."""
    klass = owner.rpartition(".")[0]
    for node in _walk(test):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name):
            key = func.id
        elif (
            klass
            and isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "self"
        ):
            key = f"{klass}.{func.attr}"
        else:
            continue
        if periodic.get(key):
            return True
    return False


def _member_key(tree: ast.Module, node: ast.AST, owner: str | None) -> str:
    """`f` for a module-level function, `Class.method` for a method of a module-level class,
    "" for anything nested deeper (a closure, a lambda: who calls it is not followed)."""
    if owner is not None or isinstance(node, ast.Lambda):
        return ""
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    if node in tree.body:
        return node.name
    for klass in tree.body:
        if isinstance(klass, ast.ClassDef) and node in klass.body:
            return f"{klass.name}.{node.name}"
    return ""


def _members(tree: ast.Module) -> Iterator[tuple[ast.stmt, str]]:
    """The module's top-level statements and its classes' body statements, each with the prefix
    that names a function among them as the index does (`Class.` for a method)."""
    for node in tree.body:
        yield node, ""
        if isinstance(node, ast.ClassDef):
            for member in node.body:
                yield member, node.name + "."


def _decorated_grad_off(tree: ast.Module) -> frozenset[str]:
    """Module-level functions and methods whose own decorator turns autograd off, or whose whole
    body (past its docstring) is one `with` block that does (`Grad._body_mode`)."""
    found = set()
    for member, prefix in _members(tree):
        if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef) and (
            any(_turns_grad_off(d) for d in member.decorator_list) or _body_grad_off(member)
        ):
            found.add(prefix + member.name)
    return frozenset(found)


def _grad_on_methods(tree: ast.Module) -> frozenset[str]:
    """Methods of module-level classes whose own body (not a nested function's) enters a `with`
    that turns autograd on (`with torch.set_grad_enabled(True):` around a Grad-CAM's
    `loss.backward()`): the method needs the graph, whatever its caller's grad mode."""
    return frozenset(
        f"{node.name}.{member.name}"
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        for member in node.body
        if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef) and _enters_grad_on(member)
    )


def _enters_grad_on(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue  # runs later, wherever it is called
        if isinstance(node, ast.With | ast.AsyncWith) and any(
            _turns_grad_on(item.context_expr) for item in node.items
        ):
            return True
        stack.extend(_children(node))
    return False


def _turns_grad_on(expr: ast.expr) -> bool:
    """`torch.enable_grad()`, `torch.set_grad_enabled(True)` and their aliases."""
    if not isinstance(expr, ast.Call):
        return False
    leaf = (ast_dotted(expr.func) or "").rsplit(".", 1)[-1]
    if leaf == "enable_grad":
        return True
    return (
        leaf == "set_grad_enabled"
        and bool(expr.args)
        and isinstance(expr.args[0], ast.Constant)
        and expr.args[0].value is True
    )


def _grad_off_contexts(tree: ast.Module) -> frozenset[str]:
    """Module-level `@contextmanager` functions whose every `yield` sits inside a `with` that
    turns autograd off (`try: with torch.no_grad(): yield nets`, MONAI's `eval_mode`): the body
    of a `with` entering one runs without grad."""
    return frozenset(
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and any((ast_dotted(d) or "").endswith("contextmanager") for d in node.decorator_list)
        and _yields_only_grad_off(node)
    )


def _yields_only_grad_off(function: ast.FunctionDef) -> bool:
    """Whether `function` yields, and only inside a grad-off `with` of its own body."""
    yields = False
    stack: list[tuple[ast.AST, bool]] = [(statement, False) for statement in function.body]
    while stack:
        node, off = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue  # a nested function's yields are its own
        if isinstance(node, ast.Yield | ast.YieldFrom):
            if not off:
                return False
            yields = True
        if isinstance(node, ast.With) and any(
            _turns_grad_off(item.context_expr) for item in node.items
        ):
            off = True
        stack.extend((child, off) for child in _children(node))
    return yields


def _body_grad_off(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    body = function.body[1:] if ast.get_docstring(function) is not None else function.body
    return (
        len(body) == 1
        and isinstance(body[0], ast.With)
        and any(_turns_grad_off(item.context_expr) for item in body[0].items)
    )


def _forwarding_methods(tree: ast.Module) -> frozenset[str]:
    """Methods of module-level classes (`Reader.inference`) that run their own module's forward
    with the caller's grad mode: `self(x)` or `self.<module-named attribute>(x)` outside nested
    functions and grad-off blocks, in a method that is no forward, has no grad-off decorator and
    puts nothing in eval mode itself (that method's own evaluation scope reports it)."""
    found = set()
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        built: frozenset[str] | None = None
        for member in node.body:
            if (
                isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef)
                and not member.name.startswith(("forward", "__"))
                and not any(_turns_grad_off(d) for d in member.decorator_list)
            ):
                if built is None:
                    built = _torch_submodules(node)
                if _runs_own_forward(member, built):
                    found.add(f"{node.name}.{member.name}")
    return frozenset(found)


def _torch_submodules(klass: ast.ClassDef) -> frozenset[str]:
    """The attributes the class's `__init__` binds to a `torch.nn` layer it builds
    (`self.item_emb = torch.nn.Embedding(n, d)`, `self.head = nn.Linear(d, k)`): calling one
    runs a submodule's forward, whatever the attribute's name."""
    init = next(
        (s for s in klass.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None
    )
    if init is None:
        return frozenset()
    found = set()
    for statement in init.body:
        if not isinstance(statement, ast.Assign) or not isinstance(statement.value, ast.Call):
            continue
        callee = ast_dotted(statement.value.func) or ""
        if (
            not callee.startswith(("nn.", "torch.nn."))
            or not callee.rpartition(".")[2][:1].isupper()
        ):
            continue
        for target in statement.targets:
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
            ):
                found.add(target.attr)
    return frozenset(found)


def _runs_own_forward(
    method: ast.FunctionDef | ast.AsyncFunctionDef, built: frozenset[str]
) -> bool:
    """Whether `method`'s own body calls `self(...)`, `self.<module name>(...)` or a `torch.nn`
    layer the class builds (`built`) with grad as its caller has it, and never calls `.eval()`."""
    forwards = False
    stack: list[ast.AST] = list(method.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue  # runs later, wherever it is called
        if isinstance(node, ast.With | ast.AsyncWith) and any(
            _turns_grad_off(item.context_expr) for item in node.items
        ):
            continue
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "eval":
                return False
            forwards = forwards or _calls_own_module(node, built)
        stack.extend(_children(node))
    return forwards


def _calls_own_module(call: ast.Call, built: frozenset[str]) -> bool:
    """`self(x)`, `self.encoder(x)`, `self.item_emb(x)`: a call with inputs of the instance, of a
    module-named attribute or of a `torch.nn` layer the class builds."""
    if not (call.args or call.keywords):
        return False
    func = call.func
    if isinstance(func, ast.Name):
        return func.id == "self"
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == "self"
        and (is_module_name(func.attr) or func.attr in built)
    )


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
    for name in _module_level_names(tree) & bound.keys():
        kinds = bound[name]
        if kinds in ({True}, {False}):
            devices[name] = True in kinds


def _module_level_names(tree: ast.Module) -> set[str]:
    """The names an assignment at module level binds (`DEVICE = "cuda"`)."""
    return {
        t.id
        for n in tree.body
        if isinstance(n, ast.Assign | ast.AnnAssign)
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
        if isinstance(t, ast.Name)
    }


_HOST_READS = frozenset({"item", "tolist", "cpu", "numpy"})
_HOST_READ_METHOD = re.compile(r"\.\s*(?:item|tolist|cpu|numpy|add_scalars?)\s*\(")
# `float(` and `math.f(` as whole words. Each pattern opens with its word and checks the word
# boundary behind it: one opening with `\b` is tried at every character (fifteen times slower).
_FLOAT_CALL = re.compile(r"float(?<=\bfloat)\s*\(")
_MATH_CALL = re.compile(r"math\.(?<=\bmath\.)\w+\s*\(")


def _may_read_on_host(text: str) -> bool:
    """Whether the text has a host read `_syncing_functions` looks for: `.item(`, `.tolist(`,
    `.cpu(`, `.numpy(`, `.add_scalar(s)(`, `float(` or `math.f(`."""
    return (
        _HOST_READ_METHOD.search(text) is not None
        or ("float" in text and _FLOAT_CALL.search(text) is not None)
        or ("math." in text and _MATH_CALL.search(text) is not None)
    )


def _syncing_functions(tree: ast.Module) -> tuple[frozenset[str], frozenset[str]]:
    """Module-level functions and methods that read what they are passed on the host: a
    `.item()`/`.tolist()`/`.cpu()`/`.numpy()` or a TensorBoard `add_scalar` of a parameter, of a
    loop variable over one (`for k, v in values.items(): v.item()`, or a comprehension's), or
    of a local computed from them (`acc = (scores == targets).sum()`). A tensor passed to one syncs at the call. Second,
    those of them that write files (`synth_samples` saving a plot and a wav per utterance). A
    factory whose returned closure reads its arguments is noted as `factory()`."""
    found, writers = set(), set()
    handing: dict[ast.FunctionDef, set[str]] = {}  # module functions handing on their values
    for member, prefix in _members(tree):
        if not isinstance(member, ast.FunctionDef):
            continue
        handed: set[str] | None = set() if not prefix else None
        if _reads_arguments(member, handed):
            found.add(prefix + member.name)
            if _outputs(member):
                writers.add(prefix + member.name)
        elif handed:
            handing[member] = handed
        if not prefix and _returns_syncing_closure(member):
            found.add(member.name + "()")
    _hand_on(handing, found, writers)
    return frozenset(found), frozenset(writers)


# numpy's plain reductions: a mean or sum of what a function is passed could stay on the device.
_NUMPY_REDUCTIONS = frozenset({"mean", "sum", "average", "nanmean", "nansum", "prod"})


def _host_array_functions(tree: ast.Module, imports: dict[str, tuple[int, str]]) -> frozenset[str]:
    """Module-level functions and methods that compute with numpy on what they are passed: a
    numpy call other than a plain reduction (`np.bincount`, `np.asarray`, `np.argmax`) or an
    `.astype(...)` (numpy's, not torch's) over a parameter, a loop variable over one or a local
    computed from them, or such values handed to a method of the same class that does
    (`runningScore.update` zipping its arguments into `self._fast_hist`, which calls
    `np.bincount`). A numpy copy handed to one is made for the host's computation."""
    found: set[str] = set()
    handing: dict[str, set[str]] = {}  # `Class.method` -> the class's methods it hands values to
    for member, prefix in _members(tree):
        if not isinstance(member, ast.FunctionDef):
            continue
        derived = _derived_from_parameters(member)
        calls = [n for n in _walk(member) if isinstance(n, ast.Call)]
        if any(_numpy_on(call, derived, imports) for call in calls):
            found.add(prefix + member.name)
        elif prefix:
            handing[prefix + member.name] = {
                prefix + call.func.attr
                for call in calls
                if isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name)
                and call.func.value.id == "self"
                and any(_mentions_any(a, derived) for a in call.args)
            }
    changed = True
    while changed:
        changed = False
        for name, callees in handing.items():
            if name not in found and callees & found:
                found.add(name)
                changed = True
    return frozenset(found)


def _derived_from_parameters(function: ast.FunctionDef) -> set[str]:
    """The parameters of `function` (not `self`/`cls`) and the names computed from them, in the
    order the body binds them: loop targets over them, assignments of expressions that use them."""
    params = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
    derived = {a.arg for a in params} - {"self", "cls"}
    for node in _walk(function):
        if isinstance(node, ast.For | ast.comprehension) and _mentions_any(node.iter, derived):
            derived |= {n.id for n in _walk(node.target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Assign) and _mentions_any(node.value, derived):
            for target in node.targets:
                derived |= {n.id for n in _walk(target) if isinstance(n, ast.Name)}
    return derived


def _mentions_any(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in _walk(node))


def _numpy_on(call: ast.Call, derived: set[str], imports: dict[str, tuple[int, str]]) -> bool:
    """`np.bincount(x)` (not `np.mean(x)`) or `x.astype(int)` over one of the `derived` names."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "astype":
        return _mentions_any(func.value, derived)
    written = ast_dotted(func)
    full = (_imported(written, imports) or "") if written else ""
    if not full.startswith("numpy.") or full.rsplit(".", 1)[-1] in _NUMPY_REDUCTIONS:
        return False
    return any(_mentions_any(a, derived) for a in [*call.args, *(k.value for k in call.keywords)])


_SYNCHRONIZE_CALL = re.compile(r"\b(?:synchronize|barrier)\s*\(")


def _may_synchronize(text: str) -> bool:
    """Whether the text calls something named `synchronize` or `barrier`. The words are looked
    for first: the pattern opens with an alternation, so the regex engine tries it at every
    character of the file, and most files name neither."""
    return ("synchronize" in text or "barrier" in text) and _SYNCHRONIZE_CALL.search(
        text
    ) is not None


# What a module-level name must import for `name.synchronize()` or `name.barrier()` to wait
# for the device: `torch.cuda.synchronize()`, `dist.barrier()`.
_WAITING_CALLS = frozenset({"torch.cuda.synchronize", "torch.distributed.barrier"})


def _waiting_functions(tree: ast.Module, imports: dict[str, tuple[int, str]]) -> frozenset[str]:
    """Module-level functions and methods that wait for the device on every call: their body
    runs a `torch.cuda.synchronize()` (also `torch.cuda.current_stream().synchronize()`) or a
    `torch.distributed.barrier()` outside any loop and any branch but one on the type of what
    they are passed (`if isinstance(preds, torch.Tensor):`, the same on every call of a caller
    passing the same kind of value), itself or through a function it defines inside or the
    module defines that it calls so (`SegmentationMetric.update`'s nested `evaluate_worker`).
    A wait under a branch on a flag or on state (`if self.timed:`) may be skipped by every
    call; after an early `return` under such a branch, the rest is as conditional."""
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    found = set()
    for member, prefix in _members(tree):
        if isinstance(member, ast.FunctionDef) and _waits_in(
            member.body, member, functions, imports, set()
        ):
            found.add(prefix + member.name)
    return frozenset(found)


def _waits_in(
    body: list[ast.stmt],
    function: ast.FunctionDef,
    functions: dict[str, ast.FunctionDef],
    imports: dict[str, tuple[int, str]],
    seen: set[str],
) -> bool:
    """Whether the statements, run in order, surely reach a wait (`_waiting_functions`)."""
    nested = {s.name: s for s in function.body if isinstance(s, ast.FunctionDef)}
    for statement in body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        if isinstance(statement, ast.If):
            if _type_test(statement.test):  # a branch on the kind of value passed
                if _waits_in(statement.body, function, functions, imports, seen) or _waits_in(
                    statement.orelse, function, functions, imports, seen
                ):
                    return True
            elif any(isinstance(n, ast.Return | ast.Raise) for n in _walk(statement)):
                return False  # the rest runs only on some calls
            continue
        if isinstance(statement, ast.With | ast.AsyncWith):
            if _waits_in(statement.body, function, functions, imports, seen):
                return True
            continue
        if isinstance(statement, ast.Try):
            if _waits_in(statement.body, function, functions, imports, seen):
                return True
            if _waits_in(statement.finalbody, function, functions, imports, seen):
                return True
            continue
        if not isinstance(
            statement, ast.Expr | ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Return
        ):
            continue  # loops and the rest: may run no time
        for call in _walk(statement):
            if not isinstance(call, ast.Call):
                continue
            if _waiting_call(call.func, imports):
                return True
            name = call.func.id if isinstance(call.func, ast.Name) else None
            callee = nested.get(name) if name else None
            callee = callee or (functions.get(name) if name else None)
            if name and callee is not None and name not in seen:
                seen.add(name)
                if _waits_in(callee.body, callee, functions, imports, seen):
                    return True
        if isinstance(statement, ast.Return):
            return False
    return False


def _type_test(test: ast.expr) -> bool:
    """`isinstance(preds, torch.Tensor)`, or its negation."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    return (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and (test.func.id == "isinstance")
    )


def _waiting_call(func: ast.expr, imports: dict[str, tuple[int, str]]) -> bool:
    """`torch.cuda.synchronize`, `dist.barrier` (through the module's imports) or
    `torch.cuda.current_stream().synchronize`."""
    if not isinstance(func, ast.Attribute) or func.attr not in ("synchronize", "barrier"):
        return False
    if func.attr == "synchronize" and isinstance(func.value, ast.Call):
        inner = ast_dotted(func.value.func) or ""
        full = _imported(inner, imports) or inner
        return inner.endswith("current_stream") and full.startswith("torch.cuda.")
    written = ast_dotted(func)
    return written is not None and (_imported(written, imports) or written) in _WAITING_CALLS


def _imported(written: str, imports: dict[str, tuple[int, str]]) -> str | None:
    """The full name a dotted name of the module (`nn.Module`) stands for through its absolute
    imports (`torch.nn.Module`); None when its head is no such import."""
    head, _, rest = written.partition(".")
    level, target = imports.get(head, (1, ""))
    if level or not target:
        return None
    return f"{target}.{rest}" if rest else target


def _hand_on(handing: dict[ast.FunctionDef, set[str]], found: set[str], writers: set[str]) -> None:
    """Module functions that hand values computed from their parameters to a module function
    that reads its arguments on the host (`eval_metrics(output, target)` calling
    `batch_pix_accuracy(predict, target, labeled)`, which copies the counts to numpy): they
    read their arguments too, through it, and are output helpers where every such function
    they hand values to is one. Added to `found` until nothing changes."""
    changed = True
    while changed and handing:
        changed = False
        for function, callees in list(handing.items()):
            if callees & found:
                found.add(function.name)
                if _outputs(function) or callees & found <= writers:
                    writers.add(function.name)  # `log_input_image` returning `tensor2im(x)`
                del handing[function]
                changed = True


def _returns_syncing_closure(function: ast.FunctionDef) -> bool:
    """`def EMA(beta): def _update(metrics): ... float(value) ...; return _update`: a factory
    whose returned closure reads what it is handed on the host (noted as `EMA()`, as
    `stepping` notes a factory whose closure steps). Only the function's own statements are
    read for the nested definition and its return."""
    nested = {s.name: s for s in function.body if isinstance(s, ast.FunctionDef)}
    if not nested:
        return False
    returned = {
        s.value.id
        for s in function.body
        if isinstance(s, ast.Return) and isinstance(s.value, ast.Name)
    }
    return any(_reads_arguments(nested[name]) for name in returned if name in nested)


def _passthrough_functions(tree: ast.Module) -> dict[str, tuple[int, str]]:
    """Module-level functions that return one of their positional parameters itself on one of
    their paths, the parameter never rebound (`def reduce_dict(d): if world_size < 2: return d`):
    on that path the caller gets back what it passed, tensors included."""
    found = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        positional = [a.arg for a in [*node.args.posonlyargs, *node.args.args]]
        returned, bound = set(), set()
        for each in _walk(node):
            if isinstance(each, ast.Return) and isinstance(each.value, ast.Name):
                returned.add(each.value.id)
            elif isinstance(each, ast.Name) and isinstance(each.ctx, ast.Store):
                bound.add(each.id)
        kept = [name for name in positional if name in returned and name not in bound]
        if len(kept) == 1:
            found[node.name] = (positional.index(kept[0]), kept[0])
    return found


def _state_reading_methods(tree: ast.Module) -> frozenset[str]:
    """`Class.method` of the module's classes whose return reads one of the instance's own
    tensors on the host: `return self.step.data.item()` where the class registers `step` as a
    buffer (`self.register_buffer("step", ...)`) or a parameter (`self.step = nn.Parameter(...)`).
    The tensor lives where the module does, so each call waits for the device."""
    found = set()
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        state = _registered_state(node)
        if not state:
            continue
        for member in node.body:
            if isinstance(member, ast.FunctionDef) and any(
                _reads_own(r.value, state)
                for r in _walk(member)
                if isinstance(r, ast.Return) and r.value is not None
            ):
                found.add(f"{node.name}.{member.name}")
    return frozenset(found)


def _registered_state(klass: ast.ClassDef) -> set[str]:
    """The attributes a class registers as buffers or parameters."""
    names = set()
    for node in _walk(klass):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "register_buffer"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.add(node.args[0].value)
        elif (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and _called_name(node.value.func) == "Parameter"
        ):
            names |= {
                t.attr
                for t in node.targets
                if isinstance(t, ast.Attribute)
                and isinstance(t.value, ast.Name)
                and t.value.id == "self"
            }
    return names


def _reads_own(value: ast.expr, state: set[str]) -> bool:
    """`self.step.item()`, `self.step.data.item()`: a host read of `self.<x>`."""
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in ("item", "tolist")
        and not value.args
    ):
        return False
    read = value.func.value
    if isinstance(read, ast.Attribute) and read.attr == "data":
        read = read.value
    return (
        isinstance(read, ast.Attribute)
        and isinstance(read.value, ast.Name)
        and read.value.id == "self"
        and read.attr in state
    )


def _outputs(function: ast.FunctionDef) -> bool:
    """Whether `function` calls a writer (`WRITER_NAME`: `plt.savefig`, `save_image`) or
    renders an image (`Image.fromarray`, `to_pil_image`: `tensor2im` for an image log): what
    it reads is pixels for output, which must reach the host."""
    return any(
        isinstance(node, ast.Call)
        and (
            WRITER_NAME.search(name := _called_name(node.func)) is not None
            or name in _IMAGE_RENDERERS
        )
        for node in _walk(function)
    )


_IMAGE_RENDERERS = frozenset({"fromarray", "to_pil_image", "ToPILImage"})


def _called_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _on_cuda(function: ast.FunctionDef) -> list[ast.stmt]:
    """The statements of `function` that run on CUDA tensors: all, or those up to an early
    `if x.is_cuda: ... return` (or `x.device.type == "cuda"`), after which the rest runs only
    off CUDA unless it moves something to a device (pfrl's `clip_l2_grad_norm_` hands CUDA gradients to torch's own clipping and
    reads norms on the host only for CPU ones)."""
    for at, statement in enumerate(function.body):
        if (
            isinstance(statement, ast.If)
            and _tests_cuda(statement.test)
            and statement.body
            and isinstance(statement.body[-1], ast.Return)
            and not any(_moves_to_device(rest) for rest in function.body[at + 1 :])
        ):
            return function.body[: at + 1]
    return function.body


def _moves_to_device(statement: ast.stmt) -> bool:
    """Whether the statement moves something to a device (`x = x.cuda()`, `.to(device)`)."""
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("cuda", "to")
        for node in _walk(statement)
    )


def _tests_cuda(test: ast.expr) -> bool:
    """`x.is_cuda`, or `x.device.type == "cuda"`."""
    if isinstance(test, ast.Attribute):
        return test.attr == "is_cuda"
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Attribute)
        and test.left.attr == "type"
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "cuda"
    )


def _reads_arguments(function: ast.FunctionDef, handed: set[str] | None = None) -> bool:
    """Whether `function` reads on the host a value computed from its parameters: a tensor
    method's host copy or a TensorBoard scalar of one, or a Python conversion (`_converted`) of
    a value derived from one (a loop variable over it, a sum accumulated from it), not of the
    parameter itself. Where it reads none, `handed` (when given) gets the names of the plain
    functions it calls with such a value (`batch_pix_accuracy(predict, target, labeled)`)."""
    loops: list[ast.For | ast.comprehension] = []
    assigns: list[ast.Assign | ast.AugAssign] = []
    reads: list[ast.expr] = []
    converted: list[ast.expr] = []
    calls: list[ast.Call] = []  # `f(x)`: what is handed to another function
    walked = [node for statement in _on_cuda(function) for node in _walk(statement)]
    for node in walked:  # one walk: the loops, the assignments and the host reads
        kind = type(node)  # exact types: this runs on every node of the summarised files
        if kind is ast.For or kind is ast.comprehension:  # `{k: v.item() for k, v in d.items()}`
            loops.append(cast(ast.For | ast.comprehension, node))
        elif kind is ast.Assign:
            single = cast(ast.Assign, node)
            if len(single.targets) == 1 and type(single.targets[0]) is ast.Name:
                assigns.append(single)
        elif kind is ast.AugAssign:
            augment = cast(ast.AugAssign, node)
            if type(augment.target) is ast.Name:
                assigns.append(augment)
        elif kind is ast.Call:
            call = cast(ast.Call, node)
            _call_reads(call, reads, converted)
            if handed is not None and type(call.func) is ast.Name and call.args:
                calls.append(call)
    if not reads and not converted and not calls:
        return False
    args = function.args
    params = {
        a.arg
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        if a is not None and a.arg not in ("self", "cls")
    }
    direct = set(params)
    for loop in loops:  # loop variables over a parameter carry its values
        if _root(loop.iter) in params:
            params |= {n.id for n in _walk(loop.target) if isinstance(n, ast.Name)}
    valued = set(params)  # ... and what is computed from their values, not their form
    for assign in sorted(assigns, key=lambda a: a.lineno):  # `acc = (scores == targets).sum()`
        target = assign.target if isinstance(assign, ast.AugAssign) else assign.targets[0]
        if _operands(assign.value) & params:  # also `total += p.grad.norm() ** 2`
            params.add(target.id)  # type: ignore[attr-defined]
        if _operands(assign.value, values=True) & valued:  # not `d_k = query.size(-1)`
            valued.add(target.id)  # type: ignore[attr-defined]
    derived = valued - direct
    if any(_operands(value) & params for value in reads) or any(
        _operands(value, values=True) & derived for value in converted
    ):
        return True
    for call in calls:  # what it hands on: a function of the module may read it
        if any(_operands(a, values=True) & valued for a in call.args):
            handed.add(call.func.id)  # type: ignore[union-attr, attr-defined]
    return False


def _call_reads(call: ast.Call, reads: list[ast.expr], converted: list[ast.expr]) -> None:
    """Adds what a call reads on the host: `float(v)`/`math.f(v)` to `converted`; the receiver
    of `.item()`-like copies and what `add_scalar` logs to `reads`."""
    value = _converted(call)
    if value is not None:
        converted.append(value)
    elif type(call.func) is ast.Attribute:
        if call.func.attr in _HOST_READS and not call.args:
            reads.append(call.func.value)
        else:
            reads += _logged_values(call)


def _converted(call: ast.Call) -> ast.expr | None:
    """The value `float(v)` or `math.sqrt(total)` turns into a Python number: of a tensor, a
    host read."""
    func = call.func
    named = (isinstance(func, ast.Name) and func.id == "float") or (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == "math"
    )
    if not named or len(call.args) != 1 or isinstance(call.args[0], ast.Starred):
        return None
    return call.args[0]


def _logged_values(call: ast.Call) -> list[ast.expr]:
    """What `writer.add_scalar(tag, value, step)` / `add_scalars(tag, {name: value})` writes:
    TensorBoard copies a tensor it is given to the host."""
    method = call.func.attr  # type: ignore[attr-defined]
    if method not in ("add_scalar", "add_scalars"):
        return []
    keyword = "tag_scalar_dict" if method == "add_scalars" else "scalar_value"
    value = next((k.value for k in call.keywords if k.arg == keyword), None)
    if value is None and len(call.args) > 1 and not isinstance(call.args[1], ast.Starred):
        value = call.args[1]
    if isinstance(value, ast.Dict):
        return list(value.values)
    return [] if value is None else [value]


# What reads a tensor's form, known on the host without a sync: `x.shape`, `x.size(-1)`.
_FORM_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "device"})
_FORM_METHODS = frozenset({"size", "dim", "numel", "nelement"})


def _operands(node: ast.expr, values: bool = False) -> set[str]:
    """The names a value is computed from: through method chains, comparisons, arithmetic and
    subscripts (`(scores.argmax(1) == targets).float().sum()` gives scores and targets), not
    through the arguments of calls (`torch.tensor(step)` is built, not read). With `values`,
    not through a look at a tensor's form either (`query.size(-1)`, `x.shape[0]`)."""
    found, todo = set(), [node]
    while todo:
        current = todo.pop()
        if values and _reads_form(current):
            continue
        if isinstance(current, ast.Name):
            found.add(current.id)
        elif isinstance(current, ast.Call) and isinstance(current.func, ast.Attribute):
            todo.append(current.func.value)
        elif isinstance(current, ast.Attribute | ast.Subscript | ast.UnaryOp):
            todo.append(current.value if not isinstance(current, ast.UnaryOp) else current.operand)
        elif isinstance(current, ast.BinOp):
            todo += [current.left, current.right]
        elif isinstance(current, ast.Compare):
            todo += [current.left, *current.comparators]
    return found


def _reads_form(node: ast.expr) -> bool:
    """`x.shape`, `x.ndim`, `x.size(0)`, `x.dim()`: the form of a tensor, not its values."""
    if isinstance(node, ast.Attribute):
        return node.attr in _FORM_ATTRIBUTES
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _FORM_METHODS
    )


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


def _framework_steps(summary: _Summary) -> frozenset[str]:
    """`Class.method` of the file's classes that a framework runs every step: a per-step hook
    of a class derived directly from one of the framework's classes (`training_step` of a
    `pl.LightningModule`), and the methods such a hook calls through `self.` (LoFTR's
    `_trainval_inference`). Needs the "calls" part."""
    found: set[str] = set()
    for klass, (_, bases) in summary.classes.items():
        per_step: set[str] = set()
        for base in bases:
            head, _, rest = base.partition(".")
            level, target = summary.imports.get(head, (1, ""))
            framework = None if level else framework_of(f"{target}.{rest}" if rest else target)
            per_step |= framework.per_step if framework is not None else set()
        found |= {
            f"{klass}.{method}" for method in summary.methods.get(klass, frozenset()) & per_step
        }
    if not found:
        return frozenset()
    helpers = set()
    for callee, _, owner, _ in summary.calls:
        head, _, method = callee.partition(".")
        klass = (owner or "").partition(".")[0]
        if owner in found and head == "self" and method in summary.methods.get(klass, ()):
            helpers.add(f"{klass}.{method}")
    return frozenset(found | helpers)


def _device_movers(tree: ast.Module) -> dict[str, tuple[int, str]]:
    """Module-level functions one of whose returns is a parameter moved to a GPU: `.cuda()` of
    it, or `.to(...)` of it with a device that can be a GPU (`"cuda"`, a `device` parameter),
    each with the parameter that gives the device ((-1, "") when none does). A return may also
    hand back such moves as a tuple, or through names the function bound to them (`image, label
    = image.cuda(), label.cuda()` then `return image, label`), of a parameter or of a local
    built from one: what the caller gets is on the GPU on that path."""
    found: dict[str, tuple[int, str]] = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        parameters = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
        nodes = _walk(node)
        bound = _names_bound_to_moves(nodes, parameters)
        moves = [
            move
            for n in nodes
            if isinstance(n, ast.Return)
            for value in (n.value.elts if isinstance(n.value, ast.Tuple) else [n.value])
            for move in [
                bound.get(value.id)
                if isinstance(value, ast.Name)
                else _moved_parameter(value, parameters)
            ]
        ]
        devices = sorted(m for m in moves if m is not None)
        if devices:
            found[node.name] = devices[0]  # a move that needs no device argument first
    return found


def _device_loaders(tree: ast.Module) -> frozenset[str]:
    """Module-level functions one of whose returns is an instance of a module class whose
    `__iter__` moves what it yields to a GPU (`.cuda()`, `.to(...)`: a prefetching loader
    wrapping a DataLoader, effdet's and timm's `PrefetchLoader`), returned straight or through
    a name the function binds to it on one of its paths (`loader = PrefetchLoader(loader)`
    under `if use_prefetcher:`, then `return loader`)."""
    classes = set()
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for method in node.body:
            if not (isinstance(method, ast.FunctionDef) and method.name == "__iter__"):
                continue
            nodes = _walk(method)
            if any(isinstance(n, ast.Yield | ast.YieldFrom) for n in nodes) and any(
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and (n.func.attr == "cuda" or (n.func.attr == "to" and bool(n.args)))
                for n in nodes
            ):
                classes.add(node.name)
    if not classes:
        return frozenset()
    found = set()
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        nodes = _walk(node)
        built = {
            target.id
            for n in nodes
            if isinstance(n, ast.Assign) and _builds_one_of(n.value, classes)
            for target in n.targets
            if isinstance(target, ast.Name)
        }
        if any(
            isinstance(n, ast.Return)
            and (
                _builds_one_of(n.value, classes)
                or (isinstance(n.value, ast.Name) and n.value.id in built)
            )
            for n in nodes
        ):
            found.add(node.name)
    return frozenset(found)


def _builds_one_of(value: ast.expr | None, classes: set[str]) -> bool:
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in classes
    )


def _names_bound_to_moves(
    nodes: list[ast.AST], parameters: list[str]
) -> dict[str, tuple[int, str]]:
    """The names a function binds to a move of a name (`x = x.cuda()`, `a, b = a.to(device),
    b.to(device)`), each with the parameter that gives the device (as `_moved_parameter`)."""
    bound: dict[str, tuple[int, str]] = {}
    for node in nodes:
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            pairs = (
                list(zip(target.elts, node.value.elts, strict=False))
                if isinstance(target, ast.Tuple)
                and isinstance(node.value, ast.Tuple)
                and len(target.elts) == len(node.value.elts)
                else [(target, node.value)]
            )
            for name, value in pairs:
                move = _moved_parameter(value, parameters, locals_too=True)
                if isinstance(name, ast.Name) and move is not None:
                    bound[name.id] = min(move, bound.get(name.id, move))
    return bound


def _moved_parameter(
    value: ast.expr | None, parameters: list[str], locals_too: bool = False
) -> tuple[int, str] | None:
    """`t.cuda()`, `t.cuda(non_blocking=True)`, `t.to("cuda")` of a parameter `t` (-1, ""), or
    `t.to(device)` of parameters `t` and `device` (the position and name of `device`); of any
    name `t` with `locals_too` (a local the function built from its parameters)."""
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and isinstance(value.func.value, ast.Name)
        and (locals_too or value.func.value.id in parameters)
    ):
        return None
    if value.func.attr == "cuda":
        return (-1, "")
    if value.func.attr != "to" or not value.args:
        return None
    target = value.args[0]
    if isinstance(target, ast.Name):
        named = target.id in parameters and "dev" in target.id.lower()
        return (parameters.index(target.id), target.id) if named else None
    return (-1, "") if _device_kind(target) is True else None


def _device_kind(value: ast.expr) -> bool | None:
    """True for a device that can be a GPU (`"cuda"`, `torch.device("cuda:0")`, `"cuda" if ... else
    "cpu"`), False for the CPU alone, None for anything else."""
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        name = value.value.split(":")[0]
        return True if name in _ACCELERATORS else (False if name == "cpu" else None)
    if (
        isinstance(value, ast.Call)
        and (ast_dotted(value.func) or "").rsplit(".", 1)[-1] == "device"
        and value.args
    ):
        return _device_kind(value.args[0])
    if isinstance(value, ast.IfExp):
        kinds = {_device_kind(value.body), _device_kind(value.orelse)}
        return True if True in kinds else (False if kinds == {False} else None)
    return None


def _eval_loaders(tree: ast.Module) -> frozenset[str]:
    """Module-level functions whose every return gives a module built or loaded and put in eval
    mode (`return torch.jit.load(f).eval().to(device)`), directly, through a local name, or
    through a module-level cache dict (`_cache[key] = ...; return _cache[key]`)."""
    stores: dict[str, list[ast.expr]] = {}
    for node in _walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                    stores.setdefault(target.value.id, []).append(node.value)
    found = set()
    for function in tree.body:
        if not isinstance(function, ast.FunctionDef):
            continue
        values = _returned_values(function, stores)
        if values and all(_chained_eval(v) for v in values):
            found.add(function.name)
    return frozenset(found)


def _returned_values(
    function: ast.FunctionDef, stores: dict[str, list[ast.expr]]
) -> list[ast.expr] | None:
    """What `function`'s returns give, through local names and cache dicts; None if unknown."""
    local: dict[str, list[ast.expr]] = {}
    returns: list[ast.expr | None] = []
    for node in _walk(function):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    local.setdefault(target.id, []).append(node.value)
        elif isinstance(node, ast.Return):
            returns.append(node.value)
    found: list[ast.expr] = []
    for value in returns:
        if isinstance(value, ast.Name) and value.id in local:
            found += local[value.id]
        elif isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name):
            if value.value.id not in stores:
                return None
            found += stores[value.value.id]
        elif value is None or isinstance(value, ast.Name):
            return None
        else:
            found.append(value)
    return found


# Library knowledge: what holds a dataset already in memory. A `TensorDataset` of tensors; what
# `torch.load` gives (deserialized whole: a dataset cached with `torch.save`); a split of one.
TENSOR_DATASETS = frozenset(
    {"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"}
)
DATASET_SPLITS = frozenset(
    {
        "torch.utils.data.random_split",
        "torch.utils.data.dataset.random_split",
        "torch.utils.data.Subset",
        "torch.utils.data.dataset.Subset",
    }
)
TORCH_LOADS = frozenset({"torch.load", "torch.serialization.load"})
WHOLE = -1  # `datasets`: the whole value a function returns, not an element of a tuple
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _in_memory_returns(
    tree: ast.Module, imports: dict[str, tuple[int, str]]
) -> dict[str, frozenset[int]]:
    """Module-level functions whose returns give a dataset already in memory (`TensorDataset`,
    a list of samples, what `torch.load` gives or an item of it, a split of one, or what a
    function of the module that gives one returns), bound in every branch: `WHOLE` where every
    return of a single value gives one, `i` where element `i` of every returned tuple does
    (`return examples, data`, `data` a `torch.load` of a cache or a `TensorDataset` built
    anew). Names are followed through the function's own assignments; a parameter is unknown."""
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    memo: dict[tuple[str, int], frozenset[int]] = {}
    found = {}
    for name, function in functions.items():
        positions = _dataset_positions(function, functions, imports, 0, memo)
        if positions:
            found[name] = positions
    return found


def _own_nodes(body: list[ast.stmt]) -> list[ast.AST]:
    """The nodes of a block (a function's body), not those of the functions, lambdas or classes
    in it, at its top level too."""
    nodes: list[ast.AST] = [s for s in body if not isinstance(s, _SCOPES)]
    for each in nodes:
        nodes += [c for c in _children(each) if not isinstance(c, _SCOPES)]
    return nodes


# What a name of a function is bound to, for `_dataset_positions`: a value, element `i` of what
# a call gives unpacked (`examples, data = load(...)`), or None (bound some other way: unknown)
_Bound = ast.expr | tuple[ast.Call, int] | None


def _dataset_positions(
    function: ast.FunctionDef,
    functions: dict[str, ast.FunctionDef],
    imports: dict[str, tuple[int, str]],
    depth: int,
    memo: dict[tuple[str, int], frozenset[int]],
) -> frozenset[int]:
    """`_in_memory_returns` for one function, asked `depth` calls down from a function of the
    module, each answer kept in `memo` by (function, depth): a helper called from many
    functions, or many times in one, is read once per depth, not once per call path."""
    if depth > _MAX_DEPTH:
        return frozenset()
    key = (function.name, depth)
    if key not in memo:
        memo[key] = _positions_of_returns(function, functions, imports, depth, memo)
    return memo[key]


def _positions_of_returns(
    function: ast.FunctionDef,
    functions: dict[str, ast.FunctionDef],
    imports: dict[str, tuple[int, str]],
    depth: int,
    memo: dict[tuple[str, int], frozenset[int]],
) -> frozenset[int]:
    nodes = _own_nodes(function.body)
    local: dict[str, list[_Bound]] = {}
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                _bind_values(target, node.value, local)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            _bind_values(node.target, node.value, local)
        else:
            targets: list[ast.expr] = []
            if isinstance(node, ast.AugAssign | ast.AnnAssign | ast.For | ast.NamedExpr):
                targets = [node.target]
            elif isinstance(node, ast.With):
                targets = [i.optional_vars for i in node.items if i.optional_vars is not None]
            for target in targets:
                for each in _walk(target):
                    if isinstance(each, ast.Name):
                        local.setdefault(each.id, []).append(None)
    returns = [n.value for n in nodes if isinstance(n, ast.Return)]

    def positions_of(call: ast.Call) -> frozenset[int]:
        called = ast_dotted(call.func) or ""
        if called not in functions:
            return frozenset()
        return _dataset_positions(functions[called], functions, imports, depth + 1, memo)

    def held(value: _Bound, seen: frozenset[str] = frozenset()) -> bool:
        if isinstance(value, tuple):
            call, index = value
            if (_imported(ast_dotted(call.func) or "", imports) or "") in DATASET_SPLITS:
                return held(call, seen)  # `train, val = random_split(dataset, ...)`
            return index in positions_of(call)
        if isinstance(value, ast.List | ast.ListComp):
            return True
        if isinstance(value, ast.Name):
            values = local.get(value.id)
            return (
                value.id not in seen
                and bool(values)
                and all(held(v, seen | {value.id}) for v in values or ())
            )
        if isinstance(value, ast.Subscript):
            return loaded(value.value, seen)
        if not isinstance(value, ast.Call):
            return False
        full = _imported(ast_dotted(value.func) or "", imports) or ""
        if full in TENSOR_DATASETS or full in TORCH_LOADS:
            return True
        if full in DATASET_SPLITS:
            first = next((a for a in value.args if not isinstance(a, ast.Starred)), None)
            return held(first, seen)
        return WHOLE in positions_of(value)

    def loaded(value: _Bound, seen: frozenset[str]) -> bool:
        if isinstance(value, ast.Call):
            return (_imported(ast_dotted(value.func) or "", imports) or "") in TORCH_LOADS
        if not isinstance(value, ast.Name) or value.id in seen:
            return False
        values = local.get(value.id)
        return bool(values) and all(loaded(v, seen | {value.id}) for v in values or ())

    positions = set()
    whole = [v for v in returns if not isinstance(v, ast.Tuple)]
    if whole and all(held(v) for v in whole):
        positions.add(WHOLE)
    tuples = [v for v in returns if isinstance(v, ast.Tuple)]
    if tuples:
        for index in range(min(len(t.elts) for t in tuples)):
            if all(held(t.elts[index]) for t in tuples):
                positions.add(index)
    return frozenset(positions)


def _bind_values(target: ast.expr, value: ast.expr, local: dict[str, list[_Bound]]) -> None:
    """What an assignment binds each name of its target to: the value, its element of a tuple
    written out or of what a call gives unpacked; None where it is not known."""
    if isinstance(target, ast.Name):
        local.setdefault(target.id, []).append(value)
        return
    if not isinstance(target, ast.Tuple | ast.List):
        for each in _walk(target):  # `self.x = ...`, `d[k] = ...`: no local name bound
            if isinstance(each, ast.Name) and isinstance(each.ctx, ast.Store):
                local.setdefault(each.id, []).append(None)
        return
    for index, element in enumerate(target.elts):
        if isinstance(value, ast.Tuple | ast.List) and len(value.elts) == len(target.elts):
            _bind_values(element, value.elts[index], local)
        elif isinstance(element, ast.Name) and isinstance(value, ast.Call):
            local.setdefault(element.id, []).append((value, index))
        else:
            for each in _walk(element):
                if isinstance(each, ast.Name):
                    local.setdefault(each.id, []).append(None)


def _chained_eval(value: ast.expr) -> bool:
    """`X(...).eval().to(device)`: module methods chained on a call, one of them a plain `.eval()`."""
    seen = False
    while (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in _MODULE_CHAIN
    ):
        seen = seen or (value.func.attr == "eval" and not value.args)
        value = value.func.value
    return seen and isinstance(value, ast.Call)


def _turns_grad_off(expr: ast.expr) -> bool:
    """`torch.no_grad()`, `@torch.inference_mode`, `torch.set_grad_enabled(False)` and their aliases."""
    call = expr if isinstance(expr, ast.Call) else None
    name = (ast_dotted(call.func) if call else ast_dotted(expr)) or ""
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


_MODULE_CHAIN = frozenset(
    {"to", "cuda", "cpu", "eval", "half", "float", "double", "bfloat16", "requires_grad_"}
)


# The fields of `ast` nodes that hold only markers (`Name.ctx`, `BinOp.op`, `Compare.ops`),
# and those that never hold a node in any node type (names, flags, numbers), not looked into.
_MARKER_FIELDS = frozenset({"ctx", "op", "ops"})
_SCALAR_FIELDS = frozenset(
    {"id", "attr", "arg", "name", "module", "level", "kind", "type_comment", "is_async"}
    | {"conversion", "simple", "tag"}
)
_CHILD_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {}  # a node type's other fields


def _walk(node: ast.AST) -> list[ast.AST]:
    """`node` and every node below it but the markers (`_children`), in `ast.walk`'s
    breadth-first order, as a list: a third cheaper than `ast.walk`'s generators, and a summary
    walks each file several times."""
    nodes = [node]
    for each in nodes:
        nodes += _children(each)
    return nodes


def _children(node: ast.AST) -> list[ast.AST]:
    """`ast.iter_child_nodes(node)` as a list, read from the fields directly, less the load,
    store, operator and comparison markers (`ctx`, `op`, `ops`): no walk here looks for one
    among the nodes it walks (they are read as fields), and they are a third of a file's
    nodes."""
    kind = type(node)
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        skipped = _MARKER_FIELDS | _SCALAR_FIELDS
        fields = _CHILD_FIELDS[kind] = tuple(f for f in kind._fields if f not in skipped)
    found = []
    for name in fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            found.append(value)
        elif isinstance(value, list):
            found += [item for item in value if isinstance(item, ast.AST)]
    return found


@dataclass(frozen=True)
class _Question:
    """What a class resolution asks: how a torch class answers it, and whether a class of the
    project that defines `forward` is a yes on its own."""

    torch_answer: Callable[[str], bool | None]
    settled_by_forward: bool = False
    # whether a dotted import may name a module of a folder the project puts on `sys.path`
    # (`_on_added_path`): `from model.detector.vgg16 import vgg16` with `lib/` added
    added_paths: bool = False


def _torch_module(full: str) -> bool | None:
    return (
        full.rsplit(".", 1)[-1] not in NOT_CALLABLE_MODULES
        if full.startswith("torch.nn.")
        else None
    )


_is_module = _Question(_torch_module, settled_by_forward=True, added_paths=True)


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
        self._notebooks: list[Path] = []  # its notebooks, listed by the same walk
        self._configs: list[Path] = []  # its configuration files, listed by the same walk
        self._passed: dict[tuple[Path, str], tuple[Path, str]] = {}  # re-export -> definition
        self._modules: dict[tuple[Path, int, str], Path | None] = {}
        self._resolved: dict[tuple[Path, int, str, bool], Path | None] = {}
        self._mover_texts: dict[tuple[Path, str], bool] = {}
        self._mover_sources: dict[Path, bytes | None] = {}
        # path -> (its summary, its calls by the project function they reach: (grad off there,
        # the function making the call))
        self._targets: dict[Path, tuple[_Summary, dict[tuple[Path, str], list[_Site]]]] = {}
        self._step_targets: dict[Path, tuple[_Summary, dict[bool, set[tuple[Path, str]]]]] = {}
        self._attribute_steppers: dict[Path, tuple[_Summary, bool]] = {}  # `_text_steps`
        self._stepper_targets: dict[Path, tuple[_Summary, set[tuple[Path, str]]]] = {}
        self._imports_of: dict[Path, tuple[_Summary, list[Path]]] = {}  # `_imported_files`
        # `_text_steps` from the text, per state of the file (its modification time and size)
        self._step_texts: dict[Path, tuple[tuple[int, int], bool]] = {}
        # While a file is linted: its text and the syntax tree CPython's check of it built.
        self._parsed: tuple[str, ast.Module] | None = None
        # Syntax trees by text: those the index parsed, until the engine takes one to lint its
        # file (`tree_for`), and those of files linted (`parsed`): a run over the project then
        # parses a file asked about before or after its turn once, not twice. Oldest first;
        # `_PENDING_CHARACTERS` of source at most.
        self._pending: dict[str, ast.Module] = {}
        self._pending_size = 0
        # (file, class, target class) -> `_related`: like the word index, not refreshed while
        # the process runs
        self._related_memo: dict[
            tuple[Path, str, tuple[Path, str]], tuple[bool, dict[Path, str]]
        ] = {}
        # path -> ((mtime, size), content digest, whether it is test code): `_test_code`
        self._test_files: dict[Path, tuple[tuple[int, int], str, bool]] = {}
        # attribute -> `_written_elsewhere`, and the files it read, kept alike
        self._written_memo: dict[str, tuple[bool, dict[Path, str]]] = {}
        # (calling file, class's file) -> `_may_hold_instances`, kept alike
        self._holds_memo: dict[tuple[Path, Path], tuple[bool, dict[Path, str]]] = {}
        # file -> `_opens_to_users`, and file -> `_import_closure`: like the word index, not
        # refreshed while the process runs (each walk up `_may_hold_now` asks them again)
        self._opens_memo: dict[Path, bool] = {}
        self._closures: dict[Path, frozenset[Path]] = {}
        # (file, class, attribute, target class) -> `_attribute_unrelated`, kept alike
        self._attribute_memo: dict[
            tuple[Path, str, str, tuple[Path, str]], tuple[bool, dict[Path, str]]
        ] = {}
        # method name -> `forwards_by_name` and the files it read: not refreshed while the
        # process runs either
        self._forwarding_names: dict[str, tuple[bool, dict[Path, str]]] = {}
        # method name -> `grad_off_by_name` and the files it read, kept alike
        self._grad_off_names: dict[str, tuple[bool, dict[Path, str]]] = {}
        # file -> (content digest, whether it holds a BatchNorm-freezing walk)
        self._freezing_files: dict[Path, tuple[str, bool]] = {}
        # registry (file, module-level name) -> `_registered`, and the files it read
        self._registered_memo: dict[
            tuple[Path, str], tuple[list[tuple[Path, str]], dict[Path, str]]
        ] = {}

    @contextmanager
    def parsed(self, text: str, tree: ast.Module) -> Iterator[None]:
        """While one file is linted, its syntax tree: the questions a file asks are mostly about
        itself (its own classes and imports), and its summary then needs no parse of its own.
        Used only for a file whose bytes on disk decode to this very text. Held after its lint
        too (`_keep`, within the bound): a file linted early is often asked about by the files
        after it, and parsing it again cost a sixth of a project run's CPython parses."""
        self._parsed = (text, tree)
        try:
            yield
        finally:
            self._parsed = None
            self._keep(text, tree)

    def _tree_of(self, text: str) -> ast.Module | None:
        parsed = self._parsed
        if parsed is not None and parsed[0] == text:
            return parsed[1]
        return self._pending.get(text) or self._keep(text, _parse(text))

    def _keep(self, text: str, tree: ast.Module | None) -> ast.Module | None:
        """Hold `tree` for the engine's lint of its file, dropping the oldest held beyond the
        bound (a file outside the run, or one summarised after its lint, is never taken)."""
        if tree is None or text in self._pending or len(text) > _PENDING_CHARACTERS:
            return tree
        self._pending[text] = tree
        self._pending_size += len(text)
        while self._pending_size > _PENDING_CHARACTERS:
            oldest = next(iter(self._pending))
            del self._pending[oldest]
            self._pending_size -= len(oldest)
        return tree

    def tree_for(self, text: str) -> ast.Module | None:
        """The syntax tree of `text` if the index parsed it while another file was linted; handed
        over once, to the engine about to lint that text."""
        tree = self._pending.pop(text, None)
        if tree is not None:
            self._pending_size -= len(text)
        return tree

    def is_module_class(self, file: Path, name: str) -> bool | None:
        """Whether `name`, as written in `file`, is an nn.Module subclass; None when unknown."""
        return self._resolve(file.absolute(), name, 0, set(), _is_module)

    def derives_from(self, file: Path, name: str, torch_classes: frozenset[str]) -> bool | None:
        """Whether `name`, as written in `file`, is one of `torch_classes` (full names) or a
        project class derived from one; None when unknown."""
        return self._resolve(file.absolute(), name, 0, set(), _Question(torch_classes.__contains__))

    def outside_bases(self, file: Path, name: str) -> frozenset[str]:
        """The qualified names outside the project that the class `name`, as written in `file`,
        derives from through the project's own classes, however many modules away:
        `{"pytorch_lightning.LightningModule"}` for `Net(Base)` where `models/base.py` has
        `class Base(pl.LightningModule)`. Empty when nothing is known."""
        found: set[str] = set()
        self._outside_bases(file.absolute(), name, 0, set(), found)
        return frozenset(found)

    def _outside_bases(
        self, file: Path, name: str, depth: int, seen: set[tuple[Path, str]], found: set[str]
    ) -> None:
        if depth > _MAX_DEPTH or (file, name) in seen:
            return
        seen.add((file, name))
        summary = self._summary(file)
        if summary is None:
            return
        head, _, rest = name.partition(".")
        if not rest and head in summary.classes:
            for base in summary.classes[head][1]:
                self._outside_bases(file, base, depth + 1, seen, found)
            return
        if head not in summary.imports:
            return
        level, target = summary.imports[head]
        full = f"{target}.{rest}" if rest else target
        module, _, leaf = full.rpartition(".")
        source = self._module_file(file, level, module) if module or level else None
        if source is not None:
            self._outside_bases(source.absolute(), leaf, depth + 1, seen, found)
        elif not level and module:
            found.add(full)

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
        """Whether the function `name` (or the method `method` of the class `name`, or with
        `name` as `factory()` the closure that factory returns), as written in `file` and
        defined in another file of the project, reads its arguments on the host."""
        found = self._syncing(file, name, method)
        return found is not None and found[1] in found[0].syncs

    def writes_read_arguments(self, file: Path, name: str, method: str | None = None) -> bool:
        """Whether that function (`syncs_arguments`) also writes files or renders images: an
        output helper, whose host reads may be what its output needs."""
        found = self._syncing(file, name, method)
        return found is not None and found[1] in found[0].writers

    def _syncing(self, file: Path, name: str, method: str | None) -> tuple[_Summary, str] | None:
        """The summary, with its "syncs" part, of the file defining `name` (`method`), and the
        member's name there."""
        target = self._defined_member(file, name, method)
        source = self._summary(target[0]) if target is not None else None
        if target is None or source is None or not source.host_reads:
            return None
        source = self._summary(target[0], part="syncs")
        return None if source is None else (source, target[1])

    def _defined_member(self, file: Path, name: str, method: str | None) -> tuple[Path, str] | None:
        """The file defining the function `name` (the closure the factory `name` returns,
        `EMA()`, or the method `method` of the class `name`), as written in `file`, and the
        member's name there (`EMA()`, `Class.method`: its class's own or a base's)."""
        file = file.absolute()
        summary = self._summary(file)
        factory = name.removesuffix("()")  # `EMA()`: the closure the factory returns
        target = self._target(file, summary, factory) if summary is not None else None
        if target is not None and method:  # the class's own module, its method perhaps a base's
            location = self._class_location(*target, stars=True)
            return self._find_method(*location, method) if location is not None else None
        return None if target is None else (target[0], target[1] + name[len(factory) :])

    def waits_for_device(self, file: Path, name: str, method: str | None = None) -> bool:
        """Whether the function `name` (or the method `method` of the class `name`), as written
        in `file` and defined in another file of the project, waits for the device on every
        call (`_waiting_functions`: `torch.cuda.synchronize()` in `SegmentationMetric.update`)."""
        target = self._defined_member(file, name, method)
        source = self._summary(target[0]) if target is not None else None
        if target is None or source is None or not source.synchronizes:
            return False
        source = self._summary(target[0], part="waits")
        return source is not None and target[1] in source.waits

    def computes_on_host_arrays(self, file: Path, name: str, method: str | None = None) -> bool:
        """Whether the function `name` (or the method `method` of the class `name`), as written
        in `file` and defined in another file of the project, computes with numpy on what it
        is passed (`_host_array_functions`: a running confusion matrix's `update`)."""
        target = self._defined_member(file, name, method)
        source = self._summary(target[0], part="host_arrays") if target is not None else None
        return source is not None and target is not None and target[1] in source.host_arrays

    def returns_argument(self, file: Path, name: str) -> tuple[int, str] | None:
        """The (position, name) of the parameter that the function `name`, as written in `file`
        and defined in another file of the project, returns unchanged on one of its paths
        (`utils.reduce_dict(loss_dict)` on one GPU); None when it returns none."""
        file = file.absolute()
        summary = self._summary(file)
        target = self._target(file, summary, name) if summary is not None else None
        source = self._summary(target[0], part="passthrough") if target is not None else None
        if target is None or source is None:
            return None
        return source.passthrough.get(target[1])

    def reads_own_state(self, file: Path, name: str, method: str) -> bool:
        """Whether the method `method` of the class `name`, as written in `file` and defined in
        another file of the project, returns a host read of the instance's own buffer or
        parameter (`Tacotron.get_step`: `return self.step.data.item()`)."""
        found = self._syncing(file, name, method)
        return found is not None and found[1] in found[0].state_reads

    def method_syncs_arguments(self, file: Path, klass: str, method: str) -> bool:
        """Whether `self.<method>(...)` in the class `klass` of `file` runs a method, the class's
        own or inherited from a base in another module (`BaseModel.reduce_loss_dict`), that
        reads its arguments on the host."""
        file = file.absolute()
        summary = self._summary(file)
        if summary is None or klass not in summary.classes:
            return False
        location = self._find_method(file, klass, method)
        source = self._summary(location[0]) if location is not None else None
        if location is None or source is None or not source.host_reads:
            return False
        source = self._summary(location[0], part="syncs")
        return source is not None and location[1] in source.syncs

    def returns_gpu(self, file: Path, name: str) -> bool | None:
        """Whether the function `name`, as written in `file`, returns a device of the project
        that can be a GPU (True) or only the CPU (False); None when unknown."""
        return self._device(file.absolute(), name, 0, functions=True)

    def moves_to_gpu(self, file: Path, name: str, depth: int = 0) -> tuple[int, str] | None:
        """Whether the function `name`, as written in `file` and defined in another module of the
        project, returns its argument moved to a GPU on one of its paths (`gpu(t, use_cuda)`
        returning `t.cuda()`): the position and name of the parameter that gives the device
        ((-1, "") when none does), None when it moves nothing. Only the module
        defining it is read past its header: the file asking is not parsed again for this."""
        file = file.absolute()
        if depth and "." not in name and not self._may_hand_mover(file, name):
            return None  # its text neither returns a move nor imports the name: no parse
        summary = self._summary(file)
        if summary is None or depth > _MAX_DEPTH:
            return None
        if depth and "." not in name and name not in summary.imports:
            defined = self._summary(file, part="device_functions")  # the module defining it
            return defined.device_movers.get(name) if defined is not None else None
        target = self._target(file, summary, name)
        return self.moves_to_gpu(target[0], target[1], depth + 1) if target is not None else None

    def returns_device_loader(self, file: Path, name: str, depth: int = 0) -> bool:
        """Whether the function `name`, as written in `file` and defined in another module of
        the project, returns on one of its paths a loader whose iteration moves its batches to
        a GPU (`create_loader(dataset, use_prefetcher=True)` returning a `PrefetchLoader`:
        `_device_loaders`). Read as `moves_to_gpu` reads the module defining it."""
        file = file.absolute()
        if depth and "." not in name and not self._may_hand_mover(file, name):
            return False
        summary = self._summary(file)
        if summary is None or depth > _MAX_DEPTH:
            return False
        if depth and "." not in name and name not in summary.imports:
            defined = self._summary(file, part="device_functions")  # the module defining it
            return defined is not None and name in defined.device_loaders
        target = self._target(file, summary, name)
        return target is not None and self.returns_device_loader(target[0], target[1], depth + 1)

    def _may_hand_mover(self, file: Path, name: str) -> bool:
        """Whether the module may define a GPU mover or re-export `name` (`_may_move`,
        `_imports_name`), remembered per file and name: many files of a project ask about the
        same utility module, which is read once (its text kept only when it returns no moved
        parameter, for the import test of each name asked)."""
        key = (file, name)
        if key in self._mover_texts:
            return self._mover_texts[key]
        if file not in self._mover_sources:
            try:
                data = file.read_bytes()
            except OSError:
                data = b""
            self._mover_sources[file] = None if _may_move(data) else data
        source = self._mover_sources[file]
        self._mover_texts[key] = source is None or _imports_name(source, name)
        return self._mover_texts[key]

    def returns_eval_module(self, file: Path, name: str, depth: int = 0) -> bool:
        """Whether the function `name`, as written in `file` and defined in another file of the
        project, returns a module in eval mode (`get_feature_detector(url)` returning
        `torch.jit.load(f).eval().to(device)`)."""
        file = file.absolute()
        summary = self._summary(file)
        if summary is not None and depth and summary.evals:
            summary = self._summary(file, part="eval_loaders")
        if summary is None or depth > _MAX_DEPTH:
            return False
        if depth and "." not in name and name in summary.eval_loaders:
            return True
        target = self._target(file, summary, name)
        return target is not None and self.returns_eval_module(target[0], target[1], depth + 1)

    def returns_in_memory_dataset(
        self, file: Path, name: str, position: int = WHOLE, depth: int = 0
    ) -> bool:
        """Whether the function `name`, as written in `file` and defined in another module of
        the project (`utils.load_data(...)`, also re-exported), gives a dataset already in memory
        (`_in_memory_returns`): on its every return of a single value (`position` `WHOLE`) or as
        element `position` of every tuple it returns (`examples, data = load_data(...)`)."""
        file = file.absolute()
        summary = self._summary(file)
        if summary is None or depth > _MAX_DEPTH:
            return False
        if depth and "." not in name and name not in summary.imports:
            defined = self._summary(file, part="datasets")  # the module defining it
            return defined is not None and position in defined.datasets.get(name, ())
        target = self._target(file, summary, name)
        return target is not None and self.returns_in_memory_dataset(
            target[0], target[1], position, depth + 1
        )

    def _device(self, file: Path, name: str, depth: int, functions: bool = False) -> bool | None:
        head, _, rest = name.partition(".")
        # the devices are module-level assignments: a header says when the name is none of them
        summary = self._summary(file)
        if summary is not None and (functions or (not rest and head in summary.assigned)):
            summary = self._summary(file, part="device_functions" if functions else "devices")
        if summary is None or depth > _MAX_DEPTH:
            return None
        known = summary.device_functions if functions else summary.devices
        if not rest and head in known:
            return known[head]
        target = self._target(file, summary, name)
        if target is None:
            return None
        return self._device(target[0], target[1], depth + 1, functions)

    def decorated_grad_off(self, file: Path, name: str, method: str | None = None) -> bool:
        """Whether the function `name` (or the method `method` of the class `name`, its own or
        inherited, the class perhaps re-exported by a package), as written in `file` and defined
        in another file of the project, carries a no_grad/inference_mode decorator: whoever
        calls it, it runs without grad."""
        file = file.absolute()
        summary = self._summary(file)
        target = self._target(file, summary, name) if summary is not None else None
        if target is None:
            return False
        if method:  # through a package's re-export and the class's bases
            location = self._class_location(*target)
            target = self._find_method(*location, method) if location else None
            if target is None:
                return False
        source = self._summary(target[0], part="grad_off")
        return source is not None and target[1] in source.grad_off

    def grad_off_context(self, file: Path, name: str) -> bool:
        """Whether the function `name`, as written in `file` and defined in another file of the
        project, is a context manager that yields only with autograd off (`with eval_mode(net):`
        runs its body without grad)."""
        file = file.absolute()
        summary = self._summary(file)
        target = self._target(file, summary, name) if summary is not None else None
        if target is None:
            return False
        source = self._summary(target[0], part="grad_off")
        return source is not None and target[1] in source.grad_off_contexts

    def method_runs_forward(self, file: Path, klass: str, method: str) -> bool:
        """Whether the method `method` of the module class `klass` (its own or inherited), as
        written in `file` and defined in another file of the project, runs the module's forward
        itself with grad as its caller has it (`Reader.inference` calling `self.encoder(x)`):
        a call of it is a forward pass, whose grad mode its caller sets."""
        location = self._module_class_elsewhere(file, klass)
        if location is None:
            return False
        found = self._find_method(*location, method)
        source = self._summary(found[0], part="forwarding") if found is not None else None
        return source is not None and found is not None and found[1] in source.forwarding

    def attribute_holds_module(self, file: Path, klass: str, attribute: str) -> bool:
        """Whether `self.<attribute>` of the module class `klass`, as written in `file` and
        defined in another file of the project, holds a module wherever the class or its bases
        assign it a call's result (the assignments the summary keeps): a torch layer or
        container (`self.target = nn.Sequential(...)`) or a module class of the project.
        Calling that attribute of an instance (`self.rnd.target(obs)`) runs the submodule's
        forward."""
        location = self._module_class_elsewhere(file, klass)
        if location is None:
            return False
        built = [
            (member_file, callee)
            for member_file, member in self._lineage(*location)
            if (scopes := self._summary(member_file, part="scopes")) is not None
            for callee in scopes.attr_classes.get(member, {}).get(attribute, ())
        ]
        return bool(built) and all(self._builds_module(*b) for b in built)

    def _builds_module(self, file: Path, callee: str) -> bool:
        """Whether calling `callee`, as written in `file`, builds a module: a class (its name
        capitalised, so not a function of `torch.nn.functional`) that `is_module_class` says is
        one, of `torch.nn` or of the project."""
        return callee.rpartition(".")[2][:1].isupper() and bool(self.is_module_class(file, callee))

    def _module_class_elsewhere(self, file: Path, klass: str) -> tuple[Path, str] | None:
        """Where the module class `klass`, as written in `file` and imported from another file
        of the project, is defined; None when it is no such class."""
        file = file.absolute()
        summary = self._summary(file)
        target = self._target(file, summary, klass) if summary is not None else None
        location = self._class_location(*target) if target is not None else None
        if location is None or not self.is_module_class(*location):
            return None
        return location

    def forwards_by_name(self, method: str) -> bool:
        """Whether the project defines a method `method` (`predict`), and every class of it that
        does is a module class whose `method` runs its own module's forward with grad as the
        caller has it (`method_runs_forward`): `model.predict(x)` on a parameter whose class
        the file cannot see is then a forward pass. Any other definition (a scorer's
        `predict`, one decorated `no_grad`, one that runs no forward) leaves it unknown."""
        return self._remembered(
            self._forwarding_names, method, lambda: self._forwards_by_name(method)
        )

    def _forwards_by_name(self, method: str) -> bool:
        def forwards(file: Path, owners: list[str]) -> bool:
            forwarding = self._summary(file, part="forwarding")
            return forwarding is not None and all(
                f"{k}.{method}" in forwarding.forwarding and self.is_module_class(file, k)
                for k in owners
            )

        return self._every_definition(method, forwards)

    def _every_definition(self, method: str, holds: Callable[[Path, list[str]], bool]) -> bool:
        """Whether project classes define `method` and `holds(file, classes)` for every file
        whose classes do (the classes defining it there); False as soon as a file that may
        define it cannot be read, or one fails."""
        found = False
        for other in self._project_files():
            if not _mentions(other, "def " + method):
                continue
            summary = self._summary(other)
            if summary is None:
                return False
            owners = [k for k, methods in summary.methods.items() if method in methods]
            if not owners:
                continue
            if not holds(other, owners):
                return False
            found = True
        return found

    def grad_off_by_name(self, method: str) -> bool:
        """Whether the project defines a method `method` (`recognize`), and every class of it
        that does decorates it no_grad/inference_mode: `model.recognize(x)` on a receiver whose
        class the file cannot see (a parameter, a builder's result) runs without grad, whichever
        of them it is. Only project classes define it: another library's class may hold one too,
        which the decorators here say nothing about, so a name no project class defines stays
        unknown."""
        return self._remembered(
            self._grad_off_names, method, lambda: self._grad_off_by_name(method)
        )

    def _grad_off_by_name(self, method: str) -> bool:
        def decorated(file: Path, owners: list[str]) -> bool:
            grad_off = self._summary(file, part="grad_off")
            return grad_off is not None and all(
                f"{k}.{method}" in grad_off.grad_off for k in owners
            )

        return self._every_definition(method, decorated)

    def method_from_outside(self, file: Path, klass: str, method: str) -> frozenset[str]:
        """The qualified names of the classes outside the project (`outside_bases`) whose
        `method` runs when the project class `klass`, as written in `file`, is asked for it: no
        class of its project lineage defines `method`, or the one that does hands the work to
        `super().<method>(...)` (OpenPrompt's `PromptForGeneration.generate` wrapping
        transformers' `GenerationMixin.generate`). Empty when unknown."""
        file = file.absolute()
        location = self._class_location(file, klass)
        if location is None:
            return frozenset()
        found = self._find_method(*location, method)
        if found is not None:
            source = self._summary(found[0], part="calls")
            wanted = f"{_SUPER}.{method}"
            if source is None or not any(
                callee == wanted and owner == found[1] for callee, _, owner, _ in source.calls
            ):
                return frozenset()
        return self.outside_bases(file, klass)

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
        module `config`, or the submodule `config.setup`), `from . import x`, star imports.
        Resolved once per summary: each question about a module asks it of all its importers."""
        summary = self._summary(file)
        if summary is None:
            return []
        known = self._imports_of.get(file)
        if known is not None and known[0] is summary:
            return known[1]
        wanted = [*summary.imports.values(), *summary.stars]
        found = [
            source
            for level, target in wanted
            for source in self._import_sources(file, level, target)
        ]
        self._imports_of[file] = (summary, found)
        return found

    def _import_sources(self, file: Path, level: int, target: str) -> list[Path]:
        """The project files an import in `file` of `target` at `level` names: the module
        itself, or the module holding the imported name (`from config import setup`)."""
        found = []
        for module in (target, target.rpartition(".")[0]):
            source = self._module_file(file, level, module) if module or level else None
            if source is not None:
                found.append(source.absolute())
        return found

    def imported_by_others(self, file: Path) -> bool:
        """Whether another file of the project imports `file` (`from .nets import Net`, `from
        models import nets`, `from .nets import *`): then it is a library module, whatever its
        `if __name__ == "__main__":` block runs. Only files whose import lines name the
        module's file name are summarised (`_import_words`)."""
        return next(self._importers(file.absolute()), None) is not None

    def batchnorms_frozen(self, file: Path) -> frozenset[str] | None:
        """The classes of `file` whose BatchNorms the project trains frozen, `_freezing_walks`:
        in eval mode with their affine off the optimizer, so a bias before one is the layer's
        only trainable shift. A walk of `file` itself over `self.modules()` covers its class and
        the classes of the file that class names, any number of hops; a walk over another model
        (`self.base_model.modules()`, `model.apply(fn)`), or any walk in a project file that
        imports `file` (at the top or in a function), covers every class of `file`. None when
        no walk covers any."""
        file = file.absolute()
        read = _read(file)
        if read is None:
            return None
        self.consulted[file] = read[1]
        tree = self._tree_of(read[0])
        if tree is None:
            return None
        classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        covered: set[str] = set()
        for owner, own in _freezing_walks(tree):
            if not own or owner is None:
                return frozenset(classes)
            covered |= _built_classes(owner, classes)
        if any(map(self._freezes_batchnorms, self._importers(file, in_functions=True))):
            return frozenset(classes)
        return frozenset(covered) if covered else None

    def _freezes_batchnorms(self, path: Path) -> bool:
        """Whether the project file walks modules to freeze BatchNorms (`_freezing_walks`),
        answered once per content: every file it imports asks it again."""
        read = _read(path)
        if read is None:
            return False
        self.consulted[path] = read[1]
        known = self._freezing_files.get(path)
        if known is None or known[0] != read[1]:
            tree = self._tree_of(read[0])
            found = tree is not None and bool(_freezing_walks(tree))
            known = self._freezing_files[path] = (read[1], found)
        return known[1]

    def named_by_importers(self, file: Path, name: str) -> bool:
        """Whether a file of the project that imports `file` writes `name`: a function of a
        library module that an importer may call is the library's, not its demo's."""
        return any(_mentions(other, name) for other in self._importers(file.absolute()))

    def _importers(self, file: Path, in_functions: bool = False) -> Iterator[Path]:
        """The project's other files that import `file` (at the top, or also in a function
        with `in_functions`): only those whose import lines name the module's file name are
        summarised."""
        imported = self._all_imported_files if in_functions else self._imported_files
        stem = _import_name(file)
        for other in self._import_words.get(stem, ()):
            if other != file and file in imported(other):
                yield other

    @cached_property
    def _import_words(self) -> dict[str, list[Path]]:
        """Word -> the project files whose import lines hold it, read once per process."""
        index: dict[str, list[Path]] = {}
        for path in self._project_files():
            for word in _import_line_words(path):
                index.setdefault(word, []).append(path)
        return index

    def always_called_without_grad(self, file: Path, function: str) -> bool:
        """Whether the project calls `function` of `file` (`f`, or `Class.method`), and only with
        grad off: under `no_grad`/`inference_mode` at the call, or from functions that are
        themselves only called with grad off, any number of calls up (`LIP.inference`, called
        as `self.inference(...)` by a base class's `multi_scale_inference`, which the test loop
        of another module calls under `no_grad`). A method's calls are found by its name, on
        any receiver: more calls than the true ones, so a yes stays a yes.

        Calls in test code do not count (no rule judges a test's speed), and a call made by a
        function already being followed (a wrapper's `self.base.generate(...)` inside a
        `generate` whose callers are found by the same name, a recursion) decides nothing: the
        calls entering that cycle do, and one at least must turn grad off.

        False when unknown: no call found, a call with grad on at module level or from a
        closure, a method read other than as a call, or too many files to read."""
        return self._off_everywhere(file.absolute(), function, 0, frozenset()) is True

    def _off_everywhere(
        self, file: Path, key: str, depth: int, busy: frozenset[tuple[Path, str]]
    ) -> bool | None:
        """True when every call of `key` outside test code runs with grad off, one at least
        where grad is turned off (not only through the functions in `busy`); None when every
        call is made only by functions in `busy` (a cycle, which another call must enter);
        False otherwise."""
        if (file, key) in busy:
            return None
        if not key or depth > _MAX_DEPTH:
            return False  # "": a closure or lambda, whose callers are not followed
        sites = self._method_sites(file, key) if "." in key else self._function_sites(file, key)
        if sites is None:  # a bound method handed over: where it goes decides
            return self._handed_off_everywhere(file, key, depth, busy)
        sites = [site for site in sites if not self._test_code(site[0])]
        if not sites:
            return False
        busy = busy | {(file, key)}
        grounded = False
        for where, off, owner, _ in sites:
            found = (
                True
                if off
                else owner is not None and self._off_everywhere(where, owner, depth + 1, busy)
            )
            if found is False:
                return False
            grounded = grounded or found is True
        return True if grounded else None

    def _plain_module_lineage(self, file: Path, klass: str) -> bool:
        """Whether `klass` of `file`, its bases and its subclasses derive only from project
        classes, `object` and `torch.nn.Module`, and no file of theirs calls `getattr(`: only
        the project's own code calls their methods, which `torch.nn.Module` never does but for
        its hooks."""
        lineage = self._lineage(file, klass)
        if len(lineage) > _MAX_DEPTH:
            return False
        for member_file, member in [*lineage, *self._subclasses(file, klass, 0)]:
            bases = self._written_bases(member_file, member)
            if bases is None or _mentions(member_file, "getattr("):
                return False
            for base in bases:
                if base == "object" or self._class_location(member_file, base) is not None:
                    continue
                summary = self._summary(member_file)
                if summary is None or _imported(base, summary.imports) != "torch.nn.Module":
                    return False
        return True

    def _test_code(self, file: Path) -> bool:
        """Whether `file` is test code by the engine's measure (`test_code.is_test_code`),
        judged once per state of the file (its modification time and size, as `_summary`
        judges its digest fresh: a file another question never summarised has no digest, and
        one summarised before an edit has a stale one). The answer rests on its text."""
        try:
            relative = file.absolute().relative_to(self.root.absolute()).as_posix()
            info = file.stat()
        except (ValueError, OSError):
            return False
        stamp = (info.st_mtime_ns, info.st_size)
        found = self._test_files.get(file)
        if found is None or found[0] != stamp:
            read = _read(file)
            if read is None:
                return False
            found = self._test_files[file] = (stamp, read[1], is_test_code(relative, read[0]))
        self.consulted[file] = found[1]
        return found[2]

    def runs_once(self, file: Path, function: str) -> bool:
        """Whether the project calls `function` of `file` (`f`, or `Class.method`, found by name
        as for grad modes) only from code that runs once per run: outside any loop, at module
        level, in a `main` or in functions themselves only called so, any number of calls up
        (`get_model_summary(model, x)` in a tool's `main()`). False when unknown."""
        return self._once_everywhere(file.absolute(), function, 0, frozenset())

    def never_called(self, file: Path, function: str) -> bool:
        """Whether no file of the project calls the module-level `function` of `file` (found
        as for `runs_once`: by its bare name in `file`, through imports elsewhere): an entry
        point run by hand or by a test runner."""
        return not self._function_sites(file.absolute(), function)

    def unreached(self, file: Path, name: str) -> bool:
        """Whether the module-level function or class `name` of `file` never runs: the project
        calls it only from module-level functions that never run themselves, or from methods of
        classes never built (itself included: a recursive helper, or `define_G` building a
        vendored `ResnetGenerator`), and every file
        that writes the name does so as a call, its own undecorated `def`/`class` line,
        `super(name, ...)`, an import or an `__all__` string (`_plain_mentions`), so it is never
        handed over (`mp.spawn(main_worker)`, `Fire(train)`), registered by a decorator, derived
        from or called through a module (`nets.build(...)`). False when unknown, when a notebook
        or a configuration file names it or one of the functions that build it (a demo notebook
        calling `blip_feature_extractor()`, a YAML's `type: Name`), when some module of the
        project looks names up from text (`eval(...)`, `globals()[...]`, `getattr(models,
        name)`: ReChorus builds its model class from a command-line name, pytorch-segmentation
        from a JSON configuration's) or when the project is too large to scan. A class named
        `Test...` is built by pytest, which collects such classes, whoever else calls it."""
        file = file.absolute()
        if name.startswith("Test") or file not in self._project_files():
            return False
        return not self._evaluates_names and self._unreached(file, name, 0, frozenset())

    def _hub_names(self, name: str) -> bool:
        """Whether a `hubconf.py` of the project writes `name`: `torch.hub.load` calls its
        entry points from outside."""
        return any(p.name == "hubconf.py" and _mentions(p, name) for p in self._project_files())

    @cached_property
    def _evaluates_names(self) -> bool:
        """Whether a module of the project looks a name up from text (`eval(...)`,
        `globals()[...]`, `getattr(module, name)`), so that any class may be built without
        being written. A lookup in another library's module (`models.__dict__[args.arch]`
        after `import torchvision.models as models`), or in a name the file never binds,
        reaches none of the project's."""
        return any(self._looks_up_project_names(path) for path in self._project_files())

    def _looks_up_project_names(self, file: Path) -> bool:
        try:
            data = file.read_bytes()
        except OSError:
            return False
        hits = list(_EVALUATES.finditer(data))
        if not hits:
            return False
        summary = self._summary(file, consult=False)
        if summary is None:
            return True
        bound: set[str] | None = None
        for hit in hits:
            root = _lookup_root(data, hit)
            if root is None:
                return True  # `eval`, `globals()[...]`, `importlib`: any name
            if root in summary.imports:
                if self._import_sources(file, *summary.imports[root]):
                    return True  # a module of the project
                continue
            if bound is None:
                tree = self._tree_of(data.decode("utf-8", "replace"))
                bound = _bound_names(tree) if tree is not None else None
            if bound is None or root in bound or root in _BUILTIN_NAMES:
                return True  # a parameter or variable: it may hold a project module
        return False

    def never_built(self, file: Path, name: str) -> bool:
        """Whether the module-level class `name` of `file` is never built, or the module-level
        function `name` never runs (`unreached`): a helper nothing calls, or that only dead
        code calls. Not a public name of a module that a declared distribution ships
        (`_distributed`): a library's users build its classes and call its functions. Nor one
        of a module no other module imports, nor one a package's `__init__.py` imports
        (`_used_in_part`): such a module is a script run by hand, or API offered to its users;
        an imported module shows which of its names the project leaves unused. False when
        unknown."""
        file = file.absolute()
        summary = self._summary(file)
        if summary is None or (not name.startswith("_") and self._distributed(file)):
            return False
        return self.unreached(file, name)

    def _unreached(
        self, file: Path, name: str, depth: int, busy: frozenset[tuple[Path, str]]
    ) -> bool:
        if (file, name) in busy:
            return True  # a cycle adds no caller from outside it
        if depth > _MAX_DEPTH or not name or "." in name:
            return False
        if (
            self._notebooks_mention(name, file)
            or self._configs_mention(name)
            or self._hub_names(name)
        ):
            return False  # a notebook, a configuration or torch.hub may call or build it
        calling = self._calling_files(name)  # the text first: most names fail it at once
        if calling is None:
            return False
        sites = self._function_sites(file, name)
        if not calling <= {file} | {where for where, _, _, _ in sites}:
            return False  # a call the imports do not resolve (`a.b.name(...)`) may reach it
        busy = busy | {(file, name)}
        return all(  # a method's call runs only if its class is built
            owner is not None and self._unreached(where, owner.partition(".")[0], depth + 1, busy)
            for where, _, owner, _ in sites
        ) and self._used_in_part(file, name)  # last: a script's, or offered to its users

    def _used_in_part(self, file: Path, name: str) -> bool:
        """Whether other modules of the project import `file` (at the top or in a function) and
        no package `__init__.py` among them imports `name`: only then does the project show
        which of the module's names it leaves unused."""
        importers = list(self._importers(file)) or list(self._importers(file, in_functions=True))
        return bool(importers) and not any(
            other.name == "__init__.py" and _mentions(other, name) for other in importers
        )

    def _calling_files(self, name: str) -> set[Path] | None:
        """The files of the project that call the bare `name`, when every file that writes it
        does so only in the plain forms `unreached` reads (a call of the bare name, its
        undecorated definition, `super(name, ...)`, an import line or a quoted `__all__`
        entry); None otherwise."""
        calling: set[Path] = set()
        for other in self._project_files():
            if not _mentions(other, name):
                continue
            read = _read(other)
            calls = _plain_text_mentions(read[0], name) if read is not None else None
            if read is None or calls is None:
                return None
            self.consulted[other] = read[1]
            if calls:
                calling.add(other)
        return calling

    def method_never_called(self, file: Path, klass: str, method: str) -> bool:
        """Whether the project calls the method `method` only on other classes than the
        module-level class `klass` of `file`, so that this one never runs (`Trainer.test_step`
        of one trainer, where the project's other trainers call their own `self.test_step`):
        some call of the name, none on a receiver that may hold the class (`_method_sites`),
        the name never read other than as a call nor written in a notebook of the project; the
        class, its bases and its subclasses derive only from project classes and `object`, so
        no framework calls it as a hook; and no file of its lineage looks attributes up by a
        computed name (`getattr`). A method nothing calls at all is API (its users call it).
        False when unknown, or when the project is too large to scan."""
        file = file.absolute()
        if file not in self._project_files() or self._notebooks_mention(method):
            return False  # not scanned, or a notebook may call it
        lineage = self._known_lineage(file, klass)
        if lineage is None:
            return False
        for member_file, member in [*lineage, *self._subclasses(file, klass, 0)]:
            bases = self._written_bases(member_file, member)
            if bases is None or _mentions(member_file, "getattr("):
                return False
            if any(b != "object" and self._class_location(member_file, b) is None for b in bases):
                return False  # a framework's or another library's class may call it as a hook
        return (
            self._calls_method_name(method) and self._method_sites(file, f"{klass}.{method}") == []
        )

    def attribute_set_only_in(self, file: Path, klass: str, attribute: str) -> bool:
        """Whether no other file of the project (nor a notebook) may write the attribute
        `attribute` of an instance of the class `klass` of `file`, so that what its constructor
        sets holds for the object's life: none writes `x.attribute =` (or an augmented
        assignment) on another receiver than `self`, nor on `self` where it may derive from
        the class (it writes the class's name), nor names the attribute in a `setattr` or
        updates an object's `__dict__`/`vars()`. False when unknown, or when the project is
        too large to scan."""
        file = file.absolute()
        files = self._project_files()
        if file not in files:
            return False
        word = re.escape(attribute.encode())
        written = re.compile(
            rb"(\bself)?\.\s*" + word + rb"\s*(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)"
        )
        for other in [*files, *self._notebooks]:
            if other == file:
                continue
            try:
                data = other.read_bytes()
            except OSError:
                return False
            if attribute.encode() not in data:
                continue
            writes = [m.group(1) is not None for m in written.finditer(data)]
            if writes and (not all(writes) or klass.encode() in data):
                return False
            if _COMPUTED_WRITES.search(data):
                return False
        return True

    def default_never_overridden(
        self, file: Path, function: str, parameter: str, position: int | None
    ) -> bool:
        """Whether every call of the module-level `function` of `file` leaves `parameter` (at
        `position` among the positional ones, None when keyword-only) at its default: some
        file of the project calls the name, no call of it (bare, or as any receiver's
        attribute: `dist_utils.wrap_model(...)`) passes the parameter by keyword or enough
        arguments to reach it by position, or spreads `*args`/`**kwargs`, and every other
        mention of the name is its own undecorated `def`, an import not renamed or an
        `__all__` entry (`_plain_text_mentions`), so it is never handed over
        (`partial(wrap_model, dist_mode="dp")`). A module-level class's name stands for its
        `__init__` (`position` then counts the arguments after `self`): its calls build it, and
        a subclass (`class Big(Net):`) is a mention that may pass the parameter through
        `super().__init__`; a configuration file of the project (YAML, JSON, TOML) that names
        the class may build it with other arguments (`target: gnn.Net`), so it is unknown.
        Only the project's calls are known, so a public function of a module that a declared
        distribution ships (`_distributed`), which other code installs and calls, is never
        judged by them; a `_private` one is. False when unknown, when a notebook names the
        function or when the project is too large to scan."""
        file = file.absolute()
        if file not in self._project_files() or self._notebooks_mention(function, file):
            return False
        if not function.startswith("_") and self._distributed(file):
            return False
        summary = self._summary(file)
        if summary is None or (function in summary.classes and self._configs_mention(function)):
            return False
        calling = False
        for other in self._project_files():
            if not _mentions(other, function) or self._names_another(other, file, function):
                continue
            read = _read(other)
            mentions = (
                _plain_text_mentions(read[0], function, attributes=True)
                if read is not None
                else None
            )
            if read is None or mentions is None:
                return False
            self.consulted[other] = read[1]
            if not mentions:
                continue
            tree = self._tree_of(read[0])
            left = (
                _leave_default(tree, function, parameter, position) if tree is not None else False
            )
            if left is False:
                return False
            calling = calling or left is True  # None: a comment or string wrote the call
        return calling

    def _distributed(self, file: Path) -> bool:
        """Whether a distribution declared in a folder from `file`'s up (setup.py, setup.cfg, a
        pyproject.toml with a `[project]`, `[tool.poetry]` or `[build-system]` table; up to the
        git root, past the project root: an example folder with its own requirements.txt
        inside an installed package is still in the package) may ship `file` (`_ships`)."""
        folder = file.parent
        while True:
            texts = {}
            for name in ("setup.py", "setup.cfg", "pyproject.toml"):
                try:
                    texts[name] = (folder / name).read_text(errors="replace")
                except OSError:
                    continue
            declared = "setup.py" in texts or "setup.cfg" in texts
            if declared or _DISTRIBUTION_TABLE.search(texts.get("pyproject.toml", "")):
                if _ships(folder, file, "\n".join(texts.values())):
                    return True
            if (folder / ".git").exists() or folder.parent == folder:
                return False
            folder = folder.parent

    def _names_another(self, other: Path, file: Path, name: str) -> bool:
        """Whether `other`'s word `name` cannot be `file`'s: no import of `other` (at the top,
        in a function, a star import) resolves to `file`'s module, nor to a project module that
        may pass `file`'s name on (one that star-imports, or writes the name without defining
        its own at module level), so its `name` is another module's or its own (sibling example
        folders that each define a `GNN`, a message that says "GNN"). False when unknown."""
        if other == file:
            return False
        summary = self._summary(other)
        calls = self._summary(other, consult=False, part="calls")
        if summary is None or calls is None:
            return False
        text = _read(other)
        defines = text is not None and _defines_at_top(text[0], name)
        imported = [*summary.imports.values(), *calls.local_imports.values()]
        for level, target in [*imported, *((level, f"{m}.*") for level, m in summary.stars)]:
            parent = target.rpartition(".")[0]  # `from parent import target`, or a star's module
            for module in (target, parent) if parent or level else (target,):
                found = self._module_file(other, level, module, added_paths=True)
                if found is None:
                    continue
                found = found.absolute()
                if found == file:
                    return False
                if not defines and self._passes_on(found, file, name, 0):
                    return False  # a re-export of `file`'s name may be what it calls
        return True

    def _passes_on(
        self, module: Path, file: Path, name: str, depth: int, seen: dict[Path, int] | None = None
    ) -> bool:
        """Whether the project module `module` may bind `file`'s `name`: it is `file`, writes
        the word without defining its own at module level, or star-imports a project module
        that may (unknown at depth). `seen`: the shallowest depth each module was asked at, so
        modules that star-import each other are read once, not once per path."""
        if module == file:
            return True
        seen = {} if seen is None else seen
        if seen.get(module, _MAX_DEPTH + 1) <= depth:
            return False  # asked already with at least this much depth left: it said no
        seen[module] = depth
        summary = self._summary(module)
        read = _read(module)
        if summary is None or read is None or depth > _MAX_DEPTH:
            return True
        word = re.search(rf"(?<!\w){re.escape(name)}\b", read[0])
        if word and not _defines_at_top(read[0], name):
            return True
        for level, star in summary.stars:
            found = self._module_file(module, level, star, added_paths=True)
            if found is not None and self._passes_on(found.absolute(), file, name, depth + 1, seen):
                return True
        return False

    def _configs_mention(self, name: str) -> bool:
        """Whether a configuration file of the project (YAML, JSON, TOML, cfg) writes `name`:
        a class a configuration names may be built from it (`instantiate(cfg.model)`). The
        files are read once per project (`_config_words`); a name that is no run of word
        characters is looked for in their bytes."""
        if not _CONFIG_WORD.fullmatch(name.encode()):
            self._project_files()  # the same walk lists them
            return any(_mentions(path, name) for path in self._configs)
        return name.encode() in self._config_words

    @cached_property
    def _config_words(self) -> bytes:
        """The distinct words of the project's configuration files (runs of word characters
        holding one that is no digit), one a line: a name made of word characters is in a
        file's bytes exactly when it is inside one of its words, so one read of each file
        answers every name, and a data file's numbers are not kept."""
        self._project_files()  # the same walk lists them
        words: set[bytes] = set()
        for path in self._configs:
            try:
                words.update(_CONFIG_WORD.findall(path.read_bytes()))
            except OSError:
                continue
        return b"\n".join(sorted(words))

    def private_method_unused(self, file: Path, klass: str, method: str) -> bool:
        """Whether the private method `method` (`_make_head`, not a dunder nor a `_sunder_`
        protocol such as IPython's `_repr_html_`) of the module-level
        class `klass` of `file` never runs because nothing names it: every word `method` in
        the project's files is in a comment or an undecorated `def` line (`_only_defined`: no
        call, no read, no string), no notebook writes it, no file of the class's lineage or
        its subclasses looks attributes up by a computed name (`getattr`), and those classes
        derive only from project classes, `object` and `torch.nn.Module`, whose own code calls
        no private method of a subclass but its hooks (`_MODULE_HOOKS`, never judged). A
        framework base may call a private hook; a public method nothing calls is API. False
        when unknown, or when the project is too large to scan."""
        file = file.absolute()
        if (
            not method.startswith("_")
            or method.startswith("__")
            or method.endswith("_")  # `_repr_html_`: a protocol another library calls
            or method in _MODULE_HOOKS
            or file not in self._project_files()
            or self._notebooks_mention(method)
        ):
            return False
        if not self._plain_module_lineage(file, klass):
            return False
        for other in self._project_files():
            if not _mentions(other, method):
                continue
            read = _read(other)
            if read is None or not _only_defined(read[0], method):
                return False
            self.consulted[other] = read[1]
        return True

    def _calls_method_name(self, method: str) -> bool:
        """Whether some file of the project calls a method named `method` (`x.method(...)`)."""
        for other in self._project_files():
            if not _mentions(other, method):
                continue
            summary = self._summary(other, consult=False, part="calls")
            if summary is not None and any(
                "." in callee and callee.rpartition(".")[2] == method
                for callee, _, _, _ in summary.calls
            ):
                return True
        return False

    def _notebooks_mention(self, name: str, file: Path | None = None) -> bool:
        """Whether a notebook of the project writes `name` (its calls are not summarised). With
        `file`, whose module-level `name` is meant, only a notebook that also writes the name of
        that module or of a module importing it counts: it can reach the name only through an
        import (a tutorial defining its own `class Model` builds another)."""
        self._project_files()  # the same walk lists the notebooks
        writing = [path for path in self._notebooks if _mentions(path, name)]
        if not writing or file is None:
            return bool(writing)
        stems = {_import_name(file)} | {_import_name(other) for other in self._importers(file)}
        return any(_mentions(path, stem) for path in writing for stem in stems)

    def _once_everywhere(
        self,
        file: Path,
        key: str,
        depth: int,
        busy: frozenset[tuple[Path, str]],
        rarely: bool = False,
    ) -> bool:
        """`runs_once`, and with `rarely` `runs_rarely`: a call under a periodic guard
        (`_GUARDED`) counts as rare whatever runs it."""
        if not key or depth > _MAX_DEPTH or (file, key) in busy:
            return False
        if key.rpartition(".")[2] in RUN_ONCE_NAMES:
            return True
        sites = self._method_sites(file, key) if "." in key else self._function_sites(file, key)
        if not sites:
            return False
        busy = busy | {(file, key)}
        return all(
            rarely
            and bool(repeats & _GUARDED)
            or not repeats & _LOOPED
            and (
                owner is None
                or rarely
                and self._runs_training(where, owner)
                or self._once_everywhere(where, owner, depth + 1, busy, rarely)
            )
            for where, _, owner, repeats in sites
        )

    def _runs_training(self, file: Path, key: str) -> bool:
        """Whether `key` (`f`, `Class.method`) of `file` runs a training loop over data itself
        (`_Summary.training_runs`): what it calls outside its loops runs once per training run
        (or per epoch), however often a search or a schedule calls it."""
        summary = self._summary(file, part="scopes") if key else None
        return summary is not None and key in summary.training_runs

    def runs_rarely(self, file: Path, function: str) -> bool:
        """Whether the project calls `function` of `file` (found as for `runs_once`) only from
        code that runs once per run or now and then: every call, any number of calls up, is
        made outside loops in code that runs once, or under a periodic guard with no loop
        between it and the call (`if self.check_frequency(step):` around the image logging a
        per-step hook runs, `_GUARDED`). False when unknown."""
        return self._once_everywhere(file.absolute(), function, 0, frozenset(), rarely=True)

    def _function_sites(self, file: Path, function: str) -> list[_Site]:
        """The project's calls of the module-level `function` of `file`: through imports in the
        other files, by its bare name in `file` itself."""
        sites: list[_Site] = []
        for other in self._project_files():
            if not _mentions(other, function):
                continue
            summary = self._summary(other, consult=False, part="calls")
            if summary is None:
                continue
            if other == file:
                found = [
                    (other, off, owner, looped)
                    for c, off, owner, looped in summary.calls
                    if c == function
                ]
            else:
                found = self._call_targets(other, summary).get((file, function), [])
            if found:
                self.consulted[other] = self._digests[other][2]
                sites += found
        return sites

    def _method_sites(self, file: Path, key: str) -> list[_Site] | None:
        """Every call in the project of a method named like `key`'s (`x.name(...)`) on a receiver
        that may hold an instance of `key`'s class of `file` (`_may_reach`), or None when some
        file reads the name other than as a call (a bound method handed over)."""
        klass, _, name = key.rpartition(".")
        sites: list[_Site] = []
        for other in self._project_files():
            if not _mentions(other, name):
                continue
            summary = self._summary(other, consult=False, part="calls")
            if summary is None:
                continue
            self.consulted[other] = self._digests[other][2]
            if name in summary.attribute_reads:
                return None
            sites += [
                (other, off, owner, looped)
                for callee, off, owner, looped in summary.calls
                if "." in callee
                and callee.rpartition(".")[2] == name
                and self._may_reach(other, callee, owner, (file, klass))
            ]
        return sites

    def _may_reach(
        self, file: Path, callee: str, owner: str | None, target: tuple[Path, str]
    ) -> bool:
        """Whether `callee` (`self.m`, `x.m`), called in `file` by the function `owner`, may
        run the method `m` of the project class `target`: not when no instance of `target` can
        reach `file` (`_may_hold_instances`), nor when its receiver is `self` of a class
        unrelated to `target` (`_related`), or a local name bound only to instances built by
        `builds_unrelated` calls. Unknown receivers may."""
        if not self._may_hold_instances(file, target[0]):
            return False
        receiver = callee.rpartition(".")[0]
        if receiver == _SUPER:  # a base's method: never the calling class's own
            klass = (owner or "").partition(".")[0]
            return owner is None or (
                (file.absolute(), klass) != target
                and ("." not in owner or self._related(file, klass, target))
            )
        if not owner:
            return True
        if "." in receiver:
            head, _, attribute = receiver.partition(".")
            return not (
                head == "self"
                and "." in owner
                and attribute.isidentifier()
                and self._attribute_unrelated(file, owner.partition(".")[0], attribute, target)
            )
        if receiver == "self":
            klass = owner.partition(".")[0]
            return "." not in owner or self._related(file, klass, target)
        callees = self._built_locals(file).get((owner, receiver))
        return callees is None or not all(
            self._builds_unrelated(file, built, target) for built in callees
        )

    def _may_hold_instances(self, file: Path, source: Path) -> bool:
        """Whether code in `file` may hold an instance of a class defined in `source`: only a
        module whose imports reach `source` (directly or through other modules, at the top or
        in a function) can build one or name a subclass, and only such a module that imports
        `file` (or imports a module that does) can hand one to `file`'s functions. An example
        script that imports only another library (`AutoModel.from_pretrained(...)`) and that no
        module of the project imports calls `model.generate(...)` on that library's objects,
        whatever the receiver is named.

        True when unknown: `file` or a module on the way up from it opens to code outside the
        project (`_opens_to_users`: it unpickles whole objects, a configuration or a notebook
        names it, or it is a library module nothing in the project imports), or the walk up
        meets more importers than `_MAX_DEPTH` hops allow. A module that imports others by a
        computed name (`importlib.import_module(path)`) counts as importing `file`, and holds
        an instance only if its own imports reach `source`."""
        file, source = file.absolute(), source.absolute()
        if file == source:
            return True
        return self._remembered(
            self._holds_memo, (file, source), lambda: self._may_hold_now(file, source)
        )

    def _may_hold_now(self, file: Path, source: Path) -> bool:
        seen = {file}
        frontier = [file]
        while frontier:
            if len(seen) > 4 * _MAX_DEPTH:
                return True
            following = []
            for current in frontier:
                if self._opens_to_users(current) or source in self._import_closure(current):
                    return True
                for importer in [*self._importers(current, in_functions=True), *self._dynamic]:
                    if importer not in seen:
                        seen.add(importer)
                        following.append(importer)
            frontier = following
        return False

    def _opens_to_users(self, file: Path) -> bool:
        """Whether code outside the project's imports may hand `file`'s functions any object:
        it unpickles whole objects, a configuration file names its module or a notebook
        imports it (`from pkg.stem import ...`, `import stem`), or no
        module of the project imports it and it is no script (no `__main__` guard): a library
        module its users import (`testval(dataset, loader, model)`)."""
        if file not in self._opens_memo:
            stem = _import_name(file)
            self._opens_memo[file] = (
                _holds(file, _UNPICKLES)
                or self._configs_mention(stem)
                or self._notebooks_import(stem)
                or (
                    not _holds(file, _MAIN_GUARD)
                    and next(self._importers(file, True), None) is None
                )
            )
        return self._opens_memo[file]

    def _notebooks_import(self, stem: str) -> bool:
        """Whether a notebook's import names the module `stem` as one part of a dotted name
        (`from pkg.stem import ...`, `import stem`): a stem made of word characters is looked
        up in the parts the notebooks import, read once per process (`_notebook_imports`)."""
        name = stem.encode()
        if _ASCII_WORD.fullmatch(name):
            return name in self._notebook_imports
        imports = re.compile(rb"(?:import|from)\s++[\w.]*?\b" + re.escape(name) + rb"\b")
        self._project_files()  # the same walk lists the notebooks
        return any(_holds(notebook, imports) for notebook in self._notebooks)

    @cached_property
    def _notebook_imports(self) -> frozenset[bytes]:
        """The parts of every dotted name the project's notebooks import (`from a.b import c`
        gives `a`, `b`; `import c` gives `c`)."""
        self._project_files()  # the same walk lists the notebooks
        found: set[bytes] = set()
        for notebook in self._notebooks:
            try:
                text = notebook.read_bytes()
            except OSError:
                continue
            found.update(part for name in _IMPORTED_NAME.findall(text) for part in name.split(b"."))
        return frozenset(found)

    def _import_closure(self, file: Path) -> frozenset[Path]:
        """The project files `file` imports, directly or through the files it imports (at the
        top or in a function), with the `__init__.py` of every package above each of them:
        importing `pkg.models.zoo` runs `pkg/models/__init__.py` first, which may import every
        model of the package (a registry filled as its modules load)."""
        if file not in self._closures:
            self._closures[file] = self._import_closure_now(file)
        return self._closures[file]

    def _import_closure_now(self, file: Path) -> frozenset[Path]:
        found: set[Path] = set()
        frontier = [file]
        while frontier:
            following = []
            for current in frontier:
                for module in self._all_imported_files(current):
                    for loaded in (module, *self._packages_above(module)):
                        if loaded not in found:
                            found.add(loaded)
                            following.append(loaded)
            frontier = following
        return frozenset(found)

    def _packages_above(self, module: Path) -> list[Path]:
        """The `__init__.py` files of the project's packages holding `module`, innermost first."""
        root = self.root.absolute()
        found = []
        folder = module.parent
        while folder != root and root in folder.parents:
            init = folder / "__init__.py"
            if not init.is_file():
                break
            if init != module:
                found.append(init)
            folder = folder.parent
        return found

    @cached_property
    def _dynamic(self) -> list[Path]:
        """The project's files that import modules by a computed name (`import_module(name)`,
        `__import__(name)`, `runpy.run_path`): any module may be one they import."""
        return [path for path in self._project_files() if _holds(path, _IMPORTS_BY_NAME)]

    def _attribute_unrelated(
        self, file: Path, klass: str, attribute: str, target: tuple[Path, str]
    ) -> bool:
        """Whether `self.<attribute>` in a method of `klass` of `file` cannot hold an instance
        of the project class `target`: every class `self` may be (`klass`, its project bases
        and its subclasses, none deriving from a class outside the project, which might bind
        it) binds it only to what calls build (`receivers.attribute_builders`), one at least,
        each an instance of a class unrelated to `target` (`builds_unrelated`), and no file of
        the project writes it on another receiver (`trainer.model = policy`)."""
        file = file.absolute()
        return self._remembered(
            self._attribute_memo,
            (file, klass, attribute, target),
            lambda: self._attribute_unrelated_now(file, klass, attribute, target),
        )

    def _attribute_unrelated_now(
        self, file: Path, klass: str, attribute: str, target: tuple[Path, str]
    ) -> bool:
        family = [*self._lineage(file, klass), *self._subclasses(file, klass, 0)]
        if len(family) > 4 * _MAX_DEPTH:
            return False
        callees: list[tuple[Path, str]] = []
        for member_file, member in family:
            bases = self._written_bases(member_file, member)
            if bases is None or any(
                b not in _PLAIN_BASES and self._class_location(member_file, b) is None
                for b in bases
            ):
                return False
            node = self._class_node(member_file, member)
            built = attribute_builders(node, attribute) if node is not None else None
            if built is None:
                return False
            callees += [(member_file, callee) for callee in built]
        if not callees or self._written_elsewhere(attribute):
            return False
        return all(self._builds_unrelated(where, callee, target) for where, callee in callees)

    def _written_elsewhere(self, attribute: str) -> bool:
        """Whether some project file outside test code writes `<attribute>` on a name other
        than `self` or on one attribute of a name (`trainer.model = policy`, `self.runner.model
        = policy`; not `cfg.model.tokenizer.model = path`, a nested configuration), or sets it
        by name (`setattr(trainer, "model", m)`)."""
        return self._remembered(
            self._written_memo, attribute, lambda: self._written_elsewhere_now(attribute)
        )

    def _written_elsewhere_now(self, attribute: str) -> bool:
        pattern = re.compile(
            rf"(?<![\w.\])])((?:[A-Za-z_]\w*\.)?[A-Za-z_]\w*)\.{re.escape(attribute)}"
            rf"\s*(?::[^=\n]*)?=(?!=)"
        )
        for other in self._project_files():
            if not _mentions(other, attribute) or self._test_code(other):
                continue
            read = _read(other)
            if read is None:
                return True
            self.consulted[other] = read[1]
            if any(m.group(1) != "self" for m in pattern.finditer(read[0])):
                return True
            if re.search(rf"setattr\([^,()]+,\s*['\"]{re.escape(attribute)}['\"]", read[0]):
                return True
        return False

    def _built_locals(self, file: Path) -> dict[tuple[str, str], tuple[str, ...]]:
        """`receivers.built_locals` of `file`, read and parsed only when its content was not
        asked before."""
        known = self._digests.get(file)
        found = cached_locals(known[2]) if known is not None else None
        if found is not None:
            return found
        read = _read(file)
        tree = self._tree_of(read[0]) if read is not None else None
        return built_locals(read[1], tree) if read is not None and tree is not None else {}

    def may_be_instance(self, file: Path, klass: str, of: str) -> bool:
        """Whether `self` in a method of the class `klass` of `file` may be an instance of the
        class `of` of the same file (see `_related`): a method of `of` called as `self.m()`
        there may run."""
        return self._related(file, klass, (file.absolute(), of))

    def builds_unrelated(self, file: Path, callee: str, of: str) -> bool:
        """Whether what the call of `callee` (as written in `file`: `op.WrapperPython`,
        `Trainer`) builds cannot be an instance of the class `of` of `file`: an instance of a
        class of another library, or of a project class unrelated to `of`."""
        return self._builds_unrelated(file.absolute(), callee, (file.absolute(), of))

    def _builds_unrelated(self, file: Path, callee: str, target: tuple[Path, str]) -> bool:
        callee = constructed_class(callee)  # `OtherLM.load_from_checkpoint` builds an `OtherLM`
        location = self._class_location(file, callee)
        if location is None:
            return self._outside_class(file, callee)
        return not self._related(*location, target)

    def _outside_class(self, file: Path, name: str) -> bool:
        """Whether `name` as written in `file` names a class of another library: imported
        absolutely (at the top of the file or in a function) from a package the project has no
        module or folder of, and named as classes are (`op.WrapperPython`, `nn.Module`): a
        factory function might return anything."""
        summary = self._summary(file, part="calls")
        if summary is None or not name.rpartition(".")[2][:1].isupper():
            return False
        head = name.partition(".")[0]
        imported = summary.imports.get(head) or summary.local_imports.get(head)
        if imported is None or imported[0]:
            return False
        return self._outside_name(f"{imported[1]}.{name.partition('.')[2]}".strip("."))

    def _outside_name(self, full: str) -> bool:
        """Whether the absolute dotted name `full` (`openpose.pyopenpose.WrapperPython`) cannot
        be the project's: no folder of the project bears its package's name, and no module of
        that name (`tools/utils/openpose.py`, importable from a folder put on `sys.path`) writes
        the name that follows it."""
        package, _, rest = full.partition(".")
        if package in self._folder_names:
            return False
        following = rest.partition(".")[0]
        return all(
            following and not _mentions(path, following)
            for path in self._files_by_name.get(package, ())
        )

    @cached_property
    def _folder_names(self) -> frozenset[str]:
        """The names of the folders that hold the project's files, below its root."""
        root = self.root.absolute()
        return frozenset(
            part for path in self._project_files() for part in path.relative_to(root).parts[:-1]
        )

    def _related(self, file: Path, klass: str, target: tuple[Path, str]) -> bool:
        """Whether `self` in a method of `klass` of `file` may be an instance of the class
        `target`: `klass`, one of its subclasses (in any module) or `target` itself derives
        from the other, or a base of theirs is not known (then they may)."""
        file = file.absolute()
        return self._remembered(
            self._related_memo,
            (file, klass, target),
            lambda: self._related_now(file, klass, target),
        )

    def _remembered(
        self, memo: dict[_Key, tuple[bool, dict[Path, str]]], key: _Key, answer: Callable[[], bool]
    ) -> bool:
        """`answer()` once per key for the whole process, kept in `memo` with the files it
        consulted: each time it is asked, those files are consulted again (the answer rests on
        them), and the ones consulted before it stay so."""
        if key not in memo:
            before = dict(self.consulted)
            self.consulted.clear()
            found = answer()
            memo[key] = (found, dict(self.consulted))
            self.consulted.update(before)
        found, consulted = memo[key]
        self.consulted.update(consulted)
        return found

    def _related_now(self, file: Path, klass: str, target: tuple[Path, str]) -> bool:
        target_bases = self._known_lineage(*target)
        if target_bases is None or (file, klass) in target_bases:
            return True
        for member in [(file, klass), *self._subclasses(file, klass, 0)]:
            lineage = self._known_lineage(*member)
            if lineage is None or target in lineage:
                return True
        return False

    def _known_lineage(self, file: Path, klass: str) -> list[tuple[Path, str]] | None:
        """`klass` and its project bases (`_lineage`), or None when some base is neither a
        project class nor a class of another library (`_outside_class`), nor `object`."""
        lineage = self._lineage(file, klass)
        if len(lineage) > _MAX_DEPTH:
            return None
        for member_file, member in lineage:
            bases = self._written_bases(member_file, member)
            if bases is None:
                return None
            for base in bases:
                if (
                    base != "object"
                    and self._class_location(member_file, base) is None
                    and not self._outside_class(member_file, base)
                ):
                    return None
        return lineage

    def _written_bases(self, file: Path, klass: str) -> list[str] | None:
        """The bases of the module-level class `klass` of `file` as written (`Generic[T]` as
        `Generic`), or None when one is not a dotted name or the class is not found."""
        read = _read(file)
        tree = self._tree_of(read[0]) if read is not None else None
        classes = [n for n in tree.body if isinstance(n, ast.ClassDef)] if tree is not None else []
        node = next((n for n in classes if n.name == klass), None)
        if node is None:
            return None
        bases = [ast_dotted(b.value if isinstance(b, ast.Subscript) else b) for b in node.bases]
        return [b for b in bases if b] if all(bases) else None

    def called_per_step(
        self, file: Path, keys: frozenset[str], every_update: bool = False
    ) -> frozenset[str]:
        """Which of `file`'s functions, named by `keys` (`f`, `Class.method`, or `factory()`: the
        closure `factory` returns), the project's other files call every step: from the body
        of a loop over a loader, or from any loop (not over epochs) when the function runs a
        training step itself (also through a method of its own class: `self.optimize(loss)`).
        With `every_update`, also from a guard in such a loop whose branch steps the optimizer
        (gradient accumulation), which runs with every update. A call reaches a function
        through imports (star imports of project modules too), through what a name is built by
        (`score = Score(c)`, `train = train_fns.make_train_fn(G, D)`) or annotated with
        (`metrics: Metrics`), through `self.<attribute>` set anywhere in the caller's class
        hierarchy (`self.model = DCGAN()` in a subclass's method), and through methods
        inherited from classes in other modules. Files that call none of the names in a loop
        are never summarised (`_word_index`)."""
        file = file.absolute()
        words = {key.rsplit(".", 1)[-1] for key in keys if not key.endswith("()")}
        factories = {key.removesuffix("()") for key in keys if key.endswith("()")}
        # An instance call runs `__call__`/`forward`: its callers build the class somewhere.
        factories |= {key.split(".")[0] for key in keys if key.endswith(_INSTANCE_CALLS)}
        wanted = {(file, key) for key in keys}
        found: set[str] = set()
        for other in self._loop_callers(file, words, factories):
            summary = self._summary(other, consult=False, part="scopes")
            targets = self._per_step_targets(other, summary)[every_update] if summary else set()
            hits = targets & wanted
            if hits:
                self.consulted[other] = self._digests[other][2]
                found |= {key for _, key in hits}
        for other in self._stepping_importers(file, words):
            hits = self._stepping_call_targets(other) & wanted
            if hits:
                self.consulted[other] = self._digests[other][2]
                found |= {key for _, key in hits}
        return frozenset(found)

    def _stepping_importers(self, file: Path, words: AbstractSet[str]) -> list[Path]:
        """The project's other files that import `file`, write one of `words` and may run a
        training step (`_text_steps`): where a function that steps may call one of them."""
        if not words:
            return []
        stem = _import_name(file)
        found = []
        for other in self._import_words.get(stem, ()):  # the texts first, the imports last
            try:
                data = other.read_bytes()
            except OSError:
                continue
            if (
                other != file
                and any(word.encode() in data for word in words)
                and (steps := self._steps_in_text(other)) is not False
                and file in self._imported_files(other)
                and (steps or self._steps_through_attributes(other))
            ):
                found.append(other)
        return found

    def _stepping_call_targets(self, file: Path) -> set[tuple[Path, str]]:
        """The project functions that `file`'s training steps call: a function or method that
        runs one training step per call itself (`_steps_once`: an update's `backward()` and
        `step()`, or `self._actor_opt(loss)` of a project optimizer class) is run once per step
        by whoever calls it, and so is each call in its body that no periodic guard holds back
        (`metrics.update(tools.tensorstats(x))` in an actor's update)."""
        summary = self._summary(file, consult=False, part="calls")
        if summary is None:
            return set()
        known = self._stepper_targets.get(file)
        if known is not None and known[0] is summary:
            return known[1]
        found: set[tuple[Path, str]] = set()
        steps: dict[str, bool] = {}
        for callee, _, owner, how in summary.calls:
            if not owner or how & _GUARDED:
                continue
            if owner not in steps:
                steps[owner] = self._steps_once(file, owner, summary)
            if steps[owner]:
                klass = owner.partition(".")[0] if "." in owner else None
                found.update(
                    self._loop_call_targets(file, summary, _LoopCall(callee, "batch", klass, ()))
                )
        self._stepper_targets[file] = (summary, found)
        return found

    def overrides_called_per_step(self, file: Path, key: str) -> bool:
        """Whether the method `key` (`Class.method`) of `file` overrides one that a base class's
        loop calls every step as `self.<method>(...)` (a base's `train()` looping over its loaders
        and calling `self.train_step(**batch)`, which each algorithm's subclass defines), in the
        base's own module or from another: the subclass's method is what runs."""
        klass, _, method = key.partition(".")
        if not method or "." in method:
            return False
        file = file.absolute()
        steps: bool | None = None  # asked of the file's own scopes only when a base's loop calls it
        for base_file, base in self._lineage(file, klass)[1:]:
            summary = self._summary(base_file, part="scopes")
            calls = (
                [
                    c
                    for c in summary.loop_calls
                    if c.owner == base and c.callee == "self." + method and c.kind != "update"
                ]
                if summary is not None
                else []
            )
            batch = any(c.kind == "batch" for c in calls)
            if calls and not batch and steps is None:
                steps = self._steps_itself(file, key)
            if calls and (batch or steps):
                self.consulted[base_file] = self._digests[base_file][2]
                return True
            if self.called_per_step(base_file, frozenset({f"{base}.{method}"})):
                return True
        return False

    def builds_elsewhere(self, file: Path, classes: AbstractSet[str]) -> bool:
        """Whether another file of the project binds the result of calling one of `classes` (`self.criterion =
        RobustLoss()`): the gate, read from texts, before `forward_called_per_step`."""
        called = self._word_index[2]
        file = file.absolute()
        return any(other != file for name in classes for other in called.get(name, ()))

    def forward_called_per_step(self, file: Path, klass: str) -> bool:
        """Whether another module calls an instance of the module class `klass` of `file` every
        step, so that its `forward` runs every step: `self.criterion(out, y)` where
        `self.criterion = RobustLoss()` in the caller's class, called in a loop over a loader,
        in a module's `forward` under `if self.training:` (`_ScopeWalk`), or in a method that
        steps the optimizer itself (a training step, whoever calls it)."""
        file = file.absolute()
        for other in self._word_index[2].get(klass, ()):
            summary = self._summary(other, consult=False, part="calls") if other != file else None
            if summary is None:
                continue
            self._summary(other, consult=False, part="scopes")
            sites = [(c.callee, c.owner) for c in summary.loop_calls if c.kind == "batch"]
            sites += [
                (callee, owner.partition(".")[0])
                for callee, _, owner, _ in summary.calls
                if owner and "." in owner and owner in summary.stepping
            ]
            steps = _framework_steps(summary)
            sites += [
                (callee, owner.partition(".")[0])
                for callee, _, owner, _ in summary.calls
                if owner in steps
            ]
            for callee, owner in sites:
                parts = callee.split(".")
                if (
                    owner
                    and len(parts) == 2
                    and parts[0] == "self"
                    and (file, klass) in self._attribute_classes(other, owner, parts[1])
                ):
                    self.consulted[other] = self._digests[other][2]
                    return True
        return False

    @cached_property
    def names_accelerator(self) -> bool:
        """Whether some file of the project names CUDA: code that other modules run every step
        then may run on a GPU although its own module names no device (read from texts)."""
        return any(_mentions(path, "cuda") for path in self._project_files())

    def may_call_in_loops(self, file: Path, names: set[str], factories: set[str]) -> bool:
        """Whether another file of the project calls one of `names` (functions of `file`) on a
        line inside a loop (over a loader, unless `file` may run a training step itself), or
        calls one of `factories` (functions of `file` that define functions) anywhere: the
        gate, read from texts, before any `called_per_step` question about `file`."""
        file = file.absolute()
        return bool(self._loop_callers(file, names, factories)) or bool(
            self._stepping_importers(file, names)
        )

    def _text_steps(self, file: Path) -> bool:
        """Whether `file` may run a training step (`.backward(`, `.step(` in its text), or
        run one through a project class a `self.` attribute holds (`self._model_opt(loss)`),
        which is asked of its summary only where other files call its names in some loop."""
        steps = self._steps_in_text(file)
        return steps is True or (steps is None and self._steps_through_attributes(file))

    def _steps_in_text(self, file: Path) -> bool | None:
        """Whether `file`'s text runs a training step (`.backward(`, `.step(`): True; None when
        only its summary can tell (`_steps_through_attributes`); False when it cannot be read."""
        try:
            info = file.stat()
            stamp = (info.st_mtime_ns, info.st_size)
            known = self._step_texts.get(file)
            if known is None or known[0] != stamp:
                text = file.read_bytes().decode("utf-8", "replace")
                known = self._step_texts[file] = (stamp, _STEP_TEXT.search(text) is not None)
        except OSError:
            return False
        return True if known[1] else None

    def _steps_through_attributes(self, file: Path) -> bool:
        """Whether a method of `file` calls what a `self.` attribute holds, of a project class
        whose method runs a training step itself (`attribute_steps`)."""
        header = self._summary(file)
        if header is None or not header.classes or not self._defines_stepping_callables:
            return False  # no method, or no class to hold: the calls need not be collected
        known = self._attribute_steppers.get(file)
        if known is not None and known[0] is header:
            return known[1]  # asked again for each question about the file's names
        summary = self._summary(file, part="calls")
        found = summary is not None and any(
            self._calls_stepping_attribute(file, callee, owner)
            for callee, _, owner, _ in summary.calls
            if owner and "." in owner
        )
        self._attribute_steppers[file] = (header, found)
        return found

    def _calls_stepping_attribute(self, file: Path, callee: str, owner: str) -> bool:
        """Whether the call of `callee` in the method `owner` (`Class.method`) of `file` runs
        what a `self.` attribute holds, of a project class that steps (`attribute_steps`)."""
        target = _attribute_call(callee)
        return target is not None and self.attribute_steps(file, owner.partition(".")[0], *target)

    @cached_property
    def _defines_stepping_callables(self) -> bool:
        """Whether some project file runs a training step and defines `__call__` or `step`
        (`_attribute_call`'s methods): without one, no `self.` attribute holds a project class
        whose call steps, and `attribute_steps` is never asked. Read once from texts, like
        `_word_index`."""
        for path in self._project_files():
            try:
                data = path.read_bytes()
            except OSError:
                continue
            if _STEPPER_DEF.search(data) and _STEP_BYTES.search(data):
                return True
        return False

    def _loop_callers(
        self, file: Path, words: AbstractSet[str], factories: AbstractSet[str] = frozenset()
    ) -> set[Path]:
        """`_callers`, in any loop where `file` may run a training step itself
        (`_text_steps`), which is asked only where that widens the answer."""
        wider = self._callers(file, words, True, factories)
        narrow = self._callers(file, words, False, factories)
        return wider if wider != narrow and self._text_steps(file) else narrow

    def _callers(
        self,
        file: Path,
        words: AbstractSet[str],
        stepping: bool,
        factories: AbstractSet[str] = frozenset(),
    ) -> set[Path]:
        """The project's other files that call one of `words` in a loop (over a loader, unless
        the functions asked about run a training step themselves), or bind the result of a call
        of one of `factories` (their closures are called through that name)."""
        batch, any_loop, called = self._word_index
        loops = any_loop if stepping else batch
        found = {f for word in words for f in loops.get(word, ())}
        found |= {f for word in factories for f in called.get(word, ())}
        found.discard(file)
        return found

    @cached_property
    def _word_index(self) -> tuple[dict[str, list[Path]], ...]:
        """Name -> the project files that call it on a line inside a loop over a loader, inside
        any loop, and anywhere (`_text_loop_names`), read once per process from every project
        file's text: a file that calls none of a question's names needs no summary. Like the
        list of the project's files, it is not refreshed while the process runs."""
        index: tuple[dict[str, list[Path]], ...] = ({}, {}, {})
        for path in self._project_files():
            sets = _loop_names(path)
            for names, by_name in zip(sets, index, strict=True):
                for name in names:
                    by_name.setdefault(name, []).append(path)
        return index

    def _per_step_targets(self, file: Path, summary: _Summary) -> dict[bool, set[tuple[Path, str]]]:
        """The project functions `file`'s loop calls run every step, resolved once per content:
        by whether a call with every update counts (see `called_per_step`)."""
        known = self._step_targets.get(file)
        if known is not None and known[0] is summary:
            return known[1]
        found: dict[bool, set[tuple[Path, str]]] = {False: set(), True: set()}
        for call in summary.loop_calls:
            for target in self._loop_call_targets(file, summary, call):
                if call.kind == "update":
                    found[True].add(target)
                elif call.kind == "batch" or self._steps_itself(*target):
                    found[False].add(target)
                    found[True].add(target)
        self._step_targets[file] = (summary, found)
        return found

    def attribute_steps(self, file: Path, klass: str, attribute: str, method: str) -> bool:
        """Whether `self.<attribute>(...)` (`method` `__call__`) or `self.<attribute>.<method>(...)`
        in the class `klass` of `file` runs a method of a project class that runs a training
        step itself: `self._model_opt(loss, params)` where `self._model_opt =
        tools.Optimizer(...)` and `Optimizer.__call__` runs `backward()` and the optimizer's
        `step()`. The calling function then updates the parameters, as if it stepped itself."""
        file = file.absolute()
        for location in self._attribute_classes(file, klass, attribute):
            found = self._find_method(*location, method)
            if found is not None and self._steps_in_body(*found):
                return True
        return False

    def _steps_itself(self, file: Path, key: str) -> bool:
        """Whether the function `key` of `file` runs a training step: in its own body, by
        calling a method of its own class that runs one step per call
        (`_steps_once_through_own_class`: `self.optimize(loss)`), or by calling a project
        class's method that does through a `self.` attribute (`attribute_steps`)."""
        if self._steps_in_body(file, key):
            return True
        method = key.partition(".")[2]
        if not method or "." in method:
            return False
        if self._steps_once_through_own_class(file, key, set()):
            return True
        if not self._defines_stepping_callables:
            return False
        summary = self._summary(file, part="calls")
        return summary is not None and any(
            self._calls_stepping_attribute(file, callee, owner)
            for callee, _, owner, _ in summary.calls
            if owner == key
        )

    def _steps_once(self, file: Path, key: str, calls: _Summary) -> bool:
        """Whether each call of the function `key` of `file` runs one training step, outside
        any loop of its own: `backward()` or an optimizer's `step()` there, a method of its own
        class that does (`_steps_once_through_own_class`), or what a `self.` attribute holds, of
        a project class whose call steps (`attribute_steps`). A function that loops over its
        steps runs a whole training, not a step. `calls` is the file's summary with its calls."""
        scopes = self._summary(file, part="scopes")
        if scopes is not None and key in scopes.stepping_once:
            return True
        if "." not in key or not self._text_steps(file):
            return False
        if self._steps_once_through_own_class(file, key, set()):
            return True
        return self._defines_stepping_callables and any(
            self._calls_stepping_attribute(file, callee, owner)
            for callee, _, owner, how in calls.calls
            if owner == key and not how & _LOOPED
        )

    def _steps_once_through_own_class(
        self, file: Path, key: str, seen: set[tuple[Path, str]]
    ) -> bool:
        """Whether the method `key` (`Class.method`) of `file` calls, outside its own loops, a
        method of its class (`self.optimize(loss)`, found in its class or a base of any project
        module) that runs one training step outside its loops, itself or the same way in turn:
        each call of `key` then runs one training step. A method that loops over such calls
        (`for epoch in ...: self.train()`) runs a whole training, not a step."""
        seen.add((file, key))  # one walk: each method is asked once
        summary = self._summary(file, part="calls")
        if summary is None or len(seen) > 4 * _MAX_DEPTH:
            return False
        klass = key.partition(".")[0]
        for callee, _, owner, looped in summary.calls:
            head, _, own = callee.partition(".")
            if owner != key or looped or head != "self" or not own.isidentifier():
                continue
            found = self._find_method(file, klass, own)
            if found is None or found in seen:
                continue
            scopes = self._summary(found[0], part="scopes")
            if scopes is not None and found[1] in scopes.stepping_once:
                return True
            if self._steps_once_through_own_class(*found, seen):
                return True
        return False

    def _steps_in_body(self, file: Path, key: str) -> bool:
        summary = self._summary(file, part="scopes")
        return summary is not None and key in summary.stepping

    def _loop_call_targets(
        self, file: Path, summary: _Summary, call: _LoopCall
    ) -> list[tuple[Path, str]]:
        parts = call.callee.split(".")
        found: list[tuple[Path, str]] = []
        if parts[0] == "self":
            if call.owner is None or not 2 <= len(parts) <= 3:
                return []  # `self(x)` runs the class's own forward
            if len(parts) == 2:  # an inherited method of another module
                method = self._find_method(file, call.owner, parts[1])
                if method is not None:
                    return [method]
                # `self.criterion(out, y)`: the instance's `__call__`, a module's `forward`
                classes = self._attribute_classes(file, call.owner, parts[1])
                return [m for c in classes if (m := self._instance_call(c)) is not None]
            for klass in self._attribute_classes(file, call.owner, parts[1]):
                method = self._find_method(*klass, parts[2])
                found += [method] if method is not None else []
            return found
        if parts[0] in summary.imports and len(parts) <= 2:
            target = self._target(file, summary, call.callee)  # `f(x)`, `module.f(x)`
            found += [target] if target is not None else []
        elif len(parts) == 1 and summary.stars and not call.bound:
            target = self._target(file, summary, call.callee)  # `from metrics import *`
            found += [target] if target is not None else []
        for built in call.bound:
            if len(parts) == 1 and built.split(".")[0] in summary.imports:
                factory = self._target(file, summary, built)  # `train = fns.make_train(...)`
                found += [(factory[0], factory[1] + "()")] if factory is not None else []
            elif len(parts) == 2 and (owner := self._class_location(file, built)) is not None:
                method = self._find_method(*owner, parts[1])  # `score = Score(c)`
                found += [method] if method is not None else []
            if len(parts) == 1 and (owner := self._class_location(file, built)) is not None:
                method = self._instance_call(owner)  # `dice = DiceLoss(n)`, then `dice(out, y)`
                found += [method] if method is not None else []
        return found

    def _instance_call(self, location: tuple[Path, str]) -> tuple[Path, str] | None:
        """What calling an instance of the project class runs: its `__call__`, else (an
        nn.Module's `__call__` being torch's) its `forward`."""
        return self._find_method(*location, "__call__") or self._find_method(*location, "forward")

    def _class_location(
        self, file: Path, name: str, depth: int = 0, stars: bool = False
    ) -> tuple[Path, str] | None:
        """The file and name of the project class `name`, as written in `file`, refers to.
        With `stars`, also through a module's star imports of project modules (a package's
        `from .logger import *` re-exporting `MetricLogger`)."""
        summary = self._summary(file)
        if summary is None or depth > _MAX_DEPTH:
            return None
        head, _, rest = name.partition(".")
        if not rest and head in summary.classes:
            return (file, head)
        if head not in summary.imports:
            return self._star_class(file, summary, name, depth) if stars and not rest else None
        level, target = summary.imports[head]
        module, _, leaf = (f"{target}.{rest}" if rest else target).rpartition(".")
        source = self._module_file(file, level, module) if module or level else None
        return self._class_location(source.absolute(), leaf, depth + 1, stars) if source else None

    def _star_class(
        self, file: Path, summary: _Summary, name: str, depth: int
    ) -> tuple[Path, str] | None:
        """The project class `name` that one of `file`'s star imports of a project module
        brings in: the last that does, as Python's last binding wins (`__all__` not read)."""
        for level, module in reversed(summary.stars):
            source = self._module_file(file, level, module)
            found = (
                self._class_location(source.absolute(), name, depth + 1, stars=True)
                if source is not None
                else None
            )
            if found is not None:
                return found
        return None

    def _star_function(
        self,
        file: Path,
        summary: _Summary,
        name: str,
        depth: int,
        seen: dict[Path, int] | None = None,
    ) -> tuple[Path, str] | None:
        """The module-level function `name` of a project module that one of `file`'s star
        imports brings in (`from evaluation import *`, then `get_accuracy(sr, gt)`), through
        the star imports of that module in turn: none where `file` binds the name itself (a
        definition, a class, an assignment or an import), as the last star import that does
        (`__all__` not read), like `_star_class`. `seen` keeps the shallowest depth each
        module was searched at: modules that star-import each other are searched once, not
        once per path."""
        seen = {} if seen is None else seen
        if (
            depth > _MAX_DEPTH
            or seen.get(file, _MAX_DEPTH + 1) <= depth
            or name in summary.functions
            or name in summary.classes
            or name in summary.assigned
            or name in summary.imports
        ):
            return None
        seen[file] = depth
        for level, module in reversed(summary.stars):
            source = self._module_file(file, level, module)
            other = self._summary(source.absolute()) if source is not None else None
            if source is None or other is None:
                continue
            if name in other.functions:
                return (source.absolute(), name)
            found = self._star_function(source.absolute(), other, name, depth + 1, seen)
            if found is not None:
                return found
        return None

    def _find_method(
        self, file: Path, klass: str, method: str, depth: int = 0
    ) -> tuple[Path, str] | None:
        """Where the project class `klass` of `file` gets `method`: its own, else a base's."""
        summary = self._summary(file)
        if summary is None or klass not in summary.classes or depth > _MAX_DEPTH:
            return None
        if method in summary.methods.get(klass, ()):
            return (file, f"{klass}.{method}")
        for base in summary.classes[klass][1]:
            location = self._class_location(file, base)
            found = self._find_method(*location, method, depth + 1) if location else None
            if found is not None:
                return found
        return None

    def _attribute_classes(self, file: Path, klass: str, attribute: str) -> list[tuple[Path, str]]:
        """The project classes whose instances `self.<attribute>` may hold in `klass`: what its
        methods, its bases' and its subclasses' (in any module) assign to it."""
        family = [*self._lineage(file, klass), *self._subclasses(file, klass, 0)]
        found = []
        for member_file, member in family:
            summary = self._summary(member_file, part="scopes")
            built = summary.attr_classes.get(member, {}).get(attribute, ()) if summary else ()
            for callee in built:
                location = self._class_location(member_file, callee)
                found += [location] if location is not None else []
                if location is None:
                    found += self._registry_classes(member_file, callee)
        return found

    def _registry_classes(self, file: Path, callee: str) -> list[tuple[Path, str]]:
        """The project classes whose instances the call of the project function `callee` (as
        written in `file`) returns when it builds them from a registry (`return
        EVALUATORS.get(cfg.name)(cfg)`): every class of the project registered with that
        registry (`@EVALUATORS.register()`), found by the name the registry is bound to at
        module level."""
        summary = self._summary(file)
        if summary is None:
            return []
        target = (
            (file, callee) if callee in summary.functions else self._target(file, summary, callee)
        )
        for _ in range(_MAX_DEPTH):  # past re-exports: a package's `from .build import f`
            module = self._summary(target[0]) if target is not None else None
            if target is None or module is None or target[1] in module.functions:
                break
            target = self._target(target[0], module, target[1])
        scopes = self._summary(target[0], part="scopes") if target is not None else None
        if target is None or scopes is None:
            return []
        registries = {
            r
            for written in scopes.registry_factories.get(target[1], ())
            if (r := self._module_name(target[0], written, 0)) is not None
        }
        return [klass for registry in sorted(registries) for klass in self._registered(registry)]

    def _registered(self, registry: tuple[Path, str]) -> list[tuple[Path, str]]:
        """The project classes registered with the registry bound to the module-level name
        `registry`, once per process (like `_word_index`) with the files it read, which each
        later question consults again."""
        if registry not in self._registered_memo:
            before = dict(self.consulted)
            self.consulted.clear()
            found: list[tuple[Path, str]] = []
            for other in self._project_files():
                if not _mentions(other, registry[1]):
                    continue
                header = self._summary(other)
                for klass, written in header.registered.items() if header is not None else ():
                    if any(self._module_name(other, w, 0) == registry for w in written):
                        self.consulted[other] = self._digests[other][2]
                        found.append((other, klass))
            self._registered_memo[registry] = (found, dict(self.consulted))
            self.consulted.update(before)
        found, consulted = self._registered_memo[registry]
        self.consulted.update(consulted)
        return found

    def _module_name(self, file: Path, name: str, depth: int) -> tuple[Path, str] | None:
        """Where the module-level name `name`, as written in `file` (`EVALUATORS`,
        `build.EVALUATORS`), is bound by an assignment: through the file's imports of project
        modules."""
        summary = self._summary(file)
        if summary is None or depth > _MAX_DEPTH:
            return None
        head, _, rest = name.partition(".")
        if not rest and head in summary.assigned:
            return (file.absolute(), head)
        if head not in summary.imports:
            return None
        level, target = summary.imports[head]
        module, _, leaf = (f"{target}.{rest}" if rest else target).rpartition(".")
        source = self._module_file(file, level, module) if module or level else None
        return self._module_name(source.absolute(), leaf, depth + 1) if source else None

    def _lineage(self, file: Path, klass: str) -> list[tuple[Path, str]]:
        """`klass` and its project bases, nearest first."""
        found = [(file, klass)]
        for current_file, current in found:
            summary = self._summary(current_file)
            if summary is None or len(found) > _MAX_DEPTH:
                break
            for base in summary.classes.get(current, (False, ()))[1]:
                location = self._class_location(current_file, base)
                if location is not None and location not in found:
                    found.append(location)
        return found

    def _subclasses(self, file: Path, klass: str, depth: int) -> list[tuple[Path, str]]:
        """The project's classes derived from `klass` of `file`, in any module, at any depth."""
        if depth > _MAX_DEPTH:
            return []
        found = []
        for other in self._base_words.get(klass, ()):
            summary = self._summary(other)
            for name, (_, bases) in summary.classes.items() if summary else ():
                if any(self._class_location(other, base) == (file, klass) for base in bases):
                    found += [(other, name), *self._subclasses(other, name, depth + 1)]
        return found

    @cached_property
    def _base_words(self) -> dict[str, list[Path]]:
        """Word -> the project files whose class statements name it among their bases (`class
        Demo(io.IO):` names `io` and `IO`), read once per process from the texts: only these
        can hold a subclass of a class of that name."""
        index: dict[str, list[Path]] = {}
        for path in self._project_files():
            try:
                text = path.read_bytes().decode("utf-8", "replace")
            except OSError:
                continue
            words = {w for bases in _CLASS_BASES.findall(text) for w in _WORD.findall(bases)}
            for word in words:
                index.setdefault(word, []).append(path)
        return index

    def answers_periodically(self, file: Path, name: str, klass: str | None = None) -> bool | None:
        """Whether the project's helper `name` as written in `file` (a function, or with `klass`
        the method `name` that class of `file` has, its own or inherited from another module)
        answers with a modulo test of a step counter (`return step % freq == 0`): then
        `if every_n_steps(state, freq):` is a periodic guard. None when the helper is not the
        project's; its body is read with `ast`, once per file content."""
        file = file.absolute()
        summary = self._summary(file)
        if summary is None:
            return None
        if klass is not None:
            location = self._find_method(file, klass, name) if klass in summary.classes else None
        else:
            location = self._target(file, summary, name)
        if location is None:
            return None
        source = self._summary(location[0], part="periodic")
        return source.periodic.get(location[1]) if source is not None else None

    def method_called_without_grad(self, file: Path, method: str) -> bool:
        """Whether another file of the project calls some `x.<method>(...)` with grad off: a
        method reached through instances there may run under its caller's `no_grad` (the
        instance's class is not resolved, so any such call counts, and unknown stays silent)."""
        file = file.absolute()
        suffix = "." + method
        for other in self._project_files():
            if other == file or not _mentions(other, method):
                continue
            summary = self._summary(other, consult=False, part="calls")
            if summary is None:
                continue
            self.consulted[other] = self._digests[other][2]
            if any(off and callee.endswith(suffix) for callee, off, *_ in summary.calls):
                return True
        return False

    def method_turns_grad_on(self, method: str) -> bool:
        """Whether a class of the project defines a method `method` whose body turns autograd
        on itself (`with torch.set_grad_enabled(True):` for a Grad-CAM): a call of
        `x.<method>(...)` on an instance whose class is not resolved may need the graph it
        records (the class is unknown, so any such method counts: unknown stays silent)."""
        suffix = "." + method
        for other in self._project_files():
            if not _mentions(other, "def " + method):
                continue
            summary = self._summary(other, part="grad_off")
            if summary is not None and any(m.endswith(suffix) for m in summary.grad_on):
                return True
        return False

    def _call_targets(self, file: Path, summary: _Summary) -> dict[tuple[Path, str], list[_Site]]:
        """`file`'s calls by the project function they reach, resolved once per file content:
        each question would otherwise resolve every call of every file again."""
        known = self._targets.get(file)
        if known is not None and known[0] is summary:
            return known[1]
        targets: dict[tuple[Path, str], list[_Site]] = {}
        scope = replace(summary, imports={**summary.local_imports, **summary.imports})
        for callee, off, owner, looped in summary.calls:
            if (target := self._target(file, scope, callee, added_paths=True)) is not None:
                targets.setdefault(target, []).append((file, off, owner, looped))
        self._targets[file] = (summary, targets)
        return targets

    def _target(
        self, file: Path, summary: _Summary, callee: str, added_paths: bool = False
    ) -> tuple[Path, str] | None:
        """The file and name an imported callee resolves to: `evaluate` or `utils.evaluate`.
        With `added_paths`, also from a folder the project puts on `sys.path` (see
        `_on_added_path`): asked only to find a function's callers (their grad mode, whether
        they run it once), where a caller missed hides how the project uses it. The facts read
        from an imported module's contents (devices, host reads, per-step calls) keep to the
        root and `src/`: cross-module host reads do not yet know values bound for files. A bare
        name no import binds may come from a star import of a project module
        (`_star_function`)."""
        head, _, rest = callee.partition(".")
        if head not in summary.imports:
            return (
                None if rest or not summary.stars else self._star_function(file, summary, head, 0)
            )
        level, target = summary.imports[head]
        module, _, leaf = (f"{target}.{rest}" if rest else target).rpartition(".")
        if not leaf or "." in rest:
            return None
        source = self._module_file(file, level, module, added_paths)
        if source is None:
            return None
        key = (source.absolute(), leaf)
        if key not in self._passed:
            self._passed[key] = self._passed_on(*key, 0)
        return self._passed[key]

    def _passed_on(self, file: Path, name: str, depth: int) -> tuple[Path, str]:
        """Where `name`, imported from the project module `file`, is defined: a module (a
        package's `__init__.py`: `from .model_complexity import compute_model_complexity`) that
        binds the name only by importing it from another project module hands that one's on,
        so the callers of `torchreid.utils.compute_model_complexity` are its function's. A
        module whose text imports no such name (`_imports_name`) is not parsed for it."""
        try:
            data = file.read_bytes()
        except OSError:
            return file, name
        if not _imports_name(data, name):
            return file, name
        summary = self._summary(file)
        if (
            depth > _MAX_DEPTH
            or summary is None
            or name not in summary.imports
            or name in summary.functions
            or name in summary.classes
            or name in summary.assigned
        ):
            return file, name
        level, target = summary.imports[name]
        module, _, leaf = target.rpartition(".")
        source = self._module_file(file, level, module) if leaf else None
        if source is None:
            return file, name
        return self._passed_on(source.absolute(), leaf, depth + 1)

    def _project_files(self) -> list[Path]:
        if self._files is None:
            found: list[Path] = []
            for directory, folders, names in os.walk(self.root):
                folders[:] = [f for f in folders if not f.startswith(".") and f not in _NOT_PROJECT]
                found += [Path(directory, n).absolute() for n in names if n.endswith(".py")]
                self._notebooks += [Path(directory, n) for n in names if n.endswith(".ipynb")]
                self._configs += [Path(directory, n) for n in names if n.endswith(_CONFIGS)]
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
            if not bases:
                return False  # derives from nothing but object
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
        source = self._module_file(file, level, module, question.added_paths)
        if source is None:  # `from package import module` then `module.Class`
            return None
        return self._resolve(source, leaf, depth + 1, seen, question)

    def _module_file(
        self, file: Path, level: int, module: str, added_paths: bool = False
    ) -> Path | None:
        """The project file a module name refers to, remembered per folder: asked for every
        call of an imported name, most of them modules outside the project (and remembered
        per file too, since each `file.parent` is a new path to hash)."""
        asked = (file, level, module, added_paths)
        if asked not in self._resolved:
            self._resolved[asked] = self._resolve_module(file, level, module, added_paths)
        return self._resolved[asked]

    def _resolve_module(
        self, file: Path, level: int, module: str, added_paths: bool
    ) -> Path | None:
        key = (file.parent if level else self.root, level, module)
        if key not in self._modules:
            self._modules[key] = self._find_module_file(file, level, module)
        found = self._modules[key]
        if found is None and not level and module and file.parent != self.root:
            found = self._script_sibling(file, module)
        if found is None and added_paths and not level and "." in module:
            return self._on_added_path([p for p in module.split(".") if p])
        return found

    def _script_sibling(self, file: Path, module: str) -> Path | None:
        """The module an absolute import names from the importing file's own folder, which
        Python puts first on `sys.path` when that file runs as a script (`train/train.py`
        doing `import trainlib` for `train/trainlib/`), or from a folder above it inside the
        project, where the script that imports it runs (`code/networks/unet.py` doing `from
        networks.utils import init` for `code/train.py`); remembered per folder like the rest."""
        key = (file.parent, -1, module)
        if key not in self._modules:
            found = self._find_module_file(file, 1, module)
            above = file.parent.parent
            if found is None and above != self.root and _inside(above, self.root):
                found = self._script_sibling(file.parent, module)
            self._modules[key] = found
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

    def _on_added_path(self, parts: list[str]) -> Path | None:
        """The one project file that `utils.summary` names from a folder the project puts on
        `sys.path` itself (`lib/utils/summary.py`, for tools that insert `lib/`): a dotted name
        of two parts or more whose file ends the same way, where exactly one does."""
        found = [
            path
            for path in self._files_by_name.get(parts[-1], [])
            if path.with_suffix("").parts[-len(parts) :] == tuple(parts)
        ] + [
            path
            for path in self._files_by_name.get("__init__", [])
            if path.parent.parts[-len(parts) :] == tuple(parts)
        ]
        return found[0] if len(found) == 1 else None

    def copies_of(self, name: str) -> list[Path]:
        """The project's modules `name.py` and package folders `name/` (with an
        `__init__.py`), anywhere in it, from the walk already made; empty when the project is
        too large to walk."""
        return self._files_by_name.get(name, []) + [
            path.parent
            for path in self._files_by_name.get("__init__", [])
            if path.parent.name == name
        ]

    @cached_property
    def _files_by_name(self) -> dict[str, list[Path]]:
        """The project's files by their name without `.py`."""
        index: dict[str, list[Path]] = {}
        for path in self._project_files():
            index.setdefault(path.stem, []).append(path)
        return index

    def _summary(
        self, path: Path, consult: bool = True, part: str | None = None
    ) -> _Summary | None:
        """The file's summary: its header, with `part` (`_PARTS`) filled when asked."""
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
            if summary is None or (part is not None and part not in summary.parts):
                text = (data if data is not None else path.read_bytes()).decode("utf-8", "replace")
                tree = self._tree_of(text)
                if summary is None:
                    summary = self._summaries[digest] = _summarise(text, tree)
                if part is not None and part not in summary.parts and tree is not None:
                    _fill(summary, part, text, tree)
        except OSError:
            return None
        if consult:
            self.consulted[path] = digest
        return summary

    # -- how other modules use a function (TL001): asked only of evaluation scopes ---------
    def feeds_training_elsewhere(self, file: Path, key: str) -> bool:
        """Whether a file of the project that imports `file` calls `key` (`f` or `Class.method`,
        by its last name on any receiver) where its result can feed a training step: in a loop
        body or function whose own code runs `.backward()` or an optimizer's `.step()`, with
        grad on and not under a periodic guard (`preds = self.compute_predictions(batch)` in
        the `step` of a subclass of the solver defining it). A function named for prediction
        is then the training forward, whatever its name says. Files that do not import `file`
        are not asked: a method of the same name in an unrelated script says nothing, unless
        (for a method) a file that imports `file` imports them too: a runner that builds the
        policy and hands it to the trainer of another module (`Trainer(self.policy)`, whose
        `update` backpropagates `self.policy.evaluate_actions(...)`)."""
        name, file = key.rpartition(".")[2], file.absolute()
        others = [*self._importers(file)]
        if "." in key:
            others += [o for o in self._co_imported(file) if o not in others]
        for other in others:
            if not _mentions(other, name):
                continue
            read = _read(other)
            if read is None:
                continue
            self.consulted[other] = read[1]
            if name in _training_callees(*read, self._tree_of):
                return True
        return False

    def _co_imported(self, file: Path) -> Iterator[Path]:
        """The project files that a file importing `file` imports beside it, at the top or in a
        function (`from .trainer import Trainer as TrainAlgo` in a runner's `__init__`): where
        an instance of `file`'s class may be handed to."""
        stem = _import_name(file)
        for importer in self._import_words.get(stem, ()):
            imported = self._all_imported_files(importer) if importer != file else []
            if file in imported:
                yield from (f for f in imported if f not in (file, importer))

    def _all_imported_files(self, file: Path) -> list[Path]:
        """The project files `file` imports, at the top (`_imported_files`) or in a function."""
        summary = self._summary(file, consult=False, part="calls")
        if summary is None:
            return []
        found = list(self._imported_files(file))
        for level, target in summary.local_imports.values():
            found += self._import_sources(file, level, target)
        return found

    def handed_over_without_grad(self, file: Path, key: str) -> bool:
        """Whether the project runs the method `key` (`Class.method`) only with grad off, also
        where it hands the bound method over: every `x.<method>(...)` runs with grad off (at the
        call or up its callers, as `always_called_without_grad` follows them), every read of
        `x.<method>` other than a call is an argument of a call made with grad off (`with
        torch.no_grad(): self.run_stage("valid", self.valid)`: the stage runner calls it
        there), and there is at least one of either. False when unknown."""
        return self._handed_off_everywhere(file.absolute(), key, 0, frozenset()) is True

    def _handed_off_everywhere(
        self, file: Path, key: str, depth: int, busy: frozenset[tuple[Path, str]]
    ) -> bool | None:
        """`_off_everywhere` of a method also handed over as a bound method (True, None or
        False as it answers)."""
        if (file, key) in busy:
            return None
        if depth > _MAX_DEPTH:
            return False
        busy = busy | {(file, key)}
        name = key.rpartition(".")[2]
        found: bool | None = False
        for other in self._project_files():
            if not _mentions(other, name) or self._test_code(other):
                continue
            summary = self._summary(other, consult=False, part="calls")
            read = _read(other)
            if summary is None or read is None:
                continue
            self.consulted[other] = read[1]
            if name in summary.attribute_reads:
                if not _handed_over_off(*read, name, self._tree_of):
                    return False
                found = True
            for callee, off, owner, _ in summary.calls:
                if "." not in callee or callee.rpartition(".")[2] != name:
                    continue
                if not self._may_reach(other, callee, owner, (file, key.rpartition(".")[0])):
                    continue
                up = (
                    True
                    if off
                    else bool(owner) and self._off_everywhere(other, owner or "", depth + 1, busy)
                )
                if up is False:
                    return False
                found = True if up is True else found or None
        return found

    def holds_no_parameters(self, file: Path, name: str, depth: int = 0) -> bool:
        """Whether the project class `name` (as written in `file`) holds no parameters and no
        submodules, nor do its bases up to `nn.Module`: a reader of cached features that only
        derives from nn.Module, a spectrogram holding only registered buffers (its window). Its forward records no graph of its own, so its `.eval()` says
        nothing of evaluation. False when unknown: a base outside the project other than
        `nn.Module`, any `torch.nn` construction or parameter API, or an attribute that may
        hold a module (not a literal) and is called, iterated, computed with or handed to a
        call other than a path or string helper."""
        location = self._class_location(file.absolute(), name)
        if location is None or depth > _MAX_DEPTH:
            return False
        where, klass = location
        node = self._class_node(where, klass)
        if node is None:
            return False
        for base in node.bases:
            written = ast_dotted(base) or ""
            if written in ("nn.Module", "torch.nn.Module"):
                continue
            if not written or not self.holds_no_parameters(where, written, depth + 1):
                return False
        return _plain_class(node)

    def _class_node(self, file: Path, klass: str) -> ast.ClassDef | None:
        """The module-level statement of the class `klass` in `file`, whose text the answer
        then rests on (consulted, found or not)."""
        read = _read(file)
        if read is None:
            return None
        self.consulted[file] = read[1]
        tree = self._tree_of(read[0])
        body = tree.body if tree is not None else []
        return next((n for n in body if isinstance(n, ast.ClassDef) and n.name == klass), None)


_LOOP_NAMES: dict[Path, tuple[int, int, tuple[frozenset[str], ...]]] = {}


def _loop_names(path: Path) -> tuple[frozenset[str], ...]:
    """`_text_loop_names` of a file, kept per path, size and mtime for the whole process: the
    indexes of nested project roots (each folder of a repository without declarations is a
    root of its own) read the same files."""
    try:
        info = path.stat()
        known = _LOOP_NAMES.get(path)
        if known is not None and known[:2] == (info.st_mtime_ns, info.st_size):
            return known[2]
        found = _text_loop_names(path.read_bytes().decode("utf-8", "replace"))
    except OSError:
        return (frozenset(), frozenset(), frozenset())
    _LOOP_NAMES[path] = (info.st_mtime_ns, info.st_size, found)
    return found


def _periodic_members(tree: ast.Module) -> dict[str, bool]:
    """Whether each module-level function and method (`f`, `Class.method`) answers
    periodically (see `_answers_periodically`)."""
    return {
        prefix + member.name: _answers_periodically(member)
        for node in tree.body
        for member, prefix in (
            [(s, node.name + ".") for s in node.body]
            if isinstance(node, ast.ClassDef)
            else [(node, "")]
        )
        if isinstance(member, ast.FunctionDef)
    }


def _answers_periodically(function: ast.FunctionDef) -> bool:
    """A modulo somewhere in the body, and every return a truth test: a comparison, `and`/`or`/
    `not`, a bool constant, or a name the function binds only to such tests."""
    nodes = _walk(function)
    returns = [n.value for n in nodes if isinstance(n, ast.Return)]
    if not returns or not any(
        isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for n in nodes
    ):
        return False
    bound: dict[str, list[ast.expr]] = {}
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(node.value)

    def test(value: ast.expr | None, names: bool = True) -> bool:
        if isinstance(value, ast.Compare | ast.BoolOp) or (
            isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not)
        ):
            return True
        if isinstance(value, ast.Constant):
            return isinstance(value.value, bool)
        if names and isinstance(value, ast.Name) and value.id in bound:
            return all(test(v, names=False) for v in bound[value.id])
        return False

    return all(test(r) for r in returns)


_IMPORT_LINE = re.compile(r"^[ \t]*+(?:from|import)[ \t](?:[^\n(]*\([^)]*\)|[^\n]*)", re.MULTILINE)


# TL001's answers about a file's text, kept per content digest for the whole process.
_TRAINING_CALLEES: dict[str, frozenset[str]] = {}
_HANDED_OFF: dict[tuple[str, str], bool] = {}


def _read(path: Path) -> tuple[str, str] | None:
    """The file's text and content digest; None when it cannot be read."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return data.decode("utf-8", "replace"), hashlib.sha256(data).hexdigest()


def _attribute_call(callee: str) -> tuple[str, str] | None:
    """`self.opt` -> (`opt`, `__call__`), `self.opt.step` -> (`opt`, `step`): a call of what a
    `self.` attribute holds, and the method of its class that runs."""
    parts = callee.split(".")
    if parts[0] != "self":
        return None
    if len(parts) == 2:
        return parts[1], "__call__"
    if len(parts) == 3 and parts[2] == "step":
        return parts[1], "step"
    return None


def _steps(node: ast.Call) -> bool:
    """`loss.backward()`, `optimizer.step()`: a training step."""
    if not isinstance(node.func, ast.Attribute):
        return False
    method = node.func.attr
    owner = (ast_dotted(node.func.value) or "").rsplit(".", 1)[-1]
    return method in ("backward", "manual_backward") or (
        method == "step" and is_optimizer_name(owner)
    )


def _training_callees(
    text: str, digest: str, parse: Callable[[str], ast.Module | None]
) -> frozenset[str]:
    """The last names of the callees whose calls may feed a training step in this file: made
    with grad on, outside periodic guards, in a loop body or function (its innermost one) whose
    own code also steps. Iterative, like every walk of the index."""
    if digest in _TRAINING_CALLEES:
        return _TRAINING_CALLEES[digest]
    tree = parse(text) if _STEP_TEXT.search(text) else None
    stepping: set[int] = set()
    calls: list[tuple[int, str]] = []
    # node, its innermost loop or function (an id), grad off there, under a periodic guard
    stack: list[tuple[ast.AST, int, bool, bool]] = [(tree, 0, False, False)] if tree else []
    while stack:
        node, unit, off, rare = stack.pop()
        if isinstance(node, ast.Call) and not off:
            if _steps(node):
                stepping.add(unit)
            elif not rare and isinstance(node.func, ast.Name | ast.Attribute):
                calls.append((unit, (ast_dotted(node.func) or "?").rsplit(".", 1)[-1]))
        if isinstance(node, ast.With | ast.AsyncWith) and any(
            _turns_grad_off(item.context_expr) for item in node.items
        ):
            stack += [(child, unit, True, rare) for child in node.body]
            continue
        if isinstance(node, ast.If) and _periodic(node.test):
            stack += [(child, unit, off, True) for child in node.body]
            stack += [(child, unit, off, rare) for child in node.orelse]
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            off = any(_turns_grad_off(d) for d in node.decorator_list)
            stack += [(child, id(node), off, False) for child in node.body]
            continue
        if isinstance(node, ast.For | ast.AsyncFor | ast.While):
            stack += [(child, id(node), off, False) for child in node.body]
            continue
        stack += [(child, unit, off, rare) for child in _children(node)]
    found = frozenset(name for unit, name in calls if unit in stepping)
    _TRAINING_CALLEES[digest] = found
    return found


def _handed_over_off(
    text: str, digest: str, name: str, parse: Callable[[str], ast.Module | None]
) -> bool:
    """Whether every read of `x.<name>` in the file other than a call is an argument of a call
    made with grad off (`with torch.no_grad(): run(self.<name>)`)."""
    if (digest, name) not in _HANDED_OFF:
        _HANDED_OFF[digest, name] = _handed_over_off_now(parse(text), name)
    return _HANDED_OFF[digest, name]


def _handed_over_off_now(tree: ast.Module | None, name: str) -> bool:
    if tree is None:
        return False
    allowed: set[int] = set()  # reads that are the callee of a call, or handed over with grad off
    reads: list[int] = []
    # `run = self.<name>` with grad off: (function, local name) -> the reads bound so
    aliased: dict[tuple[int, str], list[int]] = {}
    # (function, local name) -> whether every load of the name there calls it with grad off
    called_off: dict[tuple[int, str], bool] = {}
    callees: set[int] = set()  # ids of the `func` nodes of calls
    stack: list[tuple[ast.AST, bool, int]] = [(tree, False, id(tree))]
    while stack:
        node, off, scope = stack.pop()
        if isinstance(node, ast.Call):
            allowed.add(id(node.func))
            callees.add(id(node.func))
            if off:
                values = [*node.args, *(k.value for k in node.keywords)]
                allowed.update(id(v) for v in values)
            if isinstance(node.func, ast.Name):
                key = (scope, node.func.id)
                called_off[key] = called_off.get(key, True) and off
        elif isinstance(node, ast.Attribute) and node.attr == name:
            reads.append(id(node))
        elif isinstance(node, ast.Assign) and off and _binds_read(node, name):
            target = node.targets[0]
            assert isinstance(target, ast.Name)
            aliased.setdefault((scope, target.id), []).append(id(node.value))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if id(node) not in callees:  # read other than as a callee: it may go anywhere
                called_off[scope, node.id] = False
        if isinstance(node, ast.With | ast.AsyncWith) and any(
            _turns_grad_off(item.context_expr) for item in node.items
        ):
            stack += [(child, True, scope) for child in node.body]
            stack += [(item, off, scope) for item in node.items]
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            off = any(_turns_grad_off(d) for d in node.decorator_list)  # runs when called
            scope = id(node)
        elif isinstance(node, ast.Lambda | ast.ClassDef):
            off = False
        stack += [(child, off, scope) for child in _children(node)]
    for key, bound in aliased.items():
        if called_off.get(key, False):
            allowed.update(bound)  # `run = self.valid` then only `run(batch)`, all with grad off
    return all(read in allowed for read in reads)


def _binds_read(node: ast.Assign, name: str) -> bool:
    """`run = x.<name>`: one plain name bound to the attribute."""
    return (
        len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == name
    )


# Calls that take paths, strings and plain containers: an attribute handed to them is no module.
_PLAIN_ROOTS = frozenset(
    {
        "os",
        "pathlib",
        "Path",
        "json",
        "pickle",
        "h5py",
        "lmdb",
        "str",
        "open",
        "len",
        "print",
        "int",
        "float",
        "bool",
        "dict",
        "list",
        "set",
        "tuple",
        "sorted",
        "isinstance",
        "getattr",
        "hasattr",
        "format",
        "repr",
        "defaultdict",
        "OrderedDict",
        "collections",
        "np",
        "numpy",
        "math",
        "re",
        "OmegaConf",
        "omegaconf",
    }
)
# Calls that make a class hold parameters or submodules, or hide what it holds.
# nn.Module's own methods that hold no parameter of their own (`self.register_buffer(...)`):
# a call of one is no submodule's forward.
_MODULE_API = frozenset({"register_buffer", "train", "eval", "to", "cuda", "cpu", "float", "half"})
_PARAMETER_APIS = frozenset(
    {
        "Parameter",
        "ParameterList",
        "ParameterDict",
        "ModuleList",
        "ModuleDict",
        "Sequential",
        "register_parameter",
        "register_module",
        "add_module",
        "setattr",
        "load_state_dict",
        "requires_grad_",
        "__setattr__",
    }
)


def _plain_value(value: ast.expr, defaults: dict[str, ast.expr]) -> bool:
    """A literal, a display of literals, a plain helper's result, or a parameter whose default
    is a literal: no module."""
    if isinstance(value, ast.Constant | ast.JoinedStr):
        return True
    if isinstance(value, ast.List | ast.Tuple | ast.Set):
        return all(_plain_value(e, defaults) for e in value.elts)
    if isinstance(value, ast.Dict):
        return all(v is not None and _plain_value(v, defaults) for v in value.values)
    if isinstance(value, ast.Call):
        return (ast_dotted(value.func) or "").split(".")[0] in _PLAIN_ROOTS
    if isinstance(value, ast.Name) and value.id in defaults:
        return isinstance(defaults[value.id], ast.Constant) and defaults[value.id].value is not None  # type: ignore[attr-defined]
    return False


def _plain_class(node: ast.ClassDef) -> bool:
    """The body of `holds_no_parameters`: no torch.nn construction or parameter API, and every
    attribute that may hold a module is only read as a value by plain helpers."""
    methods = {s.name for s in node.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)}
    opaque: set[str] = set()
    for function in (s for s in node.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)):
        args = function.args.posonlyargs + function.args.args
        defaults = dict(
            zip(
                [a.arg for a in args][len(args) - len(function.args.defaults) :],
                function.args.defaults,
            )
        )
        for child in _walk(function):
            if isinstance(child, ast.Assign | ast.AugAssign | ast.AnnAssign):
                targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                for target in targets:
                    if _self_attribute(target) and not (
                        child.value is not None and _plain_value(child.value, defaults)
                    ):
                        opaque.add(target.attr)  # type: ignore[attr-defined]
    allowed: set[int] = set()
    for child in _walk(node):
        if isinstance(child, ast.Attribute) and child.attr == "requires_grad":
            return False
        if not isinstance(child, ast.Call):
            continue
        callee = ast_dotted(child.func) or ""
        parts = callee.split(".")
        if parts[-1] in _PARAMETER_APIS or (parts[0] in ("nn", "torch") and "nn" in parts[:2]):
            return False
        if parts[0] == "self" and len(parts) == 2 and parts[1] not in methods | _MODULE_API:
            return False  # `self.encoder(x)`: a submodule's forward
        if parts[0] in _PLAIN_ROOTS:
            allowed.update(id(a) for a in [*child.args, *(k.value for k in child.keywords)])
        if _self_attribute(child.func):
            allowed.add(id(child.func))  # `self.method(...)`, checked above
    for child in _walk(node):
        if (
            _self_attribute(child)
            and child.attr in opaque  # type: ignore[attr-defined]
            and id(child) not in allowed
            and not isinstance(child.ctx, ast.Store)  # type: ignore[attr-defined]
        ):
            return False
    return True


def _self_attribute(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def _freezing_walks(tree: ast.Module) -> list[tuple[str | None, bool]]:
    """Where the module trains BatchNorms frozen: a loop over `<model>.modules()` (or a function
    handed to `<model>.apply`) that, for a module it narrows by `isinstance` to a BatchNorm,
    calls `.eval()` (or `.train(False)`) and takes its weight and bias off the gradient
    (`m.weight.requires_grad = False` and the bias alike, `m.requires_grad_(False)`, or a loop
    over `m.parameters()` doing so). Only in a `train` override or a function the module calls:
    a helper nothing calls freezes nothing. Each walk as (the class of its method or None,
    whether it walks `self` itself)."""
    called = {
        node.func.id if isinstance(node.func, ast.Name) else node.func.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute)
    }
    applied: dict[str, bool] = {}  # function handed to `.apply` -> whether on `self`
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "apply"
            and len(node.args) == 1
        ):
            handed = ast_dotted(node.args[0]) or ""
            name = handed.removeprefix("self.")
            own = isinstance(node.func.value, ast.Name) and node.func.value.id == "self"
            applied[name] = applied.get(name, True) and own
    found: list[tuple[str | None, bool]] = []
    for owner, function in _functions_with_class(tree):
        if function.name != "train" and function.name not in called | applied.keys():
            continue
        for loop in ast.walk(function):
            if (
                isinstance(loop, ast.For)
                and isinstance(loop.iter, ast.Call)
                and isinstance(loop.iter.func, ast.Attribute)
                and loop.iter.func.attr in ("modules", "named_modules")
            ):
                target = loop.target
                if isinstance(target, ast.Tuple) and target.elts:
                    target = target.elts[-1]
                if isinstance(target, ast.Name) and _freezes_norms(loop.body, target.id):
                    receiver = loop.iter.func.value
                    found.append((owner, isinstance(receiver, ast.Name) and receiver.id == "self"))
        if function.name in applied and function.args.args:
            parameter = function.args.args[-1].arg
            if _freezes_norms(function.body, parameter):
                found.append((owner, applied[function.name]))
    return found


def _functions_with_class(
    tree: ast.Module,
) -> Iterator[tuple[str | None, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            yield None, statement
        elif isinstance(statement, ast.ClassDef):
            for member in statement.body:
                if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield statement.name, member


def _freezes_norms(body: list[ast.stmt], name: str) -> bool:
    """An `if isinstance(name, <...BatchNorm...>)` in `body` whose branch puts `name` in eval
    mode and takes its weight and bias off the gradient."""
    for statement in body:
        for node in ast.walk(statement):
            if not isinstance(node, ast.If) or not _narrows_to_norm(node.test, name):
                continue
            for block in _blocks(node.body):
                # the eval and the freeze in one block: whenever one runs, so does the other
                # (not `m.eval()` then `if self.bn_frozen:` around the freeze)
                direct = [
                    s
                    for s in block
                    if not isinstance(s, ast.If | ast.While | ast.With | ast.Try)
                    and not (isinstance(s, ast.For) and not _over_parameters(s, name))
                ]
                branch = ast.Module(body=direct, type_ignores=[])
                if _evals(branch, name) and _freezes_affine(branch, name):
                    return True
    return False


def _blocks(body: list[ast.stmt]) -> Iterator[list[ast.stmt]]:
    """`body` and every statement list nested in it."""
    yield body
    for statement in body:
        for node in ast.walk(statement):
            for field_name in ("body", "orelse", "finalbody"):
                nested = getattr(node, field_name, None)
                if isinstance(nested, list) and nested and isinstance(nested[0], ast.stmt):
                    yield nested


def _over_parameters(loop: ast.For, name: str) -> bool:
    return (
        isinstance(loop.iter, ast.Call)
        and isinstance(loop.iter.func, ast.Attribute)
        and loop.iter.func.attr == "parameters"
        and ast_dotted(loop.iter.func.value) == name
    )


def _narrows_to_norm(test: ast.expr, name: str) -> bool:
    for node in ast.walk(test):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "isinstance"
            and len(node.args) == 2
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id == name
        ):
            classes = node.args[1]
            elements = classes.elts if isinstance(classes, ast.Tuple) else [classes]
            if any("BatchNorm" in (ast_dotted(e) or "") for e in elements):
                return True
    return False


def _evals(branch: ast.Module, name: str) -> bool:
    for node in ast.walk(branch):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == name
        ):
            if node.func.attr == "eval" and not node.args:
                return True
            if node.func.attr == "train" and len(node.args) == 1:
                argument = node.args[0]
                if isinstance(argument, ast.Constant) and argument.value is False:
                    return True
    return False


def _freezes_affine(branch: ast.Module, name: str) -> bool:
    """`name.weight.requires_grad = False` and `name.bias...`, `name.requires_grad_(False)`, or
    `for p in name.parameters(): p.requires_grad = False`."""
    frozen: set[str] = set()
    for node in ast.walk(branch):
        if isinstance(node, ast.Assign) and _is_false(node.value):
            for target in node.targets:
                written = ast_dotted(target) or ""
                if written in (f"{name}.weight.requires_grad", f"{name}.bias.requires_grad"):
                    frozen.add(written.split(".")[1])
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "requires_grad_"
            and len(node.args) == 1
            and _is_false(node.args[0])
        ):
            written = ast_dotted(node.func.value) or ""
            if written == name:
                return True
            if written in (f"{name}.weight", f"{name}.bias"):
                frozen.add(written.split(".")[1])
        elif (
            isinstance(node, ast.For)
            and isinstance(node.target, ast.Name)
            and isinstance(node.iter, ast.Call)
            and isinstance(node.iter.func, ast.Attribute)
            and node.iter.func.attr == "parameters"
            and ast_dotted(node.iter.func.value) == name
            and _sets_requires_grad_off(node.body, node.target.id)
        ):
            return True
    return frozen == {"weight", "bias"}


def _sets_requires_grad_off(body: list[ast.stmt], name: str) -> bool:
    for statement in body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Assign) and _is_false(node.value):
                if any(ast_dotted(t) == f"{name}.requires_grad" for t in node.targets):
                    return True
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "requires_grad_"
                and ast_dotted(node.func.value) == name
                and len(node.args) == 1
                and _is_false(node.args[0])
            ):
                return True
    return False


def _is_false(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def _built_classes(owner: str, classes: dict[str, ast.ClassDef]) -> set[str]:
    """`owner` and the classes of the module its body names, any number of hops."""
    found = {owner}
    queue = [owner]
    while queue:
        klass = classes.get(queue.pop())
        if klass is None:
            continue
        for node in ast.walk(klass):
            if isinstance(node, ast.Name) and node.id in classes and node.id not in found:
                found.add(node.id)
                queue.append(node.id)
    return found


def _import_line_words(path: Path) -> frozenset[str]:
    """The words of a file's import lines (a superset of the modules it imports: a gate)."""
    try:
        text = path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return frozenset()
    return frozenset(w for line in _IMPORT_LINE.findall(text) for w in _WORD.findall(line))


# Text between two tokens of one expression: whitespace, line joins, and (inside brackets) comments.
_GAP = rb"(?:\s|\\\r?\n|#[^\n]*+)*+"
# A move by `.cuda(`/`.to(`, as `_moved_parameter` needs, in any spacing: `.cuda(`, or `.to(`
# (group 1) up to its first argument. `_may_move` then reads the receiver backwards.
_MOVER_TEXT = re.compile(rb"\." + _GAP + rb"(?:cuda|(to))" + _GAP + rb"\(" + _GAP)
# A first argument of `.to(` that `_moved_parameter` reads as no GPU, written whole: none (`)`),
# keywords only or a spread (`dtype=...`, `**kw`, `*args`), an attribute (`torch.float16`,
# `x.device`), a name (a GPU only when it says `dev`), a plain string (one only when it names
# an accelerator); anything else (a call, a conditional, an f-string) may be one.
_TO_ARGUMENT = re.compile(
    rb"\)|\*|[A-Za-z_]\w*+"
    + _GAP
    + rb"=(?!=)|(?:[A-Za-z_]\w*+"
    + _GAP
    + rb"\."
    + _GAP
    + rb")++[A-Za-z_]\w*+"
    + _GAP
    + rb"[,)]|(?P<name>[A-Za-z_]\w*+)"
    + _GAP
    + rb"[,)]|[rRuU]?(?P<quote>['\"])(?P<text>[^'\"\\\n]*+)(?P=quote)"
    + _GAP
    + rb"[,)]"
)
_ACCELERATOR_TEXTS = frozenset(a.encode() for a in _ACCELERATORS)


def _may_move(data: bytes) -> bool:
    """Whether a module's text may hold a move `_device_movers` returns (`_MOVER_TEXT`): a
    `.cuda(` of a name, or a `.to(` of one whose first argument may be a GPU (`_TO_ARGUMENT`).
    The receiver must be a name (`t`, `(t)`), not an attribute (`self.net.to(device)`) nor a
    subscript (`batch[0].cuda()`); one on an earlier line (a comment may stand between) may be."""
    for found in _MOVER_TEXT.finditer(data):
        if not _name_before(data, found.start()):
            continue
        if found.group(1) is None:
            return True
        argument = _TO_ARGUMENT.match(data, found.end())
        if argument is None:
            return True
        name, text = argument.group("name"), argument.group("text")
        if (name is not None and b"dev" in name.lower()) or (
            text is not None and text.split(b":")[0] in _ACCELERATOR_TEXTS
        ):
            return True
    return False


def _name_before(data: bytes, end: int) -> bool:
    """Whether the text before `end` (a `.`) may end with a name as a whole expression, in
    parentheses or not: a word not itself after a `.`, or anything on an earlier line."""
    at = end - 1
    while at >= 0 and data[at] in b" \t\f\r\n\\)":
        if data[at] == 10:  # a line break: a comment may hide what stands before it
            return True
        at -= 1
    word_end = at
    while at >= 0 and (data[at] >= 0x80 or data[at : at + 1].isalnum() or data[at] == 95):
        at -= 1
    return at < word_end and (at < 0 or data[at] != 46)


def _imports_name(data: bytes, name: str) -> bool:
    """Whether a module's text may import `name` from another module (a re-export, or a star
    import): with `_may_move`, a superset of what parsing it for GPU movers
    (`_device_movers`) and its imports would find, so the utility modules a file calls are
    not parsed for nothing. An import may go on past a line join, and a parenthesized one
    may hold comments."""
    word = re.escape(name.encode())
    # Each pattern opens with the word `import` and checks its boundary behind it (`names_after`).
    return re.search(
        rb"import(?<=\bimport)\b(?:[^\n]|\\\r?\n)*(?:\*|\b" + word + rb"\b)", data
    ) is not None or (
        re.search(rb"import(?<=\bimport)\s*\((?:[^)#]|#[^\n]*+)*\b" + word + rb"\b", data)
        is not None
    )


def _ships(declaring: Path, file: Path, declaration: str) -> bool:
    """Whether the distribution declared in `declaring` (its files' texts joined in
    `declaration`) may install `file`. A package finder ships regular packages (a folder with an
    `__init__.py`) and never looks into a folder without one, so a script beside others in
    `examples/train/` is installed only as a top-level module (beside the declaration or in
    its `src/`), by a namespace finder, by a declaration that names its top folder (not in an
    `exclude` list) or, where the declaration lists no packages, by setuptools' automatic
    discovery, which leaves out `examples`, `scripts`, `tools`, `tests` and the like."""
    folder = file.parent
    if (folder / "__init__.py").is_file() or folder in (declaring, declaring / "src"):
        return True
    if _NAMESPACE_FINDER.search(declaration):
        return True
    try:
        top = file.relative_to(declaring).parts[0]
    except ValueError:
        return True
    named = re.compile(r"[\"']" + re.escape(top) + r"[\"'/.*]")
    if named.search(_EXCLUDE_LIST.sub("", declaration)):
        return True
    listed = re.search(r"\bpackages\b|\bpy[_-]modules\b", declaration) is not None
    return not listed and top not in _NOT_DISCOVERED


def _plain_text_mentions(text: str, name: str, attributes: bool = False) -> bool | None:
    """Whether `text` calls the bare `name`, when each word `name` of it is such a call, its
    undecorated `def` or `class` line, an import line, a quoted `__all__` entry or
    `super(name, ...)`, or stands in a comment (`### GNN to generate node embeddings`);
    None for any other mention: an attribute of that name (`nets.name`) may be it, called or
    handed over, and a bare name not called is handed over. With `attributes`, a call of an
    attribute of that name (`nets.name(...)`) is a call too."""
    calls = False
    for match in re.finditer(rf"(?<!\w){re.escape(name)}\b", text):
        start, end = match.span()
        line_start = text.rfind("\n", 0, start) + 1
        before, after = text[line_start:start], text[end:]
        if "#" in before and "#" in _QUOTED.sub("", before):
            continue  # a comment, not `print("# head", name(x))`
        if _in_prose(
            text[line_start : text.find("\n", end) % (len(text) + 1)], start - line_start, name
        ):
            continue  # `"Number of GNN layers"`: words of a message, no name looked up
        if before.lstrip().startswith(("from ", "import ")):
            if re.match(r"[ \t]+as\b", after):
                return None  # imported under another name, which is not followed
            continue
        if after[:1] in ("'", '"') and before.endswith(after[0]) and _in_all(text, start):
            continue
        if re.fullmatch(r"[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+", before):
            if _decorated(text, line_start):
                return None  # registered, or wrapped: who calls it is not known
            continue
        if re.search(r"\bsuper\(\s*$", before):
            continue
        if (before.endswith(".") and not attributes) or not re.match(r"\s*\(", after):
            return None
        calls = True
    return calls


def _defines_at_top(text: str, name: str) -> bool:
    """Whether `text` defines `name` at module level: a `class` or `def` line of that name at
    the start of a line."""
    return re.search(rf"^(?:class|def)[ \t]+{re.escape(name)}\b", text, re.MULTILINE) is not None


def _in_prose(line: str, column: int, name: str) -> bool:
    """Whether `column` of `line` lies in a one-line string literal that holds more than the
    bare `name` (a message, `"Number of GNN layers"`), which no lookup by name reads; an
    f-string may call it, and a string of the name alone may be looked up (`getattr`)."""
    for literal in _QUOTED.finditer(line):
        if literal.start() < column < literal.end():
            prefix = line[: literal.start()].rstrip()[-1:].lower()
            return prefix != "f" and literal.group()[1:-1].strip() != name
    return False


# A one-line string literal, which may hold a `#` that opens no comment.
_QUOTED = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")


def _only_defined(text: str, name: str) -> bool:
    """Whether each word `name` of `text` stands in a comment (after a `#` that no one-line
    string literal of its line holds) or on an undecorated `def` line."""
    for match in re.finditer(rf"(?<!\w){re.escape(name)}\b", text):
        start = match.start()
        line_start = text.rfind("\n", 0, start) + 1
        before = text[line_start:start]
        if "#" in before and "#" in _QUOTED.sub("", before):
            continue  # a comment, not `print("# head", self._make_head(c))`
        if re.fullmatch(r"[ \t]*(?:async[ \t]+)?def[ \t]+", before) and not _decorated(
            text, line_start
        ):
            continue
        return False
    return True


def _leave_default(
    tree: ast.Module, name: str, parameter: str, position: int | None
) -> bool | None:
    """Whether the calls of `name` (bare or an attribute) in `tree` leave `parameter` at its
    default: none passes it by its keyword, by a positional argument at `position` or beyond,
    or through `*`/`**`. None when `tree` makes no such call."""
    found: bool | None = None
    for node in _walk(tree):
        if type(node) is not ast.Call:
            continue
        func = node.func
        callee = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if callee != name:
            continue
        if any(isinstance(a, ast.Starred) for a in node.args):
            return False
        if any(k.arg is None or k.arg == parameter for k in node.keywords):
            return False
        if position is not None and len(node.args) > position:
            return False
        found = True
    return found


def _in_all(text: str, start: int) -> bool:
    """Whether `start` lies in the list or tuple of an `__all__` assignment (an exported
    name); any other string may be looked up (`getattr(nets, "name")`)."""
    head = text.rfind("__all__", 0, start)
    return head >= 0 and not re.search(r"[\])]", text[head:start])


def _decorated(text: str, line_start: int) -> bool:
    """Whether the statement at `line_start` carries a decorator (the line above it, blank
    lines and comments aside, opens with `@`)."""
    for line in reversed(text[:line_start].splitlines()):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return stripped.startswith("@")
    return False


def _lookup_root(data: bytes, hit: re.Match[bytes]) -> str | None:
    """The first name of what an `_EVALUATES` hit looks a name up in: `models` of
    `models.__dict__[arch]` or of `getattr(models.zoo, arch)`; None for the other forms."""
    if hit.group().startswith(b"dict__"):
        before = _DICT_BASE.search(data, max(0, hit.start() - 200), hit.start())
        return before.group(1).decode() if before else None
    if hit.group().startswith(b"getattr"):
        found = _GETATTR_BASE.match(hit.group())
        return found.group(1).decode() if found else None
    return None


def _bound_names(tree: ast.Module) -> set[str]:
    """Every name the module binds anywhere: assignments and other targets, parameters,
    definitions, imports, `except ... as` and `match` captures."""
    names: set[str] = set()
    for node in _walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).partition(".")[0])
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            names.update(node.names)
    return names


def _import_name(path: Path) -> str:
    """The name an import writes for the module at `path` (its package's, for `__init__.py`)."""
    return path.parent.name if path.name == "__init__.py" else path.stem


def _mentions(path: Path, name: str) -> bool:
    """Whether the file's text holds `name`: a file that never writes a function's name cannot
    call it, and reading its bytes costs a hundredth of summarising it."""
    try:
        return name.encode() in path.read_bytes()
    except OSError:
        return False


def _holds(path: Path, pattern: re.Pattern[bytes]) -> bool:
    """Whether the file's bytes match `pattern` (an unreadable file holds nothing)."""
    try:
        return pattern.search(path.read_bytes()) is not None
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
