"""Branches that never run, because the value of their test is fixed where it is written.

Research code switches code off by binding a flag to a constant in the function that tests it
(`parallel = False` then `if parallel:` around the `nn.DataParallel` wraps of a layer), or by a
literal test (`if False:`, `if 0:`). A performance finding there is about code that never runs,
so `Rule.report` drops it, for every rule alike.

The value is read, never guessed: a literal (`True`, `False`, `None`, an integer), `not`,
`and`/`or` of such, or a name whose only binding, in the function that owns it, is an
assignment of a literal. Such a name keeps that value wherever the function and the functions
inside it read it, unless one of them declares it `nonlocal` (and rebinds it), or a `del` or a
`match` pattern unbinds or rebinds it (bindings the model does not record). A parameter, a second
binding, a module constant (another module may set it) or a computed value is unknown, and
unknown is live code. The branch taken when the test is false (the `else`, an `elif`) is dead
when the test is always true.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from torchlint.analysis.model import SemanticModel

if TYPE_CHECKING:
    from collections.abc import Sequence

    from torchlint.analysis.context import FileContext

_MAX_DEPTH = 8  # nested `not`/`and`/`or` read before the test counts as unknown
_LITERALS = {"True": True, "False": False, "None": False}
# Nodes under which a name is unbound or bound in a way the model does not record.
_UNBINDING = (cst.Del, cst.MatchAs, cst.MatchStar, cst.MatchMapping)


class DeadBranches:
    """Via `ctx.fact(DeadBranches)`: whether code sits in a branch that never runs."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self._truths: dict[cst.BaseExpression, bool | None] = {}  # test -> its fixed value

    def holds(self, node: cst.CSTNode) -> bool:
        """Whether `node` sits in the body of an `if` (or a conditional expression) whose test
        is always false, or in the `else` of one whose test is always true."""
        child = node
        for parent in self._ancestors(node):
            if isinstance(parent, cst.If | cst.IfExp):
                runs_when = _branch_taken_when(parent, child)
                if runs_when is not None and self.truth(parent.test) is (not runs_when):
                    return True
            child = parent
        return False

    def truth(self, test: cst.BaseExpression) -> bool | None:
        """The value `test` always has, or None where it may vary."""
        if test not in self._truths:
            self._truths[test] = self._value(test, 0)
        return self._truths[test]

    def _ancestors(self, node: cst.CSTNode) -> Sequence[cst.CSTNode]:
        """The traversal's parents (complete for the nodes it has visited), else the model's."""
        chain = list(self.ctx.ancestors(node))
        if chain and chain[-1] is self.ctx.module:
            return chain
        return list(self.ctx.fact(SemanticModel).ancestors(node))

    def _value(self, test: cst.BaseExpression, depth: int) -> bool | None:
        if depth > _MAX_DEPTH:
            return None
        if isinstance(test, cst.Name):
            literal = _literal(test)
            return literal if literal is not None else self._local_constant(test)
        if isinstance(test, cst.Integer):
            return _literal(test)
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self._value(test.expression, depth + 1)
            return None if inner is None else not inner
        if isinstance(test, cst.BooleanOperation):
            left = self._value(test.left, depth + 1)
            right = self._value(test.right, depth + 1)
            # `a and b` is false as soon as one side is; `a or b` true as soon as one side is.
            decisive = isinstance(test.operator, cst.Or)
            if decisive in (left, right):
                return decisive
            return (not decisive) if left is not None and right is not None else None
        return None

    def _local_constant(self, name: cst.Name) -> bool | None:
        """The truth of the literal a function's local `name` is only ever bound to."""
        model = self.ctx.fact(SemanticModel)
        owner, bindings = model.resolve(name.value, model.scope_of(name))
        if not isinstance(owner, cst.FunctionDef) or len(bindings) != 1:
            return None
        value = bindings[0].exact
        literal = _literal(value) if value is not None else None
        if literal is None or self._rebound_elsewhere(model, owner, name.value):
            return None
        return literal

    def _rebound_elsewhere(self, model: SemanticModel, owner: cst.FunctionDef, name: str) -> bool:
        """A function inside `owner` that declares `name` nonlocal, or a `del`/`match` of it."""
        for scope, declared in model.declared.items():
            if declared.get(name) == "nonlocal" and model.is_ancestor(owner, scope):
                return True
        return any(
            isinstance(parent, _UNBINDING)
            for use in model.names_in.get((owner, name), ())
            for parent in _up_to_statement(model, use)
        )


def _up_to_statement(model: SemanticModel, node: cst.CSTNode) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []
    for parent in model.ancestors(node):
        if isinstance(parent, cst.SimpleStatementLine | cst.BaseCompoundStatement):
            break
        found.append(parent)
    return found


def _literal(value: cst.BaseExpression) -> bool | None:
    """The truth of a literal `True`, `False`, `None` or integer; None for anything else."""
    if isinstance(value, cst.Name):
        return _LITERALS.get(value.value)
    if isinstance(value, cst.Integer):
        try:
            return int(value.value.replace("_", ""), 0) != 0
        except ValueError:
            return None
    return None


def _branch_taken_when(parent: cst.If | cst.IfExp, child: cst.CSTNode) -> bool | None:
    """The value of the test under which `child` runs: True in the body, False in the else (or
    an `elif`); None for the test itself."""
    if child is parent.body:
        return True
    if child is parent.orelse:
        return False
    return None
