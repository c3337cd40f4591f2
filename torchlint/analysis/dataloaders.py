"""Which `torch.utils.data.DataLoader`s a file builds, with what options, which loops they feed,
and where those loops' batches are moved to a device.

A loop is fed by a loader when its iterable (under `enumerate`/`tqdm`-style wrappers) is the
construction itself, or a name, `self.` attribute, `with ... as` target, same-file function
result or parameter that leads back to it (parameters through every same-file caller). A batch
move is a `.cuda()` or `.to(<device>)` call whose receiver derives from a loop's target: through
unpacking, indexing, comprehensions over the batch, tensor methods, and parameters of same-file
functions called with batch values. `may_be_accelerator` tells a device expression that can name
a GPU from a name only ever bound to the CPU. Built lazily, only for files whose rules ask.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, cast

import libcst as cst

from torchlint.analysis.loops import LoopFacts, unwrap_iterable
from torchlint.analysis.model import Binding, BindingKind, SemanticModel
from torchlint.analysis.names import WRITER_NAME
from torchlint.analysis.nodes import COMPREHENSIONS, find_all, in_loop_body, returned_values
from torchlint.analysis.symbols import dotted
from torchlint.diagnostics import Edit, Position

if TYPE_CHECKING:
    from torchlint.analysis.context import FileContext

_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
DATASETS = frozenset(
    {
        "torch.utils.data.Dataset",
        "torch.utils.data.dataset.Dataset",
        "torch.utils.data.IterableDataset",
        "torch.utils.data.dataset.IterableDataset",
    }
)
_ITERABLE_DATASETS = frozenset(
    {
        "torch.utils.data.IterableDataset",
        "torch.utils.data.dataset.IterableDataset",
        "torch.utils.data.IterDataPipe",
        "torch.utils.data.datapipes.datapipe.IterDataPipe",
    }
)
# The methods of a dataset that a loader calls per sample (or per batch of indices).
_SAMPLE_METHODS = frozenset({"__getitem__", "__getitems__"})
# Classes of libraries that build their data once, by calling these methods of a subclass: PyTorch
# Geometric's and DGL's datasets process the raw files from their constructor and cache the
# result; nerfstudio's data managers ask a dataparser for its outputs once per split, at set-up.
# Any other dataset is built by its constructor. The first entry a class derives from counts.
_BUILDERS: tuple[tuple[frozenset[str], frozenset[str]], ...] = (
    (
        frozenset(
            {
                "torch_geometric.data.Dataset",
                "torch_geometric.data.InMemoryDataset",
                "torch_geometric.data.dataset.Dataset",
                "torch_geometric.data.in_memory_dataset.InMemoryDataset",
                "dgl.data.DGLDataset",
                "dgl.data.dgl_dataset.DGLDataset",
            }
        ),
        frozenset({"__init__", "process", "download"}),
    ),
    (
        frozenset({"nerfstudio.data.dataparsers.base_dataparser.DataParser"}),
        frozenset({"__init__", "_generate_dataparser_outputs"}),
    ),
    (DATASETS, frozenset({"__init__"})),
)
# Methods that serve samples or sizes after the build, whoever calls them (PyG's `get`, `len`).
_SERVING_METHODS = _SAMPLE_METHODS | frozenset({"__iter__", "__len__", "get", "len"})
# Words in the name of a dataset class that streams its samples (`WebDataset`, `StreamingDataset`).
_STREAM_WORDS = ("Iterable", "Stream", "WebDataset", "IterDataPipe")
# DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, collate_fn, pin_memory, ...,
# *, prefetch_factor, persistent_workers, ...)
_POSITION = {
    "batch_size": 1,
    "shuffle": 2,
    "sampler": 3,
    "batch_sampler": 4,
    "num_workers": 5,
    "collate_fn": 6,
    "pin_memory": 7,
}
_ITERATION_METHODS = frozenset({"items", "values"})
# Tensor methods that give a view of a batch tensor's own memory (on the contiguous tensors the
# default collation builds): what the loader pinned is what gets copied.
_VIEW_METHODS = _ITERATION_METHODS | frozenset(
    "contiguous squeeze unsqueeze view reshape permute transpose flatten detach pin_memory t".split()
)
_MAX_DEPTH = 8
_MAX_CALL_DEPTH = 3  # callers followed to find the loops that run a function again
Loop = cst.For | cst.CompFor
# What runs its body only sometimes: a branch, a handler, a comprehension, deferred code.
_BRANCHING = (
    cst.If,
    cst.IfExp,
    cst.While,
    cst.Try,
    cst.TryStar,
    cst.BooleanOperation,
    cst.Match,
    cst.Lambda,
    cst.FunctionDef,
    cst.ClassDef,
    *COMPREHENSIONS,
)


@dataclass(frozen=True)
class LoaderArgs:
    """What a DataLoader construction says about its options; None means not given."""

    num_workers: cst.BaseExpression | None
    pin_memory: cst.BaseExpression | None
    collate_fn: cst.BaseExpression | None
    batch_size: cst.BaseExpression | None
    dataset: cst.BaseExpression | None
    has_star: bool  # `*args` or `**kwargs`: any option may be among them
    sampler: cst.BaseExpression | None = None
    batch_sampler: cst.BaseExpression | None = None
    persistent_workers: cst.BaseExpression | None = None

    @property
    def pins(self) -> bool:
        """`pin_memory=` given something other than a literal false value."""
        value = self.pin_memory
        if value is None:
            return False
        return not (
            isinstance(value, cst.Name)
            and value.value in ("False", "None")
            or isinstance(value, cst.Integer)
            and value.value == "0"
        )


def is_dataloader(ctx: FileContext, call: cst.Call) -> bool:
    return ctx.symbols.qualname(call.func) in _LOADERS


def loader_args(call: cst.Call) -> LoaderArgs:
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}

    def option(name: str) -> cst.BaseExpression | None:
        if name in keywords:
            return keywords[name]
        at = _POSITION.get(name)
        return positional[at] if at is not None and at < len(positional) else None

    return LoaderArgs(
        num_workers=option("num_workers"),
        pin_memory=option("pin_memory"),
        collate_fn=option("collate_fn"),
        batch_size=option("batch_size"),
        dataset=positional[0] if positional else keywords.get("dataset"),
        has_star=any(a.star for a in call.args),
        sampler=option("sampler"),
        batch_sampler=option("batch_sampler"),
        persistent_workers=option("persistent_workers"),
    )


def derives_from(
    ctx: FileContext, func: cst.BaseExpression, classes: frozenset[str], depth: int = 0
) -> bool:
    """Whether `func` names one of `classes` (full names) or a class derived from one: a class of
    the file (through its bases) or one imported from another file of the project."""
    name = dotted(func)
    if name is None or depth > _MAX_DEPTH:
        return False
    if ctx.symbols.qualname(func) in classes:
        return True
    own = ctx.fact(SemanticModel).classes.get(name)
    if own is not None:
        return any(derives_from(ctx, base.value, classes, depth + 1) for base in own.bases)
    if ctx.project is None:
        return False
    return bool(ctx.project.derives_from(Path(ctx.path), name, classes))


def keyword_edits(ctx: FileContext, call: cst.Call, values: dict[str, str]) -> list[Edit]:
    """Edits setting `name=value` for each of `values` in `call`: an existing keyword's value is
    replaced; the others are inserted after the last argument, separated as the arguments before
    it are (one per line stays one per line; a trailing comma stays trailing)."""
    edits: list[Edit] = []
    new: list[str] = []
    for name, value in values.items():
        arg = next(
            (a for a in call.args if a.keyword is not None and a.keyword.value == name), None
        )
        if arg is not None:
            edits.append(ctx.replace(arg.value, value))
        else:
            new.append(f"{name}={value}")
    if not new:
        return edits
    args = call.args
    if not args:
        end = ctx.end(call)
        at = Position(end.row, end.column - 1)  # before the closing parenthesis
        return [*edits, Edit(at, at, ", ".join(new))]
    separator = ", "
    if len(args) > 1:
        between = _text(ctx, ctx.end(args[-2].value), ctx.start(args[-1]))
        if between.startswith(",") and "#" not in between and "\\" not in between:
            separator = between
    elif isinstance(
        args[0].comma, cst.Comma
    ):  # `f(\n    x,\n)`: the new argument goes on a line of its own
        opening = _text(ctx, ctx.end(call.func), ctx.start(args[0]))
        if "\n" in opening and "#" not in opening:
            separator = "," + opening[opening.index("\n") :]
    text = "".join(separator + item for item in new)
    return [*edits, ctx.insert_after(args[-1].value, text)]


def _text(ctx: FileContext, start: Position, end: Position) -> str:
    """The source between two positions."""
    if start.row == end.row:
        return ctx.line(start.row)[start.column - 1 : end.column - 1]
    middle = [ctx.line(row) for row in range(start.row + 1, end.row)]
    return "\n".join(
        [ctx.line(start.row)[start.column - 1 :], *middle, ctx.line(end.row)[: end.column - 1]]
    )


class DataLoaders:
    """DataLoader constructions, the loops they feed and those loops' batch moves, via `ctx.fact(DataLoaders)`.

    Ask after the traversal (in a rule's `finish`): it needs the complete parent map.
    """

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.scopes = ctx.fact(SemanticModel)
        self.loops = ctx.fact(LoopFacts)
        self.constructions: dict[cst.Call, LoaderArgs] = {
            call: loader_args(call) for call in self.scopes.calls if is_dataloader(ctx, call)
        }
        self._sources_memo: dict[cst.CSTNode, frozenset[cst.Call]] = {}
        self._origins_memo: dict[tuple[cst.CSTNode, frozenset[str] | None], frozenset[Loop]] = {}

    # -- which loops each loader feeds -------------------------------------------------
    @cached_property
    def fed_loops(self) -> dict[Loop, frozenset[cst.Call]]:
        """Every `for` loop or comprehension over batches of a DataLoader built in this file, with those loaders."""
        if not self.constructions:
            return {}
        fed: dict[Loop, frozenset[cst.Call]] = {}
        for node in self.scopes.parents:  # every node: an exact type test, not ABCMeta's hook
            if type(node) is cst.For or type(node) is cst.CompFor:
                loaders = self.sources(node.iter)
                if loaders:
                    fed[node] = loaders
        return fed

    def yields_device_samples(self, iterable: cst.BaseExpression) -> bool:
        """Whether iterating `iterable` gives batches of a loader whose dataset puts every sample on the device."""
        return any(self.moves_own_samples(loader) for loader in self.sources(iterable))

    def moves_own_samples(self, loader: cst.Call) -> bool:
        """A loader over an instance of a dataset class of this file whose code moves samples to the
        device (`return img.to(device)` in `__getitem__`): its batches are already there."""
        args = self.constructions.get(loader)
        dataset = args.dataset if args is not None else None
        if isinstance(dataset, cst.Name):
            bindings = self.scopes.reaching(dataset)
            dataset = (
                bindings[0].value
                if len(bindings) == 1 and bindings[0].kind is BindingKind.ASSIGN
                else None
            )
        return isinstance(dataset, cst.Call) and self.builds_device_samples(dataset)

    def collates_on_device(self, loader: cst.Call) -> bool:
        """The loader's `collate_fn` (a function of the file, a lambda, a `functools.partial`,
        and the file's functions they call) moves something to the device (`wave.to("cuda")`
        to compute features there): its batches hold device tensors, which `pin_memory=True`
        cannot pin (it raises) and forked workers cannot build. Not every field of such a
        batch need be on the device, so its batches are not device tensors for TensorFacts."""
        args = self.constructions.get(loader)
        if args is None or args.collate_fn is None:
            return False
        seen: set[cst.CSTNode] = set()
        frontier: list[cst.FunctionDef | cst.Lambda] = self._collate_functions(args.collate_fn)
        for _ in range(_MAX_CALL_DEPTH + 1):
            reached: list[cst.FunctionDef | cst.Lambda] = []
            for function in frontier:
                if function in seen:
                    continue
                seen.add(function)
                for call in self._calls_in.get(function, ()):
                    if self.loops.moves_to_device(call):
                        return True
                    reached += self.scopes.callees.get(call, ())
            frontier = reached
        return False

    def builds_device_samples(self, dataset: cst.Call) -> bool:
        """`MyDataset(...)` of a dataset class of this file whose code moves samples to the
        device: what it serves is already there."""
        if not isinstance(dataset.func, cst.Name):
            return False
        owner = self.scopes.classes.get(dataset.func.value)
        if owner is None:
            return False
        return any(
            self.loops.moves_to_device(call)
            for call in self.scopes.calls
            if self.scopes.is_ancestor(owner, call)
        )

    @cached_property
    def sample_code(self) -> dict[cst.FunctionDef | cst.Lambda, str]:
        """The code a loader runs per sample or batch, in its worker processes when it has
        workers: `__getitem__`/`__getitems__` of the file's `Dataset` classes, the functions
        passed as `collate_fn=` (a def, a lambda, `functools.partial(f, ...)`), and the file's
        functions and methods those call. Each with what it is, as the findings name it."""
        found: dict[cst.FunctionDef | cst.Lambda, str] = {}
        for method in (m for name in _SAMPLE_METHODS for m in self.scopes.functions.get(name, ())):
            # by method, not by class name: a notebook may define the same class in several cells
            klass = self.scopes.method_class(method)
            if klass is not None and any(
                derives_from(self.ctx, base.value, DATASETS) for base in klass.bases
            ):
                found[method] = f"`{klass.name.value}.{method.name.value}`"
        for args in self.constructions.values():
            for function in self._collate_functions(args.collate_fn):
                found.setdefault(function, "`collate_fn`")
        frontier = list(found)
        for _ in range(_MAX_CALL_DEPTH):
            reached: list[cst.FunctionDef | cst.Lambda] = []
            for function in frontier:
                for call in self._calls_in.get(function, ()):
                    for callee in self.scopes.callees.get(call, ()):
                        if callee not in found:
                            found[callee] = found[function]
                            reached.append(callee)
            frontier = reached
        return found

    @cached_property
    def build_code(self) -> frozenset[cst.FunctionDef]:
        """The methods of the file's dataset classes that run while a dataset object is built:
        its constructor, the hooks a library's class runs once to build it (`process()`,
        `download()`, a nerfstudio dataparser's outputs per split: `_BUILDERS`), and the
        methods only those call as `self.m(...)` (recursion included, as in a `_load()` that
        processes and then loads again). Their loops go over the raw data once, not per step."""
        found: set[cst.FunctionDef] = set()
        for klass in self.scopes.classes.values():
            found |= self._build_methods(klass)
        return frozenset(found)

    def _build_methods(self, klass: cst.ClassDef) -> set[cst.FunctionDef]:
        hooks = self._build_hooks(klass)
        if not hooks:
            return set()
        body = klass.body.body if isinstance(klass.body, cst.IndentedBlock) else ()
        methods = [m for m in body if isinstance(m, cst.FunctionDef)]
        build = {m for m in methods if m.name.value in hooks}
        grown = bool(build)
        while grown:
            grown = False
            for method in methods:
                if method in build or method.name.value in _SERVING_METHODS:
                    continue
                sites = self.loops.self_call_sites(method, klass)
                if sites and all(
                    self._caller(s) in build or self._caller(s) is method for s in sites
                ):
                    build.add(method)
                    grown = True
        return build

    def _build_hooks(self, klass: cst.ClassDef) -> frozenset[str]:
        """The methods a class's library base runs once while building its data (`_BUILDERS`)."""
        bases = [base.value for base in klass.bases]
        for classes, hooks in _BUILDERS:
            if any(derives_from(self.ctx, base, classes) for base in bases):
                return hooks
        return frozenset()

    def _caller(self, node: cst.CSTNode) -> cst.FunctionDef | cst.Lambda | None:
        """The function or lambda whose own code holds `node`."""
        for parent in self.scopes.ancestors(node):
            if isinstance(parent, cst.FunctionDef | cst.Lambda):
                return parent
        return None

    def build_pass(self, node: cst.CSTNode) -> str | None:
        """How `node` runs while a dataset is built: "once" in the build's straight-line code,
        "piece" where a loop or comprehension of the build repeats it over the data (once per
        item, in the one pass the build makes), None outside build code."""
        if not self.build_code:
            return None
        looped = False
        child = node
        for parent in self.scopes.ancestors(node):
            if isinstance(parent, cst.For | cst.While):
                looped = looped or in_loop_body(parent, child)
            elif isinstance(parent, COMPREHENSIONS):
                looped = True
            elif isinstance(parent, cst.Lambda):
                return None
            elif isinstance(parent, cst.FunctionDef):
                if parent not in self.build_code:
                    return None
                return "piece" if looped else "once"
            child = parent
        return None

    @cached_property
    def _calls_in(self) -> dict[cst.CSTNode, list[cst.Call]]:
        """The calls of each function (and lambda) of the file, in their own bodies."""
        found: dict[cst.CSTNode, list[cst.Call]] = {}
        for call in self.scopes.calls:
            for parent in self.scopes.ancestors(call):
                if isinstance(parent, cst.FunctionDef | cst.Lambda):
                    found.setdefault(parent, []).append(call)
                    break
        return found

    def serves_samples(self, function: cst.FunctionDef) -> bool:
        """Whether `function` is a dataset's method that hands out samples, whoever calls it
        (`__getitem__`, `__iter__`, PyTorch Geometric's `get`): it runs once per sample."""
        if function.name.value not in _SERVING_METHODS - {"__len__", "len"}:
            return False
        klass = self.scopes.method_class(function)
        return klass is not None and bool(self._build_hooks(klass))

    def sample_function(self, node: cst.CSTNode) -> str | None:
        """What per-sample code runs `node` (`Images.__getitem__`, `collate_fn`), if any."""
        for parent in self.scopes.ancestors(node):
            if isinstance(parent, cst.FunctionDef | cst.Lambda):
                found = self.sample_code.get(parent)
                if found is not None:
                    return found
                if isinstance(parent, cst.FunctionDef):
                    return None
        return None

    def _collate_functions(
        self, node: cst.BaseExpression | None
    ) -> list[cst.FunctionDef | cst.Lambda]:
        if isinstance(node, cst.Lambda):
            return [node]
        if isinstance(node, cst.Call) and (
            self.ctx.symbols.qualname(node.func) == "functools.partial"
        ):
            first = next((a.value for a in node.args if a.keyword is None and not a.star), None)
            return self._collate_functions(first)
        if not isinstance(node, cst.Name):
            return []
        return [
            b.node
            for b in self.scopes.reaching(node)
            if b.kind == "def" and isinstance(b.node, cst.FunctionDef)
        ]

    def streams(self, loader: cst.Call) -> bool:
        """The loader's dataset evidently streams (an `IterableDataset`, a class named for
        streaming, `streaming=True`): it is not indexed by a sampler, and usually splits its
        data between workers and ranks itself."""
        args = self.constructions.get(loader)
        dataset = args.dataset if args is not None else None
        if isinstance(dataset, cst.Name):
            bindings = self.scopes.reaching(dataset)
            dataset = bindings[0].exact if len(bindings) == 1 else None
        while isinstance(dataset, cst.Call) and isinstance(dataset.func, cst.Attribute):
            if any(a.keyword is not None and a.keyword.value == "streaming" for a in dataset.args):
                return True
            dataset = dataset.func.value  # `WebDataset(urls).shuffle(1000).decode()`
        if not isinstance(dataset, cst.Call):
            return False
        if any(a.keyword is not None and a.keyword.value == "streaming" for a in dataset.args):
            return True
        name = dotted(dataset.func) or ""
        if any(word in name.rsplit(".", 1)[-1] for word in _STREAM_WORDS):
            return True
        return derives_from(self.ctx, dataset.func, _ITERABLE_DATASETS)

    def loops_of(self, loader: cst.Call) -> list[Loop]:
        return [loop for loop, loaders in self.fed_loops.items() if loader in loaders]

    def reiterated(self, loader: cst.Call) -> cst.For | cst.While | None:
        """A loop that runs one of the loader's loops again and again without building the loader
        anew (an epoch loop around `for batch in loader:`, or around a call of the function
        holding it), else None. A loader built inside that loop, itself or through a call of
        the function that builds it, is a new loader each time: its workers start anyway."""
        builds = self._runs_of(loader)
        for fed in self.loops_of(loader):
            for run in self._runs_of(fed, loader):
                for outer in self._loops_around(run):
                    if outer is not fed and not any(
                        self.scopes.is_ancestor(outer, site) for site in builds
                    ):
                        return outer
        return None

    def _runs_of(self, node: cst.CSTNode, loader: cst.Call | None = None) -> list[cst.CSTNode]:
        """`node`, and the calls that run it: those of the function holding it, and theirs. With
        `loader`, of the calls that pass arguments only those that pass that loader: a helper
        looping over what it is given runs the validation loader per epoch, the test loader once."""
        found = [node]
        frontier = [node]
        for _ in range(_MAX_CALL_DEPTH):
            calls: list[cst.CSTNode] = [
                call
                for inner in frontier
                if (function := self.scopes.function_of(inner)) is not None
                for call in self.scopes.callers.get(function, ())
                if call not in found
            ]
            if loader is not None:
                passing = [c for c in calls if self._passes(c, loader)]
                calls = passing or calls
            if not calls:
                break
            found += calls
            frontier = calls
        return found

    def _passes(self, call: cst.CSTNode, loader: cst.Call) -> bool:
        return isinstance(call, cst.Call) and any(
            loader in self.sources(arg.value) for arg in call.args
        )

    def _loops_around(self, node: cst.CSTNode) -> list[cst.For | cst.While]:
        """The `for`/`while` loops whose body holds `node`, up to its function."""
        found: list[cst.For | cst.While] = []
        child = node
        for parent in self.scopes.ancestors(node):
            if isinstance(parent, cst.FunctionDef | cst.Lambda | cst.ClassDef):
                break
            if isinstance(parent, cst.For | cst.While) and child is parent.body:
                found.append(parent)
            child = parent
        return found

    def sources(self, node: cst.BaseExpression, depth: int = 0) -> frozenset[cst.Call]:
        """The DataLoader constructions of this file whose batches iterating `node` yields."""
        if depth > _MAX_DEPTH:
            return frozenset()
        memo = self._sources_memo.get(node)
        if memo is not None:
            return memo
        self._sources_memo[node] = frozenset()  # a cycle through bindings finds nothing
        found: set[cst.Call] = set()
        for inner in unwrap_iterable(node):
            found |= self._sources_of(inner, depth)
        result = self._sources_memo[node] = frozenset(found)
        return result

    def _sources_of(self, node: cst.BaseExpression, depth: int) -> set[cst.Call]:
        if isinstance(node, cst.IfExp):  # `DataLoader(...) if val_data is not None else None`
            return set(self.sources(node.body, depth + 1) | self.sources(node.orelse, depth + 1))
        if isinstance(node, cst.Call):
            if node in self.constructions:
                return {node}
            return {
                loader
                for f in self.scopes.callees.get(node, ())
                for r in returned_values(f)
                for loader in self.sources(r, depth + 1)
            }
        if not isinstance(node, cst.Name | cst.Attribute):
            return set()
        found: set[cst.Call] = set()
        # A name read where it is bound holds what the last binding before it gave (a notebook
        # rebinds `train_loader` cell after cell); read from elsewhere, any binding.
        bindings = (
            self.scopes.reaching(node)
            if isinstance(node, cst.Name)
            else self.scopes.all_bindings(node)
        )
        for binding in bindings:
            found |= self._binding_sources(binding, depth)
        return found

    def _binding_sources(self, binding: Binding, depth: int) -> set[cst.Call]:
        if binding.kind in (BindingKind.ASSIGN, BindingKind.WITH) and binding.value is not None:
            return set(self.sources(binding.value, depth + 1))
        if (
            binding.kind is BindingKind.UNPACK
            and isinstance(binding.value, cst.Call)
            and len(binding.path) == 1
        ):
            # `train_loader, val_loader = make_loaders()`: the returned tuples' elements
            found: set[cst.Call] = set()
            for function in self.scopes.callees.get(binding.value, ()):
                for returned in returned_values(function):
                    element = _element(returned, binding.path[0])
                    if element is not None:
                        found |= self.sources(element, depth + 1)
            return found
        if binding.kind is BindingKind.PARAM and isinstance(binding.node, cst.Param):
            return {
                loader
                for value in self._arguments(binding.node)
                for loader in self.sources(value, depth + 1)
            }
        return set()

    def _arguments(self, param: cst.Param) -> list[cst.BaseExpression]:
        """What the same-file callers of `param`'s function pass for it."""
        return [value for _, value in self.scopes.arguments(param) if value is not None]

    def pins(self, loader: cst.Call) -> bool:
        """Whether a loader of this file may pin memory: `pin_memory=` given something other than
        a literal false value, or a command-line option the file's parser leaves off unless it is
        passed (`args.pin_memory` of `add_argument("--pin_memory", action="store_true")`)."""
        args = self.constructions[loader]
        value = args.pin_memory
        return args.pins and not (value is not None and self._option_off(value))

    def _option_off(self, value: cst.BaseExpression) -> bool:
        """`args.<dest>` where every `add_argument` of the file that declares `dest` defaults it to
        a false value, and no `set_defaults` call names it."""
        declared = self._declarations(value)
        return bool(declared) and all(c is not None and _defaults_off(c) for c in declared)

    def zero_by_default(self, value: cst.BaseExpression) -> bool:
        """`args.<dest>` where every `add_argument` of the file that declares `dest` writes
        `default=0` (`--num_workers` left at 0 unless passed), and no `set_defaults` names it."""
        declared = self._declarations(value)
        return bool(declared) and all(
            c is not None and _keyword(c, "action") is None and _is_zero(_keyword(c, "default"))
            for c in declared
        )

    def _declarations(self, value: cst.BaseExpression) -> list[cst.Call | None]:
        """The file's declarations of the option `args.<dest>` reads: its `add_argument` calls,
        and None for each `set_defaults` call that names it."""
        if not isinstance(value, cst.Attribute):
            return []
        return self._command_line_options.get(value.attr.value, [])

    @cached_property
    def _command_line_options(self) -> dict[str, list[cst.Call | None]]:
        """Per option of the file's argument parsers, the `add_argument` calls that declare it,
        and None for each `set_defaults(name=...)` that names it."""
        found: dict[str, list[cst.Call | None]] = {}
        for call in self.scopes.calls:
            func = call.func
            if not isinstance(func, cst.Attribute):
                continue
            if func.attr.value == "set_defaults":
                for arg in call.args:
                    if arg.keyword is not None:
                        found.setdefault(arg.keyword.value, []).append(None)
            elif func.attr.value == "add_argument":
                dest = _dest(call)
                if dest is not None:
                    found.setdefault(dest, []).append(call)
        return found

    # -- where batches go to the device ------------------------------------------------
    @cached_property
    def moves(self) -> dict[Loop, list[cst.Call]]:
        """For each fed loop, the device moves of values computed from its batches (what each
        copies: `copies_loaded_memory`)."""
        fed = self.fed_loops
        if not fed:
            return {}
        found: dict[Loop, list[cst.Call]] = {}
        for call in self.scopes.calls:
            receiver = self.moved(call)
            if receiver is None:
                continue
            for loop in self.origins(receiver, None):
                if loop in fed:
                    found.setdefault(loop, []).append(call)
        return found

    def copies_per_batch(self, loop: Loop, move: cst.Call) -> bool:
        """Whether a device move of `loop` may run once per batch: not in a loop that leaves
        after its first batch (`LoopFacts.first_pass_only`: `for x, y in loader: ...; break`, a
        data-dependent initialization), unless a per-batch loop around it runs it again (a
        helper that takes one batch, called every step)."""
        return not self.loops.first_pass_only(loop) or (
            self.loops.per_batch_loop(move, every_iteration=False) is not None
        )

    def copies_loaded_memory(self, loop: Loop, move: cst.Call) -> bool:
        """Whether a device move of `loop` copies the memory the loader put the batch in (so
        `pin_memory=True` would have pinned it): the batch tensor itself, an element, or a view
        of one. Not a tensor the loop made anew on the host first (`x.float()`, `x.clone()`,
        `torch.from_numpy(...)`, `torch.stack(batch)`, `x / 255`): that is pageable whatever
        the loader pins (a cast to the dtype the batch already has returns the batch itself,
        but nothing here says which dtype that is)."""
        receiver = self.moved(move)
        return receiver is not None and loop in self.origins(receiver, _VIEW_METHODS)

    def moved(self, call: cst.Call) -> cst.BaseExpression | None:
        """The receiver of a `.cuda(...)` or `.to(<device>, ...)` call whose result is used, else None
        (a tensor's `x.to(device)` on its own line moves nothing: the copy is dropped)."""
        func = call.func
        if not isinstance(func, cst.Attribute) or isinstance(
            self.scopes.parents.get(call), cst.Expr
        ):
            return None
        if func.attr.value == "cuda":
            return func.value
        if func.attr.value != "to":
            return None
        target = _move_target(call)
        return func.value if target is not None and self.may_be_accelerator(target) else None

    def to_cuda(self, call: cst.Call) -> bool:
        """Whether a device move may target a CUDA GPU, which page-locked memory and asynchronous
        copies serve: not a move to a device whose every written value names another backend
        (`torch.device("mps" if torch.backends.mps.is_available() else "cpu")`)."""
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "cuda":
            return True
        target = _move_target(call)
        if target is None:
            return False
        strings = self.loops.device_strings(target)
        return strings is None or any(value.startswith("cuda") for value in strings)

    def may_be_accelerator(self, node: cst.BaseExpression) -> bool:
        """A device expression that can name a GPU: device-like, and not a name only ever bound to the CPU
        (`device = torch.device("cpu")`)."""
        if not self.loops.is_device_like(node):
            return False
        if not isinstance(node, cst.Name):
            return True  # an attribute may also be set in another module (a base class)
        return self.loops.device_strings(node) != {"cpu"}

    def origins(
        self, node: cst.BaseExpression, methods: frozenset[str] | None, depth: int = 0
    ) -> frozenset[Loop]:
        """The loader-fed loops whose targets `node`'s value derives from.

        With `methods`, only through names, indexing, unpacking and those methods (the steps
        that keep a batch tensor a batch tensor, or a view of its memory); with None, any
        computation from batch values counts (`torch.cat(batch)`, `model(x)`).
        """
        if depth > _MAX_DEPTH:
            return frozenset()
        key = (node, methods)
        memo = self._origins_memo.get(key)
        if memo is not None:
            return memo
        self._origins_memo[key] = frozenset()
        found = self._origins(node, methods, depth)
        result = self._origins_memo[key] = frozenset(found)
        return result

    def _origins(
        self, node: cst.BaseExpression, methods: frozenset[str] | None, depth: int
    ) -> set[Loop]:
        if isinstance(node, cst.Name):
            found: set[Loop] = set()
            for binding in self.scopes.reaching(node):
                found |= self._binding_origins(binding, methods, depth)
            return found
        if isinstance(node, cst.Subscript):
            return set(self.origins(node.value, methods, depth + 1))
        if isinstance(node, cst.Attribute):
            return (
                set(self.origins(node.value, methods, depth + 1))
                if not _is_self(node.value)
                else set()
            )
        if isinstance(node, cst.Call):
            return self._call_origins(node, methods, depth)
        if methods is None and isinstance(node, cst.BinaryOperation):
            return set(
                self.origins(node.left, methods, depth + 1)
                | self.origins(node.right, methods, depth + 1)
            )
        return set()

    def _call_origins(
        self, call: cst.Call, methods: frozenset[str] | None, depth: int
    ) -> set[Loop]:
        func = call.func
        if isinstance(func, cst.Attribute) and (methods is None or func.attr.value in methods):
            return set(self.origins(func.value, methods, depth + 1))
        if methods is not None:
            return set()
        found: set[Loop] = set()
        for arg in call.args:
            found |= self.origins(arg.value, methods, depth + 1)
        return found

    def _binding_origins(
        self, binding: Binding, methods: frozenset[str] | None, depth: int
    ) -> set[Loop]:
        value = binding.value
        if binding.kind is BindingKind.LOOP and value is not None:
            if (
                isinstance(value, cst.Call)
                and isinstance(value.func, cst.Name)
                and value.func.value == "enumerate"
                and binding.path[:1] == (0,)
            ):
                return set()  # the counter of `enumerate`
            if binding.node in self.fed_loops:
                return {binding.node}  # type: ignore[arg-type]
            return set(self.origins(value, methods, depth + 1))  # `for k, v in batch.items()`
        if (
            binding.kind in (BindingKind.ASSIGN, BindingKind.UNPACK, BindingKind.WITH)
            and value is not None
        ):
            return set(self.origins(value, methods, depth + 1))
        if binding.kind is BindingKind.PARAM and isinstance(binding.node, cst.Param):
            found: set[Loop] = set()
            for argument in self._arguments(binding.node):
                found |= self.origins(argument, methods, depth + 1)
            return found
        return set()

    def exports_per_batch(self, loader: cst.Call) -> bool:
        """Every loop over the loader is an export pass: it writes each batch's results to files
        as it goes (`torch.save(feat, path)`, `np.save(...)` per sample of the batch), outside
        any branch, and runs no backward or optimizer step, and nothing runs it again
        (precomputed features, synthesized spectrograms for a later stage). The per-batch read
        back and disk write pace the loop: a pinned copy of a batch the workers prepared saves
        nothing measurable. A loop that writes only under a flag (`if args.save_result:`) is
        an evaluation that may write nothing, and is not one."""
        from torchlint.analysis.training import Training

        loops = self.loops_of(loader)
        if not loops or self.reiterated(loader) is not None:
            return False
        steps = self.ctx.fact(Training).step_calls
        return all(
            isinstance(loop, cst.For)
            and not any(self.scopes.is_ancestor(loop, step) for step in steps)
            and any(
                _writes(call) and self._each_iteration(loop, call)
                for call in cast("list[cst.Call]", find_all(loop.body, cst.Call))
            )
            for loop in loops
        )

    def _each_iteration(self, loop: cst.For, node: cst.CSTNode) -> bool:
        """`node` runs in every iteration of `loop`: in its body with no branch, handler,
        comprehension or nested function between them (inner loops over the batch's samples
        and `with` blocks allowed)."""
        for parent in self.scopes.ancestors(node):
            if parent is loop:
                return True
            if isinstance(parent, _BRANCHING):
                return False
        return False


def _move_target(call: cst.Call) -> cst.BaseExpression | None:
    """The device a `.to(...)` call names: its first positional argument, or `device=`."""
    target = next((a.value for a in call.args if a.keyword is None and not a.star), None)
    if target is None:
        target = next(
            (a.value for a in call.args if a.keyword is not None and a.keyword.value == "device"),
            None,
        )
    return target


def _writes(call: cst.Call) -> bool:
    """A call named like a file writer (`torch.save`, `np.save`, `imwrite`, `save_image`)."""
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else dotted(func) or ""
    return bool(WRITER_NAME.search(name))


def _is_self(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value in ("self", "cls")


def _element(node: cst.BaseExpression, index: int) -> cst.BaseExpression | None:
    if isinstance(node, cst.Tuple | cst.List) and not any(
        isinstance(e, cst.StarredElement) for e in node.elements
    ):
        return node.elements[index].value if index < len(node.elements) else None
    return None


def _string(node: cst.BaseExpression | None) -> str | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    return next(
        (a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None
    )


def _dest(call: cst.Call) -> str | None:
    """The attribute an `add_argument(...)` call fills: `dest=`, else its first long option
    (`--pin-memory` -> `pin_memory`), else its positional name."""
    dest = _string(_keyword(call, "dest"))
    if dest is not None:
        return dest
    names = [_string(a.value) for a in call.args if a.keyword is None and not a.star]
    if not names or any(n is None for n in names):
        return None
    options = [n for n in names if n is not None]
    long = next((n for n in options if n.startswith("--")), None)
    if long is not None:
        return long[2:].replace("-", "_")
    return None if options[0].startswith("-") else options[0]


def _defaults_off(call: cst.Call) -> bool:
    """Whether an `add_argument(...)` call leaves its option false unless it is passed."""
    action = _keyword(call, "action")
    default = _keyword(call, "default")
    if action is not None:
        if _string(action) != "store_true":
            return False
        return default is None or _is_false(default)
    return default is None or _is_false(default)


def _is_zero(node: cst.BaseExpression | None) -> bool:
    return isinstance(node, cst.Integer) and node.evaluated_value == 0


def _is_false(node: cst.BaseExpression) -> bool:
    return (isinstance(node, cst.Name) and node.value in ("False", "None")) or (
        isinstance(node, cst.Integer) and node.value == "0"
    )
