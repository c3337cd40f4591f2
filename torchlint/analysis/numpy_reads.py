"""Values the code turns into numpy arrays without detaching them first.

`Tensor.numpy()` raises on a tensor that requires grad ("Can't call numpy() on Tensor that
requires grad"), so a forward's value that reaches `.numpy()` through operations that keep its
graph (`.cpu()`, indexing, reshapes, floating casts) proves that the forward records no graph
where it runs: its module's parameters are frozen, or its callers turned grad off, in ways the
file may not show (a TorchScript detector loaded with frozen weights, a caller in another
module). Operations that drop the graph themselves (`argmax`, comparisons, integer casts,
`.detach()`, `.numpy(force=True)`) prove nothing, and are not followed.

Followed: the forward's own chain (`model(x).cpu().numpy()`), a name bound to it whose later use
in the same block is such a chain, and a function of the file handed that value whose parameter
reaches `.numpy()` in a statement of its own body that runs on every call
(`stats.append_torch(features)` with `self.append(x.cpu().numpy())`).
"""

from __future__ import annotations

import libcst as cst

from torchlint.analysis.model import BindingKind, SemanticModel

__all__ = ["reaches_numpy"]

# Tensor methods whose result requires grad whenever their receiver does.
_GRAD_KEEPING = frozenset(
    {
        "cpu",
        "cuda",
        "clone",
        "contiguous",
        "float",
        "double",
        "half",
        "squeeze",
        "unsqueeze",
        "view",
        "reshape",
        "flatten",
        "permute",
        "transpose",
        "softmax",
        "log_softmax",
        "sigmoid",
    }
)


def reaches_numpy(model: SemanticModel, call: cst.Call) -> bool:
    """Whether the value `call` computes reaches `.numpy()` with its graph kept (see the module)."""
    top, numpy = _chain(model, call)
    if numpy:
        return True
    if _handed_to_numpy(model, top):
        return True
    assign = model.parents.get(top)
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
        return False
    target = assign.targets[0].target
    return isinstance(target, cst.Name) and any(
        _converted(model, use) for use in _later_uses(model, assign, target)
    )


def _converted(model: SemanticModel, use: cst.Name) -> bool:
    """`use` reaches `.numpy()` through its own chain, or that chain is handed to a function
    that does."""
    top, numpy = _chain(model, use)
    return numpy or _handed_to_numpy(model, top)


def _chain(model: SemanticModel, node: cst.BaseExpression) -> tuple[cst.BaseExpression, bool]:
    """The outermost expression `node` reaches through graph-keeping methods and subscripts,
    and whether the chain ends in a plain `.numpy()`."""
    current: cst.BaseExpression = node
    while True:
        parent = model.parents.get(current)
        if isinstance(parent, cst.Subscript) and parent.value is current:
            current = parent
            continue
        if not isinstance(parent, cst.Attribute) or parent.value is not current:
            return current, False
        call = model.parents.get(parent)
        if not isinstance(call, cst.Call) or call.func is not parent:
            return current, False
        if parent.attr.value == "numpy":
            return current, not call.args  # `.numpy(force=True)` detaches itself
        if parent.attr.value not in _GRAD_KEEPING:
            return current, False
        current = call


def _later_uses(model: SemanticModel, assign: cst.Assign, target: cst.Name) -> list[cst.Name]:
    """The loads of `target` in the block of `assign`, after it, that only `assign` reaches."""
    statement = model.statement_of(assign)
    block = model.parents.get(statement) if statement is not None else None
    start = model.order.get(target, 0)
    found = []
    for use in model.uses(model.scope_of(target), target.value):
        if model.order.get(use, 0) <= start:
            continue
        reaching = model.reaching(use)
        if len(reaching) != 1 or reaching[0].node is not assign:
            continue
        used_in = model.statement_of(use)
        if used_in is not None and model.parents.get(used_in) is block:
            found.append(use)
    return found


def _handed_to_numpy(model: SemanticModel, value: cst.BaseExpression) -> bool:
    """`stats.append_torch(value)`: a positional argument of a call of one function of the file
    whose parameter for it reaches `.numpy()` on every call."""
    arg = model.parents.get(value)
    call = model.parents.get(arg) if isinstance(arg, cst.Arg) else None
    if not isinstance(call, cst.Call) or not isinstance(arg, cst.Arg) or arg.keyword or arg.star:
        return False
    targets = [f for f in model.callees.get(call, ()) if (call, f) not in model.callbacks]
    if len(targets) != 1:
        return False
    function = targets[0]
    params = [*function.params.posonly_params, *function.params.params]
    index = [a for a in call.args if a.keyword is None].index(arg)
    if params and params[0].name.value in ("self", "cls") and isinstance(call.func, cst.Attribute):
        index += 1  # `obj.method(x)`: the receiver binds the first parameter
    if index >= len(params) or any(a.star for a in call.args[: call.args.index(arg)]):
        return False
    return _param_reaches_numpy(model, function, params[index])


def _param_reaches_numpy(model: SemanticModel, function: cst.FunctionDef, param: cst.Param) -> bool:
    """A statement of `function`'s own body (outside any branch, loop or handler) turns the
    parameter into numpy, and every other binding of its name sits in a branch, so on some
    path the value handed over is the one converted (`x = torch.stack(...)` only for several
    processes, then `x.cpu().numpy()`)."""
    name = param.name.value
    bindings = model.bindings[function].get(name, [])
    if any(
        b.kind is not BindingKind.PARAM and not _in_branch(model, b.node, function)
        for b in bindings
    ):
        return False
    body = function.body
    for use in model.uses(function, name):
        statement = model.statement_of(use)
        if statement is None or model.parents.get(statement) is not body:
            continue
        if _chain(model, use)[1]:
            return True
    return False


def _in_branch(model: SemanticModel, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
    for parent in model.ancestors(node):
        if parent is function:
            return False
        if isinstance(parent, cst.If):
            return True
    return False
