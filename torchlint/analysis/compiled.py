"""Which code of a file `torch.compile` traces: the region where a graph break can happen.

A function is compiled when it is decorated with `@torch.compile` (bare or called with options)
or passed to `torch.compile(f)`; a module class is compiled when an instance of it built in the
file is passed to `torch.compile(model)` or calls `model.compile()`, and then its `forward` is.
Dynamo inlines what traced code calls, so the same-file functions and methods those reach are
traced too, except functions excluded with `torch.compiler.disable`. Inside traced code, a
branch that runs only when not compiling (`if not torch.compiler.is_compiling():`) is not.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from torchlint.analysis.model import SemanticModel

if TYPE_CHECKING:
    from torchlint.analysis.context import FileContext

_COMPILE = frozenset({"torch.compile"})
_DISABLE = frozenset(
    {"torch.compiler.disable", "torch._dynamo.disable", "torch.jit.unused", "torch.jit.ignore"}
)
_IS_COMPILING = frozenset(
    {
        "torch.compiler.is_compiling",
        "torch._dynamo.is_compiling",
        "torch.compiler.is_dynamo_compiling",
    }
)
_MAX_DEPTH = 4  # calls followed from a compiled function into the file's functions


class Compiled:
    """The functions of one file that `torch.compile` traces, via `ctx.fact(Compiled)`."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.scopes = ctx.fact(SemanticModel)

    @cached_property
    def roots(self) -> dict[cst.FunctionDef, str]:
        """Compiled functions and compiled modules' `forward`s, each with how it is compiled."""
        found: dict[cst.FunctionDef, str] = {}
        for functions in self.scopes.functions.values():
            for function in functions:
                if any(self._compiles(d.decorator) for d in function.decorators):
                    found[function] = "`@torch.compile`"
        for call in self.scopes.calls:
            for function in self._compiled_by(call):
                found.setdefault(function, f"`{self.ctx.code(call)}`")
        return found

    @cached_property
    def traced(self) -> dict[cst.FunctionDef, cst.FunctionDef]:
        """Every traced function, with the compiled root it is reached from."""
        calls_in: dict[cst.FunctionDef, list[cst.Call]] = {}
        for call in self.scopes.calls:
            function = self.scopes.function_of(call)
            if function is not None:
                calls_in.setdefault(function, []).append(call)
        found = {root: root for root in self.roots if not self._disabled(root)}
        frontier = list(found)
        for _ in range(_MAX_DEPTH):
            reached = []
            for function in frontier:
                for call in calls_in.get(function, ()):
                    if self.not_compiling(call):
                        continue
                    for callee in self.scopes.callees.get(call, ()):
                        if callee not in found and not self._disabled(callee):
                            found[callee] = found[function]
                            reached.append(callee)
            frontier = reached
        return found

    def root_of(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        """The compiled root whose trace runs `node`, or None when `node` is not traced."""
        function = self.scopes.function_of(node)
        if function is None or function not in self.traced or self.not_compiling(node):
            return None
        return self.traced[function]

    def how(self, root: cst.FunctionDef) -> str:
        return self.roots.get(root, "`torch.compile`")

    def not_compiling(self, node: cst.CSTNode) -> bool:
        """Whether `node` sits in a branch that runs only outside of compilation."""
        child = node
        for parent in self.scopes.ancestors(node):
            if isinstance(parent, cst.FunctionDef | cst.Lambda | cst.ClassDef):
                return False
            if isinstance(parent, cst.If | cst.IfExp):
                compiling = self._compiling_test(parent.test)
                if compiling is not None and child in (parent.body, parent.orelse):
                    return (child is parent.body) != compiling
            child = parent
        return False

    def _compiling_test(self, test: cst.BaseExpression) -> bool | None:
        """True for `is_compiling()`, False for `not is_compiling()`, else None."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self._compiling_test(test.expression)
            return None if inner is None else not inner
        if isinstance(test, cst.Call) and self.ctx.symbols.qualname(test.func) in _IS_COMPILING:
            return True
        return None

    def _compiles(self, decorator: cst.BaseExpression) -> bool:
        if isinstance(decorator, cst.Call):
            decorator = decorator.func
        return self.ctx.symbols.qualname(decorator) in _COMPILE

    def _disabled(self, function: cst.FunctionDef) -> bool:
        for decorator in function.decorators:
            node = decorator.decorator
            if isinstance(node, cst.Call):
                node = node.func
            if self.ctx.symbols.qualname(node) in _DISABLE:
                return True
        return False

    def _compiled_by(self, call: cst.Call) -> list[cst.FunctionDef]:
        """What a `torch.compile(x)` or `model.compile()` call compiles, among the file's functions."""
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "compile" and not call.args:
            if self.ctx.symbols.qualname(func) is None:
                return self._forwards_of(func.value, call)
            return []
        if self.ctx.symbols.qualname(func) not in _COMPILE:
            return []
        target = next((a.value for a in call.args if a.keyword is None and not a.star), None)
        if target is None:
            target = next(
                (a.value for a in call.args if a.keyword and a.keyword.value == "model"), None
            )
        if target is None:
            return []
        functions = [
            b.node
            for b in self._bindings(target)
            if b.kind == "def" and isinstance(b.node, cst.FunctionDef)
        ]
        return functions or self._method(target) or self._forwards_of(target, call)

    def _method(self, target: cst.BaseExpression) -> list[cst.FunctionDef]:
        """`self.forward`, `self.__call__`: a method of the class whose method compiles it."""
        if not isinstance(target, cst.Attribute):
            return []
        klass = self.scopes.self_class(target)
        if klass is None:
            return []
        found = _methods(klass, target.attr.value)
        if not found and target.attr.value == "__call__":
            return _methods(klass, "forward")  # a module's `__call__` runs its `forward`
        return found

    def _forwards_of(self, value: cst.BaseExpression, call: cst.Call) -> list[cst.FunctionDef]:
        """The `forward` of the file's class whose instance `value` is (built there, or bound to one)."""
        scope = self.scopes.scope_of(call)
        values = [value]
        if isinstance(value, cst.Name | cst.Attribute):
            values = [b.exact for b in self._bindings(value) if b.exact is not None]
        classes = {self.scopes.built_class(v, scope) for v in values}
        if len(classes) != 1 or None in classes:
            return []
        (klass,) = classes
        assert klass is not None
        return _methods(klass, "forward")

    def _bindings(self, node: cst.BaseExpression):
        if isinstance(node, cst.Name):
            return self.scopes.reaching(node)
        return self.scopes.all_bindings(node)


def _methods(klass: cst.ClassDef, name: str) -> list[cst.FunctionDef]:
    body = klass.body.body if isinstance(klass.body, cst.IndentedBlock) else ()
    return [s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == name]
