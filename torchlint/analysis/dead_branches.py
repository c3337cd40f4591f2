"""Branches that never run, because the value of their test is fixed where it is written.

Research code switches code off by binding a flag to a constant in the function that tests it
(`parallel = False` then `if parallel:` around the `nn.DataParallel` wraps of a layer), or by a
literal test (`if False:`, `if 0:`). A performance finding there is about code that never runs,
so `Rule.report` drops it, for every rule alike. So is code in a private method of a module
class that nothing in the project names (`ProjectIndex.private_method_unused`). The rules about
how modules are built and what a forward computes also ask `unbuilt`: code in a module-level
class the project never builds, or in a function only such dead code calls.

The value is read, never guessed: a literal (`True`, `False`, `None`, an integer, a string),
`not`, `and`/`or` of such, a comparison of two fixed values (`dist_mode == "dp"`, `mode in
("ddp", "fsdp")`), or a name whose only binding, in the function that owns it, is an
assignment of a literal. Such a name keeps that value wherever the function and the functions
inside it read it, unless one of them declares it `nonlocal` (and rebinds it), or a `del` or a
`match` pattern unbinds or rebinds it (bindings the model does not record). A parameter of a
module-level, undecorated function (or of the undecorated `__init__` of a module-level class,
whose calls are the class's), never rebound, is fixed to its literal default when the project
calls the function and no call passes it (`ProjectIndex.default_never_overridden`:
`def wrap_model(model, dist_mode="ddp")` whose callers pass only `sync_bn`), unless a declared
distribution ships the module and its users may call a public function themselves (an example
script's folder without an `__init__.py` is not shipped). An attribute of `self` read in a
method after the one statement of its body that sets it (`self.pooling = pooling`), where no
other code of the file writes an attribute of that name, has the value set. Any other
parameter, a second binding, a module constant (another module may set it) or a computed value
is unknown, and unknown is live code. The branch taken when the test is false (the `else`, an `elif`) is
dead when the test is always true.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from torchlint.analysis.model import BindingKind, SemanticModel

if TYPE_CHECKING:
    from collections.abc import Sequence

    from torchlint.analysis.context import FileContext

_MAX_DEPTH = 8  # nested `not`/`and`/`or` read before the test counts as unknown
_CONSTANTS: dict[str, object] = {"True": True, "False": False, "None": None}
# Nodes under which a name is unbound or bound in a way the model does not record.
_UNBINDING = (cst.Del, cst.MatchAs, cst.MatchStar, cst.MatchMapping)


class DeadBranches:
    """Via `ctx.fact(DeadBranches)`: whether code sits in a branch that never runs."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self._truths: dict[cst.BaseExpression, bool | None] = {}  # test -> its fixed value
        self._unused: dict[cst.FunctionDef, bool] = {}  # private method -> nothing names it
        self._unbuilt: dict[cst.FunctionDef | cst.ClassDef, bool] = {}  # definition -> never runs

    def holds(self, node: cst.CSTNode) -> bool:
        """Whether `node` sits in the body of an `if` (or a conditional expression) whose test
        is always false, or in the `else` of one whose test is always true."""
        child = node
        chain = self._ancestors(node)
        for at, parent in enumerate(chain):
            if isinstance(parent, cst.If | cst.IfExp):
                runs_when = _branch_taken_when(parent, child)
                if runs_when is not None and self.truth(parent.test) is (not runs_when):
                    return True
            elif isinstance(parent, cst.FunctionDef) and self._unused_method(
                parent, chain[at + 1 :]
            ):
                return True
            child = parent
        return False

    def _unused_method(self, function: cst.FunctionDef, above: Sequence[cst.CSTNode]) -> bool:
        """An undecorated private method of a module-level class that nothing in the project
        names (`ProjectIndex.private_method_unused`, which judges the name: a builder whose
        only call is commented out)."""
        if function not in self._unused:
            name = function.name.value
            project = self.ctx.project
            owner = above[1] if len(above) > 2 else None
            self._unused[function] = (
                name.startswith("_")  # the project is asked of private names only
                and not function.decorators
                and project is not None
                and isinstance(owner, cst.ClassDef)
                and isinstance(above[2], cst.Module)
                and project.private_method_unused(self.ctx.absolute_path, owner.name.value, name)
            )
        return self._unused[function]

    def unbuilt(self, node: cst.CSTNode) -> bool:
        """Whether `node` sits in an undecorated module-level class the project never builds,
        or in a module-level function only such dead code calls (`ProjectIndex.never_built`):
        a vendored trainer, a loss or block the models no longer use. Asked by the rules about
        how modules are built and what their forward computes; a training loop in a class
        nothing builds is more often an entry point that a framework or a user drives."""
        outer = None
        for ancestor in self._ancestors(node):
            if isinstance(ancestor, cst.FunctionDef | cst.ClassDef):
                outer = ancestor
        project = self.ctx.project
        if outer is None or outer.decorators or project is None:
            return False
        if outer not in self._unbuilt:
            self._unbuilt[outer] = outer in self.ctx.module.body and project.never_built(
                self.ctx.absolute_path, outer.name.value
            )
        return self._unbuilt[outer]

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
        if isinstance(test, cst.Name | cst.Attribute | cst.Integer | cst.SimpleString):
            known, value = self._constant(test)
            return bool(value) if known else None
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            return self._compared(test.left, test.comparisons[0])
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

    def _compared(self, left: cst.BaseExpression, target: cst.ComparisonTarget) -> bool | None:
        """`dist_mode == "dp"`, `mode in ("ddp", "fsdp")`, `x is None`: a comparison of two
        fixed values (a tuple, list or set of them for `in`)."""
        operator = target.operator
        known, value = self._constant(left)
        if not known:
            return None
        if isinstance(operator, cst.In | cst.NotIn):
            right = target.comparator
            if not isinstance(right, cst.Tuple | cst.List | cst.Set):
                return None
            values = []
            for element in right.elements:
                found, item = _literal_value(element.value)
                if not found or not isinstance(element, cst.Element):
                    return None
                values.append(item)
            return (value in values) is isinstance(operator, cst.In)
        found, other = self._constant(target.comparator)
        if not found:
            return None
        if isinstance(operator, cst.Equal | cst.NotEqual):
            return (value == other) is isinstance(operator, cst.Equal)
        if isinstance(operator, cst.Is | cst.IsNot) and other is None:
            return (value is None) is isinstance(operator, cst.Is)
        return None

    def _constant(self, node: cst.BaseExpression, depth: int = 0) -> tuple[bool, object]:
        """(True, value) for a literal, a name fixed to one (`_fixed`) or an attribute of
        `self` a method has just set to one (`_fixed_attribute`); (False, None) else."""
        known, value = _literal_value(node)
        if known or depth > _MAX_DEPTH:
            return known, value
        if isinstance(node, cst.Name):
            fixed = self._fixed(node)
        elif isinstance(node, cst.Attribute):
            fixed = self._fixed_attribute(node)
        else:
            return False, None
        return self._constant(fixed, depth + 1) if fixed is not None else (False, None)

    def _fixed_attribute(self, node: cst.Attribute) -> cst.BaseExpression | None:
        """The value of `self.<attr>` read in a method after the one statement of that method's
        body that sets it (`self.pooling = pooling`, then `if self.pooling == "attention":`),
        or read in another method of the class whose `__init__` sets it so (`self.individual
        = individual`, then `if self.individual:` in `forward`) when no other file of the
        project may write it (`ProjectIndex.attribute_set_only_in`); and when no other code of
        the file writes an attribute of that name (an assignment, `del`, a loop or `with`
        target, `setattr`, a property's `def`): the value set, which `_constant` reads in turn
        (a parameter fixed to its default, a literal)."""
        attr = node.attr.value
        model = self.ctx.fact(SemanticModel)
        function = model.function_of(node)
        if (
            not (isinstance(node.value, cst.Name) and node.value.value == "self")
            or function is None
            or "setattr" in self.ctx.source
            or model.functions.get(attr)
        ):
            return None
        params = [*function.params.posonly_params, *function.params.params]
        if not params or params[0].name.value != "self" or model.method_class(function) is None:
            return None
        writes = [a for a in model.attributes.get(attr, ()) if _written(model, a)]
        if len(writes) != 1:
            return None
        target = writes[0]
        assign_target = model.parents.get(target)
        line = model.parents.get(assign_target) if assign_target is not None else None
        if not isinstance(line, cst.Assign) or len(line.targets) != 1:
            return None
        statement = model.parents.get(line)
        if (
            not (isinstance(target.value, cst.Name) and target.value.value == "self")
            or not isinstance(statement, cst.SimpleStatementLine)
            or not isinstance(function.body, cst.IndentedBlock)
        ):
            return None
        if statement not in function.body.body:
            return self._set_by_constructor(model, function, statement, line, attr)
        body = function.body
        read_at = next((p for p in model.ancestors(node) if model.parents.get(p) is body), None)
        if not isinstance(read_at, cst.BaseStatement):
            return None
        return line.value if body.body.index(read_at) > body.body.index(statement) else None

    def _set_by_constructor(
        self,
        model: SemanticModel,
        method: cst.FunctionDef,
        statement: cst.SimpleStatementLine,
        line: cst.Assign,
        attr: str,
    ) -> cst.BaseExpression | None:
        """The value `line` gives `self.<attr>`, when it is a statement of the body of the
        `__init__` of `method`'s own class, another method, and no other file writes `attr`."""
        init = model.function_of(statement)
        owner = model.method_class(method)
        project = self.ctx.project
        if (
            init is None
            or init is method
            or init.name.value != "__init__"
            or not isinstance(init.body, cst.IndentedBlock)
            or statement not in init.body.body
            or model.method_class(init) is not owner
            or project is None
            or owner is None
            or not project.attribute_set_only_in(self.ctx.absolute_path, owner.name.value, attr)
        ):
            return None
        return line.value

    def _fixed(self, name: cst.Name) -> cst.BaseExpression | None:
        """The literal a function's local `name` is only ever bound to, or the default of a
        parameter that no call of the project overrides (`_unused_default`)."""
        model = self.ctx.fact(SemanticModel)
        owner, bindings = model.resolve(name.value, model.scope_of(name))
        if not isinstance(owner, cst.FunctionDef) or len(bindings) != 1:
            return None
        if self._rebound_elsewhere(model, owner, name.value):
            return None
        binding = bindings[0]
        if binding.kind is BindingKind.PARAM and isinstance(binding.node, cst.Param):
            return self._unused_default(model, owner, binding.node)
        return binding.exact

    def _unused_default(
        self, model: SemanticModel, function: cst.FunctionDef, param: cst.Param
    ) -> cst.BaseExpression | None:
        """The literal default of `param` of a module-level, undecorated function of the file,
        or of the undecorated `__init__` of an undecorated module-level class (its calls are
        the class's, `Net(64)`), when every call in the project leaves it so
        (`ProjectIndex.default_never_overridden`: some call, none passing it, the function
        never handed over, the class never derived from, not the public API of a
        distribution)."""
        default = param.default
        project = self.ctx.project
        if (
            default is None
            or not _literal_value(default)[0]
            or project is None
            or function.decorators
        ):
            return None
        params = function.params
        positional = [*params.posonly_params, *params.params]
        name = function.name.value
        owner = model.method_class(function)
        if owner is not None and name == "__init__":
            if owner.decorators or not isinstance(model.parents.get(owner), cst.Module):
                return None
            name, positional = owner.name.value, positional[1:]  # `self` is not passed
        elif not isinstance(model.parents.get(function), cst.Module):
            return None
        if param in positional:
            position: int | None = positional.index(param)
        elif param in params.kwonly_params:
            position = None
        else:
            return None
        if not project.default_never_overridden(
            self.ctx.absolute_path, name, param.name.value, position
        ):
            return None
        return default

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


def _written(model: SemanticModel, node: cst.Attribute) -> bool:
    """Whether `node` is written: a target (also inside a tuple or list target) of an
    assignment, an augmented or annotated one, a loop, a `with` or a `del`."""
    child: cst.CSTNode = node
    parent = model.parents.get(child)
    while isinstance(parent, cst.Tuple | cst.List | cst.Element | cst.StarredElement):
        child, parent = parent, model.parents.get(parent)
    if isinstance(parent, cst.AssignTarget | cst.Del | cst.AsName):
        return True
    if isinstance(parent, cst.AugAssign | cst.AnnAssign | cst.For | cst.CompFor):
        return parent.target is child
    return False


def _up_to_statement(model: SemanticModel, node: cst.CSTNode) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []
    for parent in model.ancestors(node):
        if isinstance(parent, cst.SimpleStatementLine | cst.BaseCompoundStatement):
            break
        found.append(parent)
    return found


def _literal_value(node: cst.BaseExpression) -> tuple[bool, object]:
    """(True, value) for `True`, `False`, `None`, an integer or a plain string literal."""
    if isinstance(node, cst.Name):
        return (True, _CONSTANTS[node.value]) if node.value in _CONSTANTS else (False, None)
    if isinstance(node, cst.Integer):
        try:
            return True, int(node.value.replace("_", ""), 0)
        except ValueError:
            return False, None
    if isinstance(node, cst.SimpleString) and "f" not in node.prefix.lower():
        value = node.evaluated_value
        return (True, value) if isinstance(value, str) else (False, None)
    return False, None


def _branch_taken_when(parent: cst.If | cst.IfExp, child: cst.CSTNode) -> bool | None:
    """The value of the test under which `child` runs: True in the body, False in the else (or
    an `elif`); None for the test itself."""
    if child is parent.body:
        return True
    if child is parent.orelse:
        return False
    return None
