"""Plain tensors trained by hand, and computations on them whose result leaves autograd.

A model's parameters live in modules, which `Evaluation` follows. Code written from scratch
(linear regression, a tutorial's two-layer net) trains bare tensors instead: `w` enters the
differentiated loss every step and is updated after the backward pass. Any other computation
on `w` records autograd too; when its result is only read as a number (`.item()`), that graph
is built for nothing.

Evidence that a tensor requires grad, each of which names the tensor itself:
- it is built with `requires_grad=True`, or as `nn.Parameter(...)`, or switched on with
  `w.requires_grad_()` / `w.requires_grad = True`;
- a training loop differentiates an arithmetic expression it is an operand of, while it is
  bound outside that loop (so it persists across steps), and after the backward the loop reads
  its `.grad`, updates it in place, or hands it to a call (a hand-written step).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.analysis.model import BindingKind, Scope, SemanticModel
from torchlint.analysis.nodes import children, returned_values

if TYPE_CHECKING:
    from torchlint.analysis.context import FileContext

# Calls whose result is a Python value: whatever they read leaves autograd.
EXIT_METHODS = frozenset({"item", "tolist"})
EXIT_BUILTINS = frozenset({"float", "int", "bool"})
_PARAMETER_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
_READERS = frozenset(
    {"print", "len", "str", "repr", "type", "isinstance", "id"}
)  # builtins that only look
_DEPTH = 3  # how many assignments a value is followed through


class TrainedLeaves:
    """Which names hold tensors that require grad, and exits that read them through arithmetic."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.model = ctx.fact(SemanticModel)

    # -- exits --------------------------------------------------------------------------
    @staticmethod
    def exit_operand(call: cst.Call) -> cst.BaseExpression | None:
        """`E` in `E.item()`, `E.tolist()`, `float(E)`: what becomes a Python value."""
        func = call.func
        if type(func) is cst.Attribute and func.attr.value in EXIT_METHODS and not call.args:
            return func.value
        if type(func) is cst.Name and func.value in EXIT_BUILTINS and len(call.args) == 1:
            return call.args[0].value
        return None

    def leaf_read(self, expr: cst.BaseExpression, function: cst.FunctionDef) -> str | None:
        """The trained leaf that `expr` (in `function`) computes from in arithmetic with other
        values (`val_x @ w`), following the function's own assignments; None when there is none.
        A leaf only scaled by a constant or reduced on its own (`w.norm()`) costs nothing worth a finding."""
        for name in self._arithmetic_operands(expr, _DEPTH):
            if self._is_leaf(name, function):
                return name.value
        return None

    def _arithmetic_operands(self, expr: cst.BaseExpression, depth: int) -> Iterator[cst.Name]:
        for node in _walk(expr):
            if isinstance(node, cst.BinaryOperation):
                left, right = node.left, node.right
                if _is_data(left) and _is_data(right):
                    yield from (side for side in (left, right) if isinstance(side, cst.Name))
            if isinstance(node, cst.Call) and (
                self.ctx.symbols.qualname(node.func) or ""
            ).startswith("torch."):
                operands = [arg.value for arg in node.args if arg.keyword is None]
                if len(operands) >= 2 and all(_is_data(o) for o in operands):
                    yield from (
                        o for o in operands if isinstance(o, cst.Name)
                    )  # torch.mm(x, w), F.linear(x, w)
            if depth == 0:
                continue
            if isinstance(node, cst.Name):
                value = self.model.value_of(node)
                if value is not None:
                    yield from self._arithmetic_operands(value, depth - 1)
            elif isinstance(node, cst.Call):
                for callee in self.model.callees.get(
                    node, ()
                ):  # `loss_of(xs, ys).item()`: what the helper returns
                    for returned in returned_values(callee):
                        yield from self._arithmetic_operands(returned, depth - 1)

    def _is_leaf(self, name: cst.Name, function: cst.FunctionDef) -> bool:
        """Whether `name` holds a trained leaf bound outside `function` (a closure's or a global),
        or is a parameter of `function` that every call site in the file passes a trained leaf."""
        scope, bindings = self.model.resolve(name.value, self.model.scope_of(name))
        if not bindings:
            return False
        if scope is not function:
            return (scope, name.value) in self._leaves
        if not all(b.kind is BindingKind.PARAM and isinstance(b.node, cst.Param) for b in bindings):
            return False
        return self._passed_leaves(bindings[0].node)  # type: ignore[arg-type]

    def _passed_leaves(self, param: cst.Param) -> bool:
        passed = self.model.arguments(param)
        if not passed:
            return False
        for site, arg in passed:
            if not isinstance(arg, cst.Name):
                return False
            caller = self.model.scope_of(site)
            if (
                self.model.resolve(arg.value, caller)[0] is not caller
                or (caller, arg.value) not in self._leaves
            ):
                return False
        return True

    # -- leaves -------------------------------------------------------------------------
    @cached_property
    def _leaves(self) -> set[tuple[Scope, str]]:
        found = self._declared()
        for call in self.model.calls:
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward":
                found |= self._trained_by(call)
        return found

    def _declared(self) -> set[tuple[Scope, str]]:
        """Names built with `requires_grad=True` or as `nn.Parameter`, or switched on later."""
        found: set[tuple[Scope, str]] = set()
        for target, value in self.model.assigns:
            if (
                isinstance(target, cst.Name)
                and isinstance(value, cst.Call)
                and self._requires_grad(value)
            ):
                found.add((self.model.scope_of(target), target.value))
        for attribute in (
            *self.model.attributes.get("requires_grad_", ()),
            *self.model.attributes.get("requires_grad", ()),
        ):
            owner = attribute.value
            if isinstance(owner, cst.Name) and self._switches_on(attribute):
                found.add(
                    (self.model.resolve(owner.value, self.model.scope_of(owner))[0], owner.value)
                )
        return found

    def _requires_grad(self, call: cst.Call) -> bool:
        if self.ctx.symbols.qualname(call.func) in _PARAMETER_CLASSES:
            return True
        return any(_keyword(arg, "requires_grad") and _is_true(arg.value) for arg in call.args)

    def _switches_on(self, attribute: cst.Attribute) -> bool:
        """`w.requires_grad_()`, `w.requires_grad_(True)` or `w.requires_grad = True`."""
        parent = self.model.parents.get(attribute)
        if isinstance(parent, cst.Call) and parent.func is attribute:
            return not parent.args or _is_true(parent.args[0].value)
        target = parent
        assign = self.model.parents.get(target) if isinstance(target, cst.AssignTarget) else None
        return isinstance(assign, cst.Assign) and _is_true(assign.value)

    def _trained_by(self, backward: cst.Call) -> set[tuple[Scope, str]]:
        """Operands of the differentiated loss that persist across the loop's steps and are updated after the backward."""
        loop = next(
            (
                a
                for a in self.model.ancestors(backward)
                if isinstance(a, cst.For | cst.While | cst.FunctionDef)
            ),
            None,
        )
        if not isinstance(loop, cst.For | cst.While) or not isinstance(
            backward.func, cst.Attribute
        ):
            return set()
        found: set[tuple[Scope, str]] = set()
        for name in self._arithmetic_operands(backward.func.value, _DEPTH):
            scope, bindings = self.model.resolve(name.value, self.model.scope_of(name))
            if not bindings or any(self.model.is_ancestor(loop, b.node) for b in bindings):
                continue  # bound in the loop: this step's data, not a persistent tensor
            if self._updated_after(name.value, scope, loop, backward):
                found.add((scope, name.value))
        return found

    def _updated_after(
        self, name: str, scope: Scope, loop: cst.CSTNode, backward: cst.Call
    ) -> bool:
        after = self.model.enter(backward) or 0
        for use in self.model.uses(self.model.scope_of(backward), name):
            at = self.model.enter(use)
            if at is None or at <= after or not self.model.is_ancestor(loop, use):
                continue
            if self.model.resolve(name, self.model.scope_of(use))[0] is not scope:
                continue
            if self._updates(use):
                return True
        return False

    def _updates(self, use: cst.Name) -> bool:
        """`w.grad`, `w.data`, `w -= ...`, `w.sub_(...)`, or `step(w)`."""
        parent = self.model.parents.get(use)
        if isinstance(parent, cst.Attribute) and parent.value is use:
            attr = parent.attr.value
            return attr in ("grad", "data") or (attr.endswith("_") and not attr.startswith("_"))
        if isinstance(parent, cst.AugAssign) and parent.target is use:
            return True
        if not isinstance(parent, cst.Arg) or parent.keyword is not None:
            return False
        call = self.model.parents.get(parent)
        return not (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Name)
            and call.func.value in _READERS
        )


def _walk(expr: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes of an expression, not descending into lambdas or comprehensions' own scopes."""
    todo = [expr]
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, cst.Lambda):
            todo.extend(reversed(children(node)))  # source order


def _is_data(operand: cst.BaseExpression) -> bool:
    """An operand that may be a tensor: not a number literal or a constant's name."""
    if isinstance(operand, cst.Integer | cst.Float | cst.Imaginary):
        return False
    if isinstance(operand, cst.UnaryOperation):
        return _is_data(operand.expression)
    return not (isinstance(operand, cst.Name) and operand.value.isupper())


def _keyword(arg: cst.Arg, keyword: str) -> bool:
    return arg.keyword is not None and arg.keyword.value == keyword


def _is_true(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"
