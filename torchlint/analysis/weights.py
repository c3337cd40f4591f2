"""Values that become a module's weights: an `nn.Parameter` or a registered buffer.

Code that builds or loads a model's weights (a checkpoint conversion, constants loaded in a
module's `__init__`) runs once per model, however many layers it loops over; what it copies is
the model, not a batch. A value becomes a weight where it is, through views and tensor methods
(`t.transpose(0, 1).contiguous()`), the data of `nn.Parameter(...)` or the tensor of
`register_buffer(name, ...)`/`register_parameter(name, ...)`, directly or as the argument of a
function of the file that makes its parameter one (`set_param(layer, torch.tensor(w))` with
`layer.weight = nn.Parameter(weight)`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from torchlint.analysis.model import SemanticModel, passed_argument

if TYPE_CHECKING:
    from torchlint.analysis.context import FileContext

__all__ = ["becomes_weight"]

_PARAMETERS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
# Module methods that register their second argument (`tensor=`, `param=`) as a weight.
_REGISTERS = {"register_buffer": "tensor", "register_parameter": "param"}
_MAX_DEPTH = 2  # helpers handing the value on: `set_block` -> `set_param` -> `nn.Parameter`


def becomes_weight(ctx: FileContext, value: cst.BaseExpression, depth: int = 0) -> bool:
    """Whether `value` (through views and methods of its result) becomes a module's weight."""
    model = ctx.fact(SemanticModel)
    node = _through_methods(model, value)
    arg = model.parents.get(node)
    call = model.parents.get(arg) if isinstance(arg, cst.Arg) else None
    if not isinstance(arg, cst.Arg) or not isinstance(call, cst.Call):
        return False
    if _registers(ctx, call, arg):
        return True
    if depth >= _MAX_DEPTH:
        return False
    return any(
        becomes_weight(ctx, use, depth + 1)
        for function in model.callees.get(call, ())
        for use in _parameter_uses(model, function, call, node)
    )


def _through_methods(model: SemanticModel, node: cst.BaseExpression) -> cst.BaseExpression:
    """The outermost `node.m(...).n(...)[...]` chain on `node`: a weight made of a view of it."""
    while True:
        parent = model.parents.get(node)
        if isinstance(parent, cst.Subscript) and parent.value is node:
            node = parent
            continue
        grand = model.parents.get(parent) if isinstance(parent, cst.Attribute) else None
        if (
            isinstance(grand, cst.Call)
            and isinstance(parent, cst.Attribute)
            and grand.func is parent
        ):
            node = grand
            continue
        return node


def _registers(ctx: FileContext, call: cst.Call, arg: cst.Arg) -> bool:
    """`nn.Parameter(arg)`, `register_buffer(name, arg)`, `register_parameter(name, arg)`."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if ctx.symbols.qualname(call.func) in _PARAMETERS:
        return arg is (positional[0] if positional else None) or _keyword(arg) == "data"
    method = call.func.attr.value if isinstance(call.func, cst.Attribute) else None
    if method not in _REGISTERS:
        return False
    return arg is (positional[1] if len(positional) > 1 else None) or (
        _keyword(arg) == _REGISTERS[method]
    )


def _keyword(arg: cst.Arg) -> str | None:
    return arg.keyword.value if arg.keyword is not None else None


def _parameter_uses(
    model: SemanticModel, function: cst.FunctionDef, call: cst.Call, passed: cst.BaseExpression
) -> list[cst.Name]:
    """The uses, in `function`'s own scope, of the parameter that `call` passes `passed` for."""
    params = function.params
    positional = [*params.posonly_params, *params.params]
    shift = 1 if positional and positional[0].name.value in ("self", "cls") else 0
    for index, param in enumerate([*positional, *params.kwonly_params]):
        at = index - shift if index < len(positional) else None
        if passed_argument(call, param.name.value, at) is passed:
            return [n for n in model.uses(function, param.name.value) if n is not param.name]
    return []
