"""Whether a value is evidently a tensor, a tensor known to be on the CPU, or no tensor at all.

Local provenance only: what the expression is (a torch op, a model or loss call, `.sum()` of
a tensor, a numeric literal, `.item()`), and for names what they were last bound to in the
same scope. Anything without such evidence is UNKNOWN, and rules stay quiet on UNKNOWN where
precision needs it.
"""

from __future__ import annotations

from collections import defaultdict
from enum import Enum
from functools import cached_property
from typing import TYPE_CHECKING, cast

import libcst as cst

from torchlint.analysis.availability import runs_without_cuda
from torchlint.analysis.dataloaders import DataLoaders
from torchlint.analysis.dead_branches import DeadBranches
from torchlint.analysis.loops import LoopFacts, unwrap_iterable
from torchlint.analysis.model import Binding, BindingKind, SemanticModel, target_names
from torchlint.analysis.names import is_loss_name, is_module_name, is_setting, name_tokens
from torchlint.analysis.nodes import own_returns
from torchlint.analysis.symbols import dotted

if TYPE_CHECKING:
    from torchlint.analysis.context import FileContext


class Kind(Enum):
    TENSOR = "tensor"  # a tensor that may live on an accelerator
    HOST_TENSOR = (
        "host-tensor"  # a tensor known to be on the CPU (`.cpu()`, a DataLoader batch not moved)
    )
    NOT_TENSOR = (
        "not-tensor"  # Python numbers, strings, containers, numpy values, `.item()` results
    )
    UNKNOWN = "unknown"


# Attributes of pandas objects that `torch.Tensor` lacks: a value the code reads one of is no
# tensor (`cols.get_loc("mask")` on a pandas Index), so its `.tolist()` copies nothing.
_PANDAS_ONLY = frozenset({"get_loc", "get_indexer", "iloc", "loc", "iat", "to_numpy", "to_frame"})

_TENSOR_MODULES = ("torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special")
# torch.* functions that return no tensor (or that build one on the CPU, handled apart).
_TORCH_NON_TENSOR = frozenset(
    {
        "is_tensor",
        "is_storage",
        "is_floating_point",
        "is_complex",
        "is_nonzero",
        "numel",
        "device",
        "dtype",
        "Size",
        "no_grad",
        "enable_grad",
        "inference_mode",
        "set_grad_enabled",
        "is_grad_enabled",
        "manual_seed",
        "seed",
        "initial_seed",
        "save",
        "load",
        "compile",
        "get_default_dtype",
        "set_default_dtype",
        "typename",
        "get_num_threads",
        "set_num_threads",
        "is_inference_mode_enabled",
        "use_deterministic_algorithms",
        "is_autocast_enabled",
        "autocast",
        "finfo",
        "iinfo",
        "broadcast_shapes",
        "result_type",
        "promote_types",
        "can_cast",
        "get_rng_state",
        "set_rng_state",
        "set_printoptions",
        "equal",
        "allclose",
        "are_deterministic_algorithms_enabled",
    }
)
_TORCH_CREATION = frozenset(
    {
        "tensor",
        "as_tensor",
        "from_numpy",
        "zeros",
        "ones",
        "empty",
        "full",
        "arange",
        "range",
        "linspace",
        "logspace",
        "rand",
        "randn",
        "randint",
        "randperm",
        "eye",
        "asarray",
        "frombuffer",
        "Tensor",
        "FloatTensor",
        "LongTensor",
        "IntTensor",
        "BoolTensor",
        "DoubleTensor",
        "HalfTensor",
        "ByteTensor",
    }
)
# Functions outside torch's op modules that return one tensor on the parameters' device.
_PARAMETER_REDUCTIONS = frozenset(
    {
        "torch.nn.utils.clip_grad_norm_",
        "torch.nn.utils.clip_grad.clip_grad_norm_",
        "torch.nn.utils.get_total_norm",
    }
)
# Methods whose result is no tensor at all.
_SCALAR_METHODS = frozenset(
    {
        "item",
        "tolist",
        "size",
        "dim",
        "ndimension",
        "numel",
        "nelement",
        "element_size",
        "stride",
        "data_ptr",
        "is_contiguous",
        "is_floating_point",
        "get_device",
        "storage_offset",
        "numpy",
        "__len__",
        "keys",
        "items",
        "values",
    }
)
_HOST_ATTRIBUTES = frozenset(
    {
        "shape",
        "dtype",
        "device",
        "ndim",
        "is_cuda",
        "is_xpu",
        "is_mps",
        "is_meta",
        "is_sparse",
        "is_quantized",
        "is_mkldnn",
        "is_nested",
        "requires_grad",
        "layout",
        "is_leaf",
        "names",
        "grad_fn",
    }
)
_NUMBER_BUILTINS = frozenset(
    {
        "float",
        "int",
        "bool",
        "len",
        "str",
        "repr",
        "round",
        "isinstance",
        "hasattr",
        "id",
        "hash",
        "format",
    }
)
_STRING_NODES = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
_CONTAINER_NODES = (
    cst.List,
    cst.Tuple,
    cst.Dict,
    cst.Set,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.GeneratorExp,
)
_LITERAL_NODES = frozenset(
    {cst.Integer, cst.Float, cst.Imaginary, *_STRING_NODES, *_CONTAINER_NODES}
)


def _constructs_object(node: cst.BaseExpression) -> bool:
    """`DQN(n_actions)`, `nn.Linear(3, 4)`: a class built, which a tensor never is (save the legacy
    `torch.FloatTensor(...)` constructors and `Variable(...)`/`Parameter(...)`)."""
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    name = (
        func.attr.value
        if isinstance(func, cst.Attribute)
        else func.value
        if isinstance(func, cst.Name)
        else ""
    )
    return (
        name[:1].isupper() and not name.endswith("Tensor") and name not in ("Variable", "Parameter")
    )


def join(kinds: list[Kind]) -> Kind:
    """The kind of a value that is one of `kinds`, when they agree."""
    unique = set(kinds)
    if len(unique) == 1:
        return kinds[0]
    if unique == {Kind.TENSOR, Kind.HOST_TENSOR}:
        return Kind.TENSOR
    return Kind.UNKNOWN


def combine(kinds: list[Kind]) -> Kind:
    """The kind of arithmetic on operands of `kinds`: any device tensor makes a device tensor."""
    if Kind.TENSOR in kinds:
        return Kind.TENSOR
    if Kind.UNKNOWN in kinds:
        return Kind.UNKNOWN
    return Kind.HOST_TENSOR if Kind.HOST_TENSOR in kinds else Kind.NOT_TENSOR


class TensorFacts:
    """`kind(expr)` for expressions of one file, memoised, via `ctx.fact(TensorFacts)`."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.scopes = ctx.fact(SemanticModel)
        self.loops = ctx.fact(LoopFacts)
        self._memo: dict[cst.CSTNode, Kind] = {}
        self._tests_memo: dict[cst.CSTNode, tuple[cst.BaseExpression, ...]] = {}

    def is_tensor(self, node: cst.BaseExpression) -> bool:
        return self.kind(node) in (Kind.TENSOR, Kind.HOST_TENSOR)

    def on_host(self, node: cst.BaseExpression) -> bool:
        """Evidently not a device tensor: converting it to Python costs no device sync."""
        return self.kind(node) in (Kind.HOST_TENSOR, Kind.NOT_TENSOR)

    def dataset_sample(self, node: cst.BaseExpression) -> bool:
        """A sample read straight from a dataset, so host data: `dataset.get(i)`, `dataset[i]`,
        `self.train_dataset[i][0]`, where the name (its last word `dataset`) is bound only by
        calls that hand it no device tensor, none a dataset class of this file that moves its
        samples to the device, nor torch's `TensorDataset` of tensors not known to be on the
        host. A dataset serves samples from files or host memory, for loader workers to batch
        and a training loop to move (`gpt-neox`'s indexed token files read with `.get(i)`)."""
        read = False
        while isinstance(node, cst.Subscript):
            node, read = node.value, True
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in ("get", "__getitem__")
        ):
            node, read = node.func.value, True
        last = node.attr if isinstance(node, cst.Attribute) else node
        if not (
            read and isinstance(last, cst.Name) and name_tokens(last.value)[-1:] == ["dataset"]
        ):
            return False
        bindings = self.scopes.all_bindings(node)
        return bool(bindings) and all(self._host_dataset(b) for b in bindings)

    def _host_dataset(self, binding: Binding) -> bool:
        """`dataset = make_dataset(path, impl)`: built by a call whose samples stay on the host."""
        value = binding.value
        if binding.kind is not BindingKind.ASSIGN or not isinstance(value, cst.Call):
            return False
        if self.ctx.fact(DataLoaders).builds_device_samples(value):
            return False
        from_torch = (self.ctx.symbols.qualname(value.func) or "").startswith("torch.")
        return not any(
            self.kind(a.value) is Kind.TENSOR or (from_torch and not self.on_host(a.value))
            for a in value.args
        )

    def kind(self, node: cst.BaseExpression) -> Kind:
        found = self._memo.get(node)
        if found is None:
            self._memo[node] = Kind.UNKNOWN  # cycles through bindings answer UNKNOWN
            found = self._memo[node] = self._kind(node)
        return found

    def _kind(self, node: cst.BaseExpression) -> Kind:
        # Exact types: these node classes have no subclasses, and `isinstance` against libcst's
        # classes goes through ABCMeta in Python, once per class tried.
        kind = type(node)
        if kind in _LITERAL_NODES:
            return Kind.NOT_TENSOR
        if kind is cst.Name:
            return self._name(cast(cst.Name, node))
        if kind is cst.Attribute:
            return self._attribute(cast(cst.Attribute, node))
        if kind is cst.Call:
            return self._call(cast(cst.Call, node))
        if isinstance(node, cst.Subscript):
            base = self.kind(node.value)
            if base in (Kind.TENSOR, Kind.HOST_TENSOR):
                return base
            return Kind.TENSOR if self._moved_field(node) else Kind.UNKNOWN
        if isinstance(node, cst.BinaryOperation):
            if isinstance(node.left, _STRING_NODES):
                return Kind.NOT_TENSOR
            return combine([self.kind(node.left), self.kind(node.right)])
        if isinstance(node, cst.UnaryOperation):
            return (
                Kind.NOT_TENSOR
                if isinstance(node.operator, cst.Not)
                else self.kind(node.expression)
            )
        if isinstance(node, cst.Comparison):
            return self._comparison(node)
        if isinstance(node, cst.IfExp):
            branches = [
                b for b in (node.body, node.orelse) if not _is_none(b) and not _tested_none(node, b)
            ]
            return join(
                [self.kind(b) for b in branches]
            )  # `t if ok else None`: a tensor or nothing
        if isinstance(node, cst.NamedExpr):
            return self.kind(node.value)
        if isinstance(node, cst.BooleanOperation):
            return (
                Kind.NOT_TENSOR
                if join([self.kind(node.left), self.kind(node.right)]) is Kind.NOT_TENSOR
                else Kind.UNKNOWN
            )
        return Kind.UNKNOWN

    # -- names ---------------------------------------------------------------------------
    def _name(self, node: cst.Name) -> Kind:
        if node.value in ("True", "False", "None"):
            return Kind.NOT_TENSOR
        if self.type_test(node) is Kind.NOT_TENSOR:
            return Kind.NOT_TENSOR
        bindings = self.scopes.reaching(node)
        if not bindings:
            return Kind.UNKNOWN
        if (
            bindings[0].kind is not BindingKind.AUGMENT
            and len(bindings) > 1
            and all(b.kind is BindingKind.AUGMENT for b in bindings[1:])
        ):
            return self._accumulated(bindings)
        found = join([self._binding(b) for b in bindings])
        if found is Kind.UNKNOWN and self._read_as_pandas(node, bindings):
            return Kind.NOT_TENSOR
        if (
            found is Kind.HOST_TENSOR
            and node.value in self.scopes.mutated[self.scopes.scope_of(node)]
            and not all(_copied_to_host(b) for b in bindings)
        ):
            return Kind.UNKNOWN  # `batch[k] = batch[k].to(device)` may have moved what it holds
        return found

    def _read_as_pandas(self, node: cst.Name, bindings: list[Binding]) -> bool:
        """Whether the code reads a pandas-only attribute (`.get_loc`, `.iloc`) of the same value:
        a use of the name in its scope that the same bindings reach."""
        held = {id(b.node) for b in bindings}
        for use in self.scopes.uses(self.scopes.scope_of(node), node.value):
            parent = next(iter(self.scopes.ancestors(use)), None)
            if (
                isinstance(parent, cst.Attribute)
                and parent.value is use
                and parent.attr.value in _PANDAS_ONLY
                and {id(b.node) for b in self.scopes.reaching(use)} == held
            ):
                return True
        return False

    def type_test(self, node: cst.Name) -> Kind | None:
        """What an enclosing `if isinstance(x, np.ndarray):` / `if torch.is_tensor(x):` / `if hasattr(x, ...):` says `x` is.

        None when no such test encloses the name; UNKNOWN for tests that only say it has some attribute.
        """
        statement = self.scopes.statement_of(node)
        for test in self._tests_around(statement) if statement is not None else ():
            found = self._type_test(test, node.value)
            if found is not None:
                return found
        return None

    def _tests_around(self, statement: cst.CSTNode) -> tuple[cst.BaseExpression, ...]:
        """Tests of the `if` statements whose body holds `statement`, innermost first, within its function."""
        if statement in self._tests_memo:
            return self._tests_memo[statement]
        tests: tuple[cst.BaseExpression, ...] = ()
        child = statement
        for parent in self.scopes.ancestors(statement):
            if isinstance(parent, cst.FunctionDef | cst.Lambda | cst.ClassDef):
                break
            if isinstance(parent, cst.BaseCompoundStatement):
                outer = self._tests_around(parent)
                tests = (
                    (parent.test, *outer)
                    if isinstance(parent, cst.If) and child is parent.body
                    else outer
                )
                break
            child = parent
        self._tests_memo[statement] = tests
        return tests

    def _type_test(self, test: cst.BaseExpression, name: str) -> Kind | None:
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._type_test(test.left, name) or self._type_test(test.right, name)
        if not isinstance(test, cst.Call) or not test.args:
            return None
        subject = test.args[0].value
        if not isinstance(subject, cst.Name) or subject.value != name:
            return None
        called = self.ctx.symbols.qualname(test.func) or dotted(test.func)
        if called == "torch.is_tensor":
            return Kind.TENSOR
        if called == "hasattr":
            return Kind.UNKNOWN
        if called != "isinstance" or len(test.args) != 2:
            return None
        types = test.args[1].value
        options = [e.value for e in types.elements] if isinstance(types, cst.Tuple) else [types]
        names = [self.ctx.symbols.qualname(t) or dotted(t) or "" for t in options]
        if all(
            n.startswith("numpy.") or n in ("int", "float", "bool", "str", "list", "tuple", "dict")
            for n in names
        ):
            return Kind.NOT_TENSOR
        return Kind.TENSOR if any(n in ("torch.Tensor", "Tensor") for n in names) else Kind.UNKNOWN

    def _accumulated(self, bindings: list[Binding]) -> Kind:
        """`acc = 0.0` then `acc += x`: a tensor once any added value is a tensor."""
        kinds = [self._binding(bindings[0])] + [
            self.kind(b.value) for b in bindings[1:] if b.value is not None
        ]
        if kinds[0] is Kind.HOST_TENSOR and Kind.TENSOR not in kinds[1:]:
            return Kind.HOST_TENSOR  # `boxes /= ratio` works in place: a CPU tensor stays there
        return combine(kinds) if Kind.UNKNOWN not in kinds else Kind.UNKNOWN

    def _binding(self, binding: Binding) -> Kind:
        if binding.kind in (BindingKind.ASSIGN, BindingKind.AUGMENT) and binding.value is not None:
            found = self.kind(binding.value)
            if found is Kind.UNKNOWN and isinstance(binding.node, cst.AnnAssign):
                return self._annotated(binding.node.annotation)  # `loss: Tensor = a + b`
            return found
        if binding.kind is BindingKind.UNPACK and binding.value is not None:
            whole = self.kind(binding.value)  # `_, pred = torch.max(out, 1)`, `out, h = model(x)`
            if whole in (Kind.TENSOR, Kind.HOST_TENSOR):
                return whole
            return self._unpacked(binding.value, binding.path)
        if binding.kind is BindingKind.LOOP and binding.value is not None:
            return self._loop_element(binding)
        if binding.kind is BindingKind.PARAM and isinstance(binding.node, cst.Param):
            passed = self._argument(binding.node)  # callers know the device; an annotation does not
            return (
                passed if passed is not Kind.UNKNOWN else self._annotated(binding.node.annotation)
            )
        if binding.kind in (BindingKind.DEF, BindingKind.IMPORT):
            return Kind.NOT_TENSOR
        return Kind.UNKNOWN

    def _unpacked(self, value: cst.BaseExpression, path: tuple[int, ...]) -> Kind:
        """One element of what a function of the file returns: `x, offsets = unpack(batch)`
        where `unpack` returns `b[0], b[1]` (or a value that is itself a tensor, split along
        its first dimension)."""
        if isinstance(value, cst.Tuple | cst.List) and len(path) == 1:
            return self._element(value, path[0])  # `a, b = out.cpu(), img.cpu()`
        if isinstance(value, cst.Name) and len(path) == 1:
            built = [b.value for b in self.scopes.reaching(value)]
            if built and all(isinstance(b, cst.ListComp | cst.GeneratorExp) for b in built):
                # `tmp = [t.cuda() for t in tmp]`, then `a, b = tmp`: each is an element
                return join([self.kind(cast(cst.ListComp, b).elt) for b in built])
        functions = self.scopes.callees.get(value, []) if isinstance(value, cst.Call) else []
        if len(path) != 1 or len(functions) != 1:
            return Kind.UNKNOWN
        returns = [r.value for r in own_returns(functions[0])]
        if not returns or any(r is None for r in returns):
            return Kind.UNKNOWN
        return join([self._element(r, path[0]) for r in returns])  # type: ignore[arg-type]

    def _element(self, value: cst.BaseExpression, index: int) -> Kind:
        if isinstance(value, cst.Tuple | cst.List):
            elements = value.elements
            if index >= len(elements) or any(isinstance(e, cst.StarredElement) for e in elements):
                return Kind.UNKNOWN
            return self.kind(elements[index].value)
        whole = self.kind(value)
        return whole if whole in (Kind.TENSOR, Kind.HOST_TENSOR) else Kind.UNKNOWN

    def _loop_element(self, binding: Binding) -> Kind:
        """What a loop target holds: a counter, a batch of a DataLoader (CPU), a slice of a tensor."""
        iterable, path = binding.value, binding.path
        assert iterable is not None
        while (
            isinstance(iterable, cst.Call)
            and isinstance(iterable.func, cst.Name)
            and iterable.func.value in ("enumerate", "zip")
        ):
            positional = [a.value for a in iterable.args if a.keyword is None and not a.star]
            if not path:
                return Kind.NOT_TENSOR  # a whole tuple
            if iterable.func.value == "enumerate":
                if path[0] == 0:
                    return Kind.NOT_TENSOR
                iterable = positional[0] if positional else None
            else:
                iterable = positional[path[0]] if path[0] < len(positional) else None
            if iterable is None:
                return Kind.UNKNOWN
            path = path[1:]
        if (
            isinstance(iterable, cst.Call)
            and isinstance(iterable.func, cst.Name)
            and iterable.func.value == "range"
        ):
            return Kind.NOT_TENSOR
        if self.loops.yields_device_batches(iterable):
            return Kind.UNKNOWN
        if self.ctx.fact(DataLoaders).yields_device_samples(iterable):
            return Kind.TENSOR  # the dataset moved each sample to the device itself
        if self.loops.is_loader_like(iterable) or (
            isinstance(binding.node, cst.For) and self._batches_passed_in(binding.node)
        ):
            if isinstance(binding.node, cst.For) and self._moved_in_place(binding):
                return Kind.UNKNOWN  # `batch.to(device)`: a graph batch moves its own tensors
            return Kind.HOST_TENSOR
        whole = self.kind(iterable)
        return (
            whole if whole in (Kind.TENSOR, Kind.HOST_TENSOR) and not path else Kind.UNKNOWN
        )  # rows of a tensor

    def _moved_field(self, node: cst.Subscript) -> bool:
        """`batch["labels"]` of a loop's batch that the body moved in place (`_moved_in_place`)
        before this read: a field named by a string key of a batch put on the device is a
        device tensor; read before the move, it is still the loader's host tensor."""
        index = node.slice[0].slice if len(node.slice) == 1 else None
        if not (
            isinstance(index, cst.Index)
            and isinstance(index.value, cst.SimpleString)
            and isinstance(node.value, cst.Name)
        ):
            return False
        bindings = self.scopes.reaching(node.value)
        return bool(bindings) and all(
            (
                b.kind is BindingKind.LOOP
                and isinstance(b.node, cst.For)
                and b.value is not None
                and self._moved_in_place(b, before=node)
            )
            or (b.kind is BindingKind.ASSIGN and self._moved_after(b.node, node.value.value, node))
            for b in bindings
        )

    def _moved_after(self, bound: cst.CSTNode, name: str, read: cst.CSTNode) -> bool:
        """`batch = next(it)` (also inside a `try:`), then `batch_to_device(batch, device)`:
        a bare mover statement of the name after its binding and before `read`, in the
        binding's block or one around it within its function."""
        child = self.scopes.statement_of(bound)
        for parent in self.scopes.ancestors(bound):
            if isinstance(parent, cst.FunctionDef | cst.Lambda | cst.ClassDef):
                return False
            if child is None or not isinstance(parent, cst.IndentedBlock | cst.Module):
                if isinstance(parent, cst.SimpleStatementLine | cst.BaseCompoundStatement):
                    child = parent
                continue
            statements: list[cst.CSTNode] = list(parent.body)
            if child in statements:
                after = statements[statements.index(child) + 1 :]
                if any(self._moves_statement(st, {name}, read) for st in after):
                    return True
        return False

    def _moves_statement(
        self, statement: cst.CSTNode, names: set[str], before: cst.CSTNode | None
    ) -> bool:
        """A bare statement moving a batch named in `names` in place (`_moved_in_place`),
        ending before the node `before` where one is given."""
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        if before is not None and not self._ends_before(statement, before):
            return False
        for small in statement.body:
            call = small.value if isinstance(small, cst.Expr) else None
            if not isinstance(call, cst.Call):
                continue
            if (
                isinstance(call.func, cst.Attribute)
                and isinstance(call.func.value, cst.Name)
                and call.func.value.value in names
                and (
                    call.func.attr.value == "cuda"
                    or (call.func.attr.value == "to" and self._moves(call))
                )
            ):
                return True
            if self._hands_to_mover(call, names):
                return True
        return False

    def _ends_before(self, statement: cst.CSTNode, node: cst.CSTNode) -> bool:
        at = self.scopes.enter(node)
        return (
            at is not None and statement in self.scopes.order and self.scopes.exit(statement) < at
        )

    def _moved_in_place(self, binding: Binding, before: cst.CSTNode | None = None) -> bool:
        """Whether the loop's body moves the batch a loop target names with a bare statement
        whose result it drops: `batch.to(device)` or `batch.cuda()` (the batch is an object
        that moves its own tensors, a graph batch), or a helper handed the batch and a device,
        `batch_to_device(batch, self._device)` (it can only move the batch's tensors in place).
        The batch is then no longer known to be on the host (at `before`, when given: only a
        move ending before it counts)."""
        loop = cast(cst.For, binding.node)
        names = {
            target.value
            for target, path in target_names(loop.target)
            if path == binding.path and isinstance(target, cst.Name)
        }
        body = loop.body.body if isinstance(loop.body, cst.IndentedBlock) else ()
        return any(self._moves_statement(statement, names, before) for statement in body)

    def _hands_to_mover(self, call: cst.Call, names: set[str]) -> bool:
        """`batch_to_device(batch, device)`, `move_to(batch, device=self.device)`: a call, its
        result dropped, handed the batch by position and a device that can be a GPU."""
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        return (
            bool(positional)
            and isinstance(positional[0], cst.Name)
            and positional[0].value in names
            and any(
                a.value is not positional[0] and self.loops.is_device_like(a.value)
                for a in call.args
                if not a.star
            )
        )

    def _batches_passed_in(self, loop: cst.For) -> bool:
        """A training loop over a parameter (`for x, y in train_data:`): the caller's DataLoader-like batches."""
        if not self.loops.is_per_batch(loop):
            return False
        return all(self._is_parameter(inner) for inner in unwrap_iterable(loop.iter))

    def _is_parameter(self, node: cst.BaseExpression) -> bool:
        bindings = self.scopes.all_bindings(node) if isinstance(node, cst.Name) else []
        return bool(bindings) and all(b.kind is BindingKind.PARAM for b in bindings)

    def _argument(self, param: cst.Param) -> Kind:
        """What every same-file caller passes for `param`, when they all agree."""
        passed = self.scopes.arguments(param)
        if not passed:
            return Kind.UNKNOWN
        return join([Kind.UNKNOWN if value is None else self.kind(value) for _, value in passed])

    def _comparison(self, node: cst.Comparison) -> Kind:
        if any(
            isinstance(c.operator, cst.Is | cst.IsNot | cst.In | cst.NotIn)
            for c in node.comparisons
        ):
            return Kind.NOT_TENSOR
        if len(node.comparisons) > 1:
            return Kind.UNKNOWN
        return combine([self.kind(node.left), self.kind(node.comparisons[0].comparator)])

    def _annotated(self, annotation: cst.Annotation | None) -> Kind:
        if annotation is None:
            return Kind.UNKNOWN
        name = dotted(annotation.annotation) or ""
        if name in ("int", "float", "bool", "str"):
            return Kind.NOT_TENSOR
        if name == "Tensor" or self.ctx.symbols.qualname(annotation.annotation) == "torch.Tensor":
            return Kind.TENSOR
        return Kind.UNKNOWN

    # -- attributes and calls ----------------------------------------------------------
    def _attribute(self, node: cst.Attribute) -> Kind:
        attr = node.attr.value
        if attr in _HOST_ATTRIBUTES:
            return Kind.NOT_TENSOR
        base = self.kind(node.value)
        if base in (Kind.TENSOR, Kind.HOST_TENSOR):
            return base  # `.data`, `.grad`, `.T`, and fields of a model's output (`out.loss`)
        if base is Kind.NOT_TENSOR and isinstance(node.value, cst.Name | cst.Attribute):
            return Kind.UNKNOWN  # modules and objects: `np.pi`, `self.x`
        bindings = self.scopes.all_bindings(node)
        if bindings:
            return join([self._binding(b) for b in bindings])
        if isinstance(node.value, cst.Name) and node.value.value == "self":
            if attr in self._registered:
                return Kind.TENSOR  # a buffer or parameter: on the module's device
        return Kind.UNKNOWN

    @cached_property
    def _registered(self) -> frozenset[str]:
        """The names a module of the file registers as a buffer or parameter of its own,
        `self.register_buffer("ema_vals", torch.zeros(2))`: `self.ema_vals` is then a tensor
        that moves with the module (`model.to(device)`), on its device. Not one registered as
        `None`, which holds no tensor."""
        if "register_" not in self.ctx.source:
            return frozenset()
        found = set()
        for call in self.scopes.calls:
            func = call.func
            if not (
                isinstance(func, cst.Attribute)
                and func.attr.value in ("register_buffer", "register_parameter")
                and isinstance(func.value, cst.Name)
                and func.value.value == "self"
            ):
                continue
            positional = [a.value for a in call.args if a.keyword is None and not a.star]
            named = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
            name = positional[0] if positional else named.get("name")
            value = (
                positional[1] if len(positional) > 1 else named.get("tensor", named.get("param"))
            )
            text = name.evaluated_value if isinstance(name, cst.SimpleString) else None
            if isinstance(text, str) and text and value is not None and not _is_none(value):
                found.add(text)
        return frozenset(found)

    def _call(self, node: cst.Call) -> Kind:
        func = node.func
        if isinstance(func, cst.Name) and func.value in _NUMBER_BUILTINS:
            return Kind.NOT_TENSOR
        qualname = self.ctx.symbols.qualname(func)
        if qualname is not None:
            return self._library_call(node, qualname)
        if isinstance(func, cst.Attribute):
            return self._method(node, func)
        if self._is_model(func):
            return self._forward(node)
        return self._helper_result(node)

    def _library_call(self, node: cst.Call, qualname: str) -> Kind:
        module, _, name = qualname.rpartition(".")
        if qualname.startswith("numpy.") or qualname == "numpy":
            return Kind.NOT_TENSOR
        if not qualname.startswith("torch"):
            return self._forward(node) if self._is_model(node.func) else self._helper_result(node)
        if qualname in _PARAMETER_REDUCTIONS:
            return Kind.TENSOR  # a norm over the parameters' gradients, on their device
        if module not in _TENSOR_MODULES or name in _TORCH_NON_TENSOR:
            return Kind.UNKNOWN
        if name in _TORCH_CREATION:
            device = next(
                (a.value for a in node.args if a.keyword and a.keyword.value == "device"), None
            )
            if device is None and name in ("tensor", "as_tensor"):
                data = next((a.value for a in node.args if a.keyword is None and not a.star), None)
                if data is not None and self.kind(data) is Kind.TENSOR:
                    return Kind.TENSOR  # `torch.tensor(grad_norm)`: a copy on the data's device
            return (
                Kind.TENSOR
                if device is not None and self.loops.is_device_like(device)
                else Kind.HOST_TENSOR
            )
        if name.endswith("_like"):
            first = next((a.value for a in node.args if a.keyword is None), None)
            return self.kind(first) if first is not None else Kind.TENSOR
        if name[:1].isupper():
            return Kind.UNKNOWN  # classes: torch.nn.Module subclasses, torch.Generator, ...
        return self._forward(node)  # an op runs where its tensor inputs are

    def _method(self, node: cst.Call, func: cst.Attribute) -> Kind:
        method = func.attr.value
        if method in ("item", "tolist", "numpy"):
            return Kind.NOT_TENSOR
        if method in _SCALAR_METHODS:
            return (
                Kind.NOT_TENSOR
                if self.kind(func.value) in (Kind.TENSOR, Kind.HOST_TENSOR)
                else Kind.UNKNOWN
            )
        if method == "cpu":
            return Kind.HOST_TENSOR
        if method == "cuda" or (method == "to" and self._moves(node)):
            return (
                Kind.NOT_TENSOR if self._holds_object(func.value) else Kind.TENSOR
            )  # `DQN(n).to(device)` is a module
        base = self.kind(func.value)
        if base in (Kind.TENSOR, Kind.HOST_TENSOR):
            return base
        if self._is_model(func):
            return self._forward(node)  # `self.model(x)`, `self.criterion(out, y)`
        return self._helper_result(node) if base is Kind.UNKNOWN else Kind.UNKNOWN

    def _holds_object(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """A class built (`DQN(n)`), or a name every reaching binding of which holds one, moved
        or not (`model = Generator()`, then `model = model.cuda()`): moving it keeps a module."""
        if _constructs_object(node):
            return True
        if not isinstance(node, cst.Name) or depth > 2:
            return False
        bindings = self.scopes.reaching(node)
        return bool(bindings) and all(
            b.kind is BindingKind.ASSIGN
            and b.value is not None
            and self._holds_object(_unmoved(b.value), depth + 1)
            for b in bindings
        )

    def _forward(self, call: cst.Call) -> Kind:
        """Outputs live where the inputs are: a model or op fed only CPU tensors runs on the CPU.
        Fed a CPU tensor beside data of unknown place (`model(feats, torch.arange(n))`), it
        may run anywhere; the run's options (`chunk=args.chunk`) are no data. A module the file
        moved to a device runs there whatever it is fed (`_on_moved_module`); a loss does not."""
        kinds = [self.kind(a.value) for a in call.args]
        if Kind.TENSOR not in kinds and Kind.HOST_TENSOR in kinds:
            if not _names_loss(call.func) and self._on_moved_module(call.func, call, parts=True):
                return Kind.TENSOR  # a loss has no weights: it computes where its inputs are
            unknown = any(
                kind is Kind.UNKNOWN and self._data_kind(a.value) is Kind.UNKNOWN
                for kind, a in zip(kinds, call.args)
            )
            return Kind.UNKNOWN if unknown else Kind.HOST_TENSOR
        return Kind.TENSOR

    def _moves(self, call: cst.Call) -> bool:
        """`.to(device)` (not `.to(torch.float16)`)."""
        for arg in call.args:
            if (arg.keyword is None or arg.keyword.value == "device") and self.loops.is_device_like(
                arg.value
            ):
                return True
        return False

    def _is_model(self, func: cst.BaseExpression) -> bool:
        """A call of something named or built like a model or a loss: `model(x)`, `criterion(out, y)`."""
        name = (
            func.attr.value
            if isinstance(func, cst.Attribute)
            else func.value
            if isinstance(func, cst.Name)
            else ""
        )
        # By its name only when it is no class: `UNet(...)`, `ModelEMA(model)` construct.
        if not name[:1].isupper() and (is_module_name(name) or is_loss_name(name)):
            return True
        return any(self._is_module_construction(b) for b in self.scopes.all_bindings(func))

    def _is_module_construction(self, binding: Binding) -> bool:
        value = binding.value
        if binding.kind is not BindingKind.ASSIGN or not isinstance(value, cst.Call):
            return False
        if (
            isinstance(value.func, cst.Attribute)
            and value.func.attr.value in ("to", "cuda")
            and isinstance(value.func.value, cst.Call)
        ):
            value = value.func.value  # `nn.Linear(3, 4).to(device)`
        return self.scopes.class_is_module(value.func) is True

    def _data_kind(self, argument: cst.BaseExpression) -> Kind:
        """An argument's kind, where the run's options (`args.size`) count as no data."""
        found = self.kind(argument)
        if found is Kind.UNKNOWN and is_setting(dotted(argument) or ""):
            return Kind.NOT_TENSOR
        return found

    def _helper_result(self, call: cst.Call) -> Kind:
        """The result of a helper: what a same-file function returns, or where its tensor inputs are.

        A helper given tensors and a device moves them there; one fed only CPU tensors
        (`xyxy2xywh(torch.tensor(box))`) computes on the CPU, save a method of a module the
        file moves to a device (`model.calc_loss(batch)` after `model.cuda()`), which computes
        on the module's device (`_on_moved_module`).
        """
        found = self._helper_fed(call)
        func = call.func
        if (
            found is Kind.HOST_TENSOR
            and isinstance(func, cst.Attribute)
            and self._on_moved_module(func.value, call, parts=False)
        ):
            return Kind.TENSOR
        return found

    def _on_moved_module(self, module: cst.BaseExpression, call: cst.Call, parts: bool) -> bool:
        """Whether `module`, at `call`, is a module the file has last moved to a device that can
        be a GPU (`_placed_on_device`); with `parts`, also a submodule of one (`self.net(x)`
        after `self.to(device)`). A module on a GPU fed CPU batches moves them itself or the run
        fails, so what it computes is on its device."""
        text = dotted(module)
        if text is None:
            return False
        words = text.split(".")
        held = [text] if not parts else [".".join(words[:n]) for n in range(1, len(words) + 1)]
        return any(self._placed_on_device(name, module, call) for name in held)

    def _placed_on_device(self, text: str, module: cst.BaseExpression, call: cst.Call) -> bool:
        """The last placement of `text` before `call` in its function is a move to a device
        (`model.cuda()`; not `model.cpu()` after it, nor a later `model = torch.load(...)`); for
        `self.` names without one there, the last placement in the class's `__init__`."""
        function = self.scopes.function_of(call)
        placements = self._placements.get((self._move_owner(function, text), text), ())
        at = self.scopes.order.get(call, -1)
        before = [p for p in placements if p[0] is function and p[1] < at]
        if not before and text.startswith("self"):
            before = [p for p in placements if p[0] is not None and p[0].name.value == "__init__"]
        if not before:
            return False
        _, where, on_device = max(before, key=lambda p: p[1])
        if isinstance(module, cst.Name) and text == module.value:
            rebound = (self.scopes.order.get(b.node, -1) for b in self.scopes.reaching(module))
            return on_device and all(order < where for order in rebound)
        return on_device

    def _move_owner(self, function: cst.FunctionDef | None, text: str) -> cst.CSTNode | None:
        """Where a placement of `text` counts: the class for `self.`, else the function."""
        if function is not None and text.split(".")[0] == "self":
            return self.scopes.method_class(function)
        return function

    @cached_property
    def _placements(
        self,
    ) -> dict[tuple[cst.CSTNode | None, str], list[tuple[cst.FunctionDef | None, int, bool]]]:
        """(where, what) -> (function, position, on a device) of each move of a receiver to a
        device or back to the CPU, also of a name bound to the moved value: `model.cuda()`,
        `self.to(self.device)`, `net = Net().to(device)`, `model.cpu()`. Moves in branches that
        never run or run only without CUDA do not count."""
        found: dict[
            tuple[cst.CSTNode | None, str], list[tuple[cst.FunctionDef | None, int, bool]]
        ] = defaultdict(list)
        dead = self.ctx.fact(DeadBranches)
        for call in self.scopes.calls:
            func = call.func
            if not isinstance(func, cst.Attribute) or func.attr.value not in ("cuda", "to", "cpu"):
                continue
            on_device = func.attr.value != "cpu"
            if on_device and not self.loops.moves_to_device(call):
                continue  # `.to(torch.float16)`
            if dead.holds(call) or runs_without_cuda(self.ctx, call):
                continue  # `use_cuda = False`, then `if use_cuda: model.cuda()`
            placed = [func.value]
            parent = self.ctx.parents.get(call)
            if isinstance(parent, cst.Assign):
                placed += [t.target for t in parent.targets]
            function = self.scopes.function_of(call)
            for value in placed:
                text = dotted(value)
                if text is not None:
                    key = (self._move_owner(function, text), text)
                    found[key].append((function, self.scopes.order.get(call, -1), on_device))
        return found

    def _helper_fed(self, call: cst.Call) -> Kind:
        functions = self.scopes.callees.get(call, [])
        if len(functions) != 1:
            # the run's options (`args.size`) configure the helper; they are not its data
            kinds = [self._data_kind(a.value) for a in call.args]
            moved = any(
                self.loops.is_device_like(a.value) and not isinstance(a.value, cst.Integer)
                for a in call.args
            )
            if moved and (Kind.HOST_TENSOR in kinds or Kind.TENSOR in kinds):
                return Kind.TENSOR  # `to_device(batch, device)`
            return (
                Kind.HOST_TENSOR
                if Kind.HOST_TENSOR in kinds
                and Kind.TENSOR not in kinds
                and Kind.UNKNOWN not in kinds
                else Kind.UNKNOWN
            )
        returns = own_returns(functions[0])
        if not returns or any(r.value is None for r in returns):
            return Kind.UNKNOWN
        return join([self.kind(r.value) for r in returns])  # type: ignore[arg-type]


def _names_loss(func: cst.BaseExpression) -> bool:
    """`criterion(...)`, `self.loss_fn(...)`: a call of something named as a loss."""
    last = func.attr if isinstance(func, cst.Attribute) else func
    return isinstance(last, cst.Name) and is_loss_name(last.value)


def _unmoved(value: cst.BaseExpression) -> cst.BaseExpression:
    """The receiver of a move (`model.cuda()`, `model.to(device)`), or the value itself."""
    if (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value in ("cuda", "to")
    ):
        return value.func.value
    return value


def _copied_to_host(binding: Binding) -> bool:
    """`x = out.detach().cpu()`: a tensor copied to the CPU, which storing into its elements
    (`x[mask] = 0`) cannot move back (unlike a batch container whose items may be replaced)."""
    value = binding.value
    return (
        binding.kind is BindingKind.ASSIGN
        and isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value == "cpu"
    )


def _tested_none(branch: cst.IfExp, value: cst.BaseExpression) -> bool:
    """`t if t is None else t.cuda()`: the arm taken when the name it gives is None."""
    test = branch.test
    if not (
        isinstance(value, cst.Name)
        and isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.left, cst.Name)
        and test.left.value == value.value
        and _is_none(test.comparisons[0].comparator)
    ):
        return False
    operator = test.comparisons[0].operator
    return (isinstance(operator, cst.Is) and value is branch.body) or (
        isinstance(operator, cst.IsNot) and value is branch.orelse
    )


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"
