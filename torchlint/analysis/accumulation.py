"""What a file backpropagates, and which values are losses: the facts behind the accumulation rules.

`loss.backward()` says `loss` carries an autograd graph; `(total / n).backward()` says `total`
is accumulated on purpose, to be backpropagated. Both questions need the same index: for every
backward call, the values it backpropagates, followed back through the same scope's bindings
(`total = ce + reg; total.backward()` backpropagates `ce` and `reg`).

Values are keyed by name: `(scope, name)` for variables (the scope that binds the name, by
Python's rules) and the dotted text for attribute chains (`self.total_loss`, file-wide).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.analysis.grad import name_tokens
from torchlint.analysis.loops import LoopFacts, StepOwner
from torchlint.analysis.model import Binding, BindingKind, SemanticModel
from torchlint.analysis.nodes import children, walk
from torchlint.analysis.symbols import dotted

if TYPE_CHECKING:
    from torchlint.analysis.context import FileContext

Key = tuple[cst.CSTNode, str] | str

# Receivers of `.backward(loss)` that backpropagate their argument (accelerate, Fabric, DeepSpeed).
_BACKWARD_OWNERS = frozenset(
    {"accelerator", "fabric", "engine", "trainer", "deepspeed", "booster", "strategy", "runner"}
)
# Methods of a loss that keep its graph and its value (`loss.mean().backward()`).
_VIEWS = frozenset(
    {
        "mean",
        "sum",
        "squeeze",
        "float",
        "double",
        "half",
        "bfloat16",
        "contiguous",
        "clone",
        "reshape",
        "view",
        "to",
        "cuda",
        "cpu",
    }
)
# What ends a value's graph: the result has no autograd history.
_DETACHING_METHODS = frozenset({"detach", "item", "tolist", "numpy", "detach_", "requires_grad_"})
_DETACHING_FUNCTIONS = frozenset({"float", "int", "bool", "round", "len", "str"})
_INTEGRAL_METHODS = frozenset(
    {
        "argmax",
        "argmin",
        "long",
        "int",
        "bool",
        "count_nonzero",
        "numel",
        "size",
        "dim",
        "eq",
        "ne",
        "lt",
        "gt",
        "le",
        "ge",
    }
)
_TORCH_COMBINERS = frozenset(
    {
        "stack",
        "cat",
        "sum",
        "mean",
        "add",
        "mul",
        "div",
        "concat",
        "concatenate",
        "hstack",
        "vstack",
    }
)
_FUNCTIONAL_LOSS = re.compile(
    r"(_loss|cross_entropy|kl_div|binary_cross_entropy(_with_logits)?|nll_loss|ctc_loss)$"
)
_MODEL = re.compile(
    r"(^|_)(model|net|network|module)s?($|_)|^(model|net)_?[a-z0-9]?$", re.IGNORECASE
)
_MAX_ROUNDS = 8
# Words that name gradient accumulation in a step's guard (`if step % grad_accum == 0:`).
_ACCUMULATION_WORDS = frozenset({"accum", "accumulate", "accumulation", "accumulated", "acc"})


def _names(node: cst.CSTNode) -> Iterator[cst.Name | cst.Attribute]:
    """Every Name and outermost attribute chain in an expression (`self.total`, not `self`)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Attribute) and dotted(current) is not None:
            yield current
            continue
        if isinstance(current, cst.Name):
            yield current
            continue
        if isinstance(current, cst.Lambda | cst.FunctionDef):
            continue
        stack.extend(children(current))


class Backprop:
    """Backward calls, what they backpropagate, and loss recognition, via `ctx.fact(Backprop)`."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.scopes = ctx.fact(SemanticModel)

    # -- backward calls ----------------------------------------------------------------
    @cached_property
    def backward_calls(self) -> dict[cst.Call, list[cst.BaseExpression]]:
        """Every backward-like call, with the expressions it backpropagates."""
        found: dict[cst.Call, list[cst.BaseExpression]] = {}
        for call in self.scopes.calls:
            targets = self._backpropagated(call)
            if targets:
                found[call] = targets
        return found

    def _backpropagated(self, call: cst.Call) -> list[cst.BaseExpression]:
        func = call.func
        qualname = self.ctx.symbols.qualname(func) or ""
        first = [a.value for a in call.args if a.keyword is None and not a.star][:1]
        if qualname in ("torch.autograd.backward", "torch.autograd.grad"):
            return first
        if not isinstance(func, cst.Attribute):
            return []
        method = func.attr.value
        if method == "manual_backward":
            return first
        if method != "backward" or qualname.startswith("torch."):
            return []
        owner = set(name_tokens((dotted(func.value) or "").rsplit(".", 1)[-1]))
        if owner & _BACKWARD_OWNERS and first:
            return first
        return [func.value]

    def is_tensor_backward(self, call: cst.Call) -> bool:
        """`x.backward()` on a tensor itself (not `accelerator.backward(x)`, which may rescale it)."""
        targets = self.backward_calls.get(call)
        if not targets:
            return False
        return isinstance(call.func, cst.Attribute) and targets[0] is call.func.value

    def carriers(self, expr: cst.BaseExpression, weights: bool = True) -> list[cst.BaseExpression]:
        """The parts of a backpropagated expression whose graph it carries: `loss` in `scaler.scale(loss / n).mean()`.

        Divisors and plain calls of unknown functions are not followed: `loss / n_tokens` carries
        `loss`, and `criterion(out, y)` is a carrier itself. Without `weights`, neither is the
        factor beside a loss in a product (`weight` in `(loss * weight).backward()`, a token
        count's share): it scales the graph, and unknown means it carries none.
        """
        while True:
            if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
                func = expr.func
                positional = [a.value for a in expr.args if a.keyword is None and not a.star]
                if func.attr.value == "scale" and len(positional) == 1:
                    expr = positional[0]
                    continue
                if func.attr.value in _VIEWS:
                    expr = func.value
                    continue
            break
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, cst.Divide | cst.FloorDivide):
                return self.carriers(expr.left, weights)
            if not weights and isinstance(expr.operator, cst.Multiply):
                loss = next((s for s in (expr.left, expr.right) if self._named_loss(s)), None)
                if loss is not None:
                    return self.carriers(loss, weights)
            return self.carriers(expr.left, weights) + self.carriers(expr.right, weights)
        if isinstance(expr, cst.UnaryOperation):
            return self.carriers(expr.expression, weights)
        if isinstance(expr, cst.Call) and self._combines(expr):
            return [c for arg in expr.args for c in self._carriers_of_elements(arg.value, weights)]
        return [] if self.no_graph(expr) else [expr]

    def _named_loss(self, expr: cst.BaseExpression) -> bool:
        """A loss by its name (`loss`, `self.ce_loss`) or by the call computing it."""
        if isinstance(expr, cst.Name | cst.Attribute):
            words = name_tokens((dotted(expr) or "").rsplit(".", 1)[-1])
            return bool(words) and words[-1] in ("loss", "losses")
        return self.is_loss_call(expr)

    def _carriers_of_elements(
        self, expr: cst.BaseExpression, weights: bool
    ) -> list[cst.BaseExpression]:
        if isinstance(expr, cst.List | cst.Tuple):
            return [c for e in expr.elements for c in self.carriers(e.value, weights)]
        return self.carriers(expr, weights)

    def _combines(self, call: cst.Call) -> bool:
        """`torch.stack(losses)`, `sum(losses)`: their result carries their arguments' graphs."""
        if isinstance(call.func, cst.Name) and call.func.value == "sum":
            return True
        qualname = self.ctx.symbols.qualname(call.func) or ""
        return qualname.startswith("torch.") and qualname.rsplit(".", 1)[-1] in _TORCH_COMBINERS

    # -- keys ----------------------------------------------------------------------------
    def key(self, expr: cst.BaseExpression) -> Key | None:
        """`(scope, name)` for a variable, the dotted text for an attribute chain, else None."""
        if isinstance(expr, cst.Name):
            scope, _ = self.scopes.resolve(expr.value, self.scopes.scope_of(expr))
            return (scope, expr.value)
        return dotted(expr)

    def _bindings(self, key: Key) -> list[Binding]:
        if isinstance(key, str):
            return list(self.scopes.attr_bindings.get(key, []))
        scope, name = key
        return list(self.scopes.bindings[scope].get(name, []))  # type: ignore[index]

    @cached_property
    def carried(self) -> set[Key]:
        """Values whose graph some backward call reaches: its carriers, and theirs through
        bindings; a loss's weight (`carriers` without `weights`) is not one of them."""
        return self._closure(
            lambda expr: [
                c
                for c in self.carriers(expr, weights=False)
                if isinstance(c, cst.Name | cst.Attribute)
            ]
        )

    @cached_property
    def feeding(self) -> set[Key]:
        """Values that flow in any way into what a backward call backpropagates (a superset of `carried`)."""
        return self._closure(lambda expr: list(_names(expr)))

    def _closure(self, parts) -> set[Key]:
        found: set[Key] = set()
        frontier = [
            p for targets in self.backward_calls.values() for t in targets for p in parts(t)
        ]
        for _ in range(_MAX_ROUNDS):
            new = {k for p in frontier if (k := self.key(p)) is not None} - found
            if not new:
                break
            found |= new
            frontier = [
                p
                for k in new
                for b in self._bindings(k)
                if b.kind in (BindingKind.ASSIGN, BindingKind.AUGMENT) and b.value is not None
                for p in parts(b.value)
            ]
        return found

    # -- accumulation --------------------------------------------------------------------
    def accumulation_guard(self, call: cst.Call, loop: StepOwner) -> cst.If | None:
        """The `if (i + 1) % n == 0:`-like test inside `loop` that lets `call` (an optimizer
        step) run only every n-th iteration: the step of a gradient accumulation."""
        loops = self.ctx.fact(LoopFacts)
        child: cst.CSTNode = call
        for parent in self.scopes.ancestors(call):
            if parent is loop:
                return None
            if isinstance(parent, cst.If) and _counts_accumulation(parent.test):
                rare = loops.rare_branch(parent.test) or _stepping_call(parent.test)
                if (rare == "body" and child is parent.body) or (
                    rare == "orelse" and child is parent.orelse
                ):
                    return parent
            child = parent
        return None

    # -- losses --------------------------------------------------------------------------
    def is_loss_call(self, expr: cst.BaseExpression) -> bool:
        """A loss computed here: a torch loss function or module, a function named for losses, `model(x).loss`."""
        if isinstance(expr, cst.Attribute) and expr.attr.value == "loss":
            return self._model_output(expr.value)
        if isinstance(expr, cst.Subscript) and _string_index(expr) == "loss":
            return self._model_output(expr.value)
        if not isinstance(expr, cst.Call):
            return False
        qualname = self.ctx.symbols.qualname(expr.func) or ""
        if qualname.startswith("torch.nn.functional."):
            return bool(_FUNCTIONAL_LOSS.search(qualname))
        if self.loss_module(expr.func) is not None:
            return True
        words = name_tokens((dotted(expr.func) or "").rsplit(".", 1)[-1])
        return bool(words) and (
            words[-1] in ("loss", "criterion", "crit")
            or words[:2] in (["loss", "fn"], ["loss", "func"], ["loss", "function"])
        )

    def loss_module(self, func: cst.BaseExpression) -> cst.Call | None:
        """The `torch.nn.XLoss(...)` construction a name or attribute is bound to, if any."""
        for binding in self.scopes.all_bindings(func):
            value = binding.value
            if binding.kind is not BindingKind.ASSIGN or not isinstance(value, cst.Call):
                continue
            if (
                isinstance(value.func, cst.Attribute)
                and value.func.attr.value in ("to", "cuda")
                and isinstance(value.func.value, cst.Call)
            ):
                value = value.func.value
            qualname = self.ctx.symbols.qualname(value.func) or ""
            if qualname.startswith("torch.nn.") and qualname.endswith("Loss"):
                return value
        return None

    def _model_output(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Name):
            bindings = self.scopes.reaching(expr)
            return (
                len(bindings) == 1
                and bindings[0].kind is BindingKind.ASSIGN
                and bindings[0].value is not None
                and self._model_call(bindings[0].value)
            )
        return self._model_call(expr)

    @staticmethod
    def _model_call(expr: cst.BaseExpression) -> bool:
        if not isinstance(expr, cst.Call):
            return False
        name = (dotted(expr.func) or "").rsplit(".", 1)[-1]
        return bool(_MODEL.search(name))

    def no_graph(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """Whether the value evidently has no autograd history: detached, a number, a count or a size.

        `.detach()`, `.item()`, `float(...)`, `.data`, comparisons and what is computed from them
        (`(labels != pad).sum()`), integer results (`.argmax()`, `.long()`), `.size()`/`.shape`.
        """
        if depth > 3:
            return False
        expr = _strip_views(expr)
        if isinstance(expr, cst.Integer | cst.Float):
            return True
        if isinstance(expr, cst.Comparison):
            return not any(
                isinstance(c.operator, cst.Is | cst.IsNot | cst.In | cst.NotIn)
                for c in expr.comparisons
            )
        if isinstance(expr, cst.Attribute):
            return expr.attr.value in ("data", "shape", "ndim")
        if isinstance(expr, cst.Name):
            bindings = self.scopes.reaching(expr)
            single = (
                bindings[0].value
                if len(bindings) == 1 and bindings[0].kind is BindingKind.ASSIGN
                else None
            )
            return single is not None and self.no_graph(single, depth + 1)
        if not isinstance(expr, cst.Call):
            return False
        if isinstance(expr.func, cst.Name):
            return expr.func.value in _DETACHING_FUNCTIONS
        if not isinstance(expr.func, cst.Attribute):
            return False
        method = expr.func.attr.value
        if method in _DETACHING_METHODS or method in _INTEGRAL_METHODS:
            return True
        if method in ("sum", "mean"):
            if self.ctx.symbols.qualname(expr.func) in ("torch.sum", "torch.mean"):
                return bool(expr.args) and self.no_graph(expr.args[0].value, depth + 1)
            return self.no_graph(expr.func.value, depth + 1)
        return False


def _strip_views(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`x` for `x.cpu()`, `x.float()`, `x.to(device)`: calls that keep the value's graph, or its absence."""
    while (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value in _VIEWS
    ):
        if expr.func.attr.value in ("sum", "mean"):
            break  # reductions are judged by what they reduce
        expr = expr.func.value
    return expr


def _string_index(node: cst.Subscript) -> str | None:
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    value = node.slice[0].slice.value
    if isinstance(value, cst.SimpleString):
        evaluated = value.evaluated_value
        return evaluated if isinstance(evaluated, str) else None
    return None


def modulo_divisor(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """The divisor of the first `%` in a test: `accum_steps` in `(i + 1) % accum_steps == 0`."""
    stack: list[cst.CSTNode] = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
            if not isinstance(
                node.left, cst.SimpleString | cst.ConcatenatedString | cst.FormattedString
            ):
                return node.right
        stack.extend(reversed(children(node)))
    return None


def _counts_accumulation(test: cst.BaseExpression) -> bool:
    if modulo_divisor(test) is not None:
        return True
    return any(set(name_tokens(name)) & _ACCUMULATION_WORDS for name in _identifiers(test))


def _stepping_call(test: cst.BaseExpression) -> str | None:
    """ "body" for a helper deciding when to step from the accumulation count: `if history.step(grad_accumulation):`."""
    if not isinstance(test, cst.Call):
        return None
    names = [name for arg in test.args for name in _identifiers(arg.value)]
    return "body" if any(set(name_tokens(name)) & _ACCUMULATION_WORDS for name in names) else None


def _identifiers(node: cst.CSTNode) -> list[str]:
    return [current.value for current in walk(node) if isinstance(current, cst.Name)]
