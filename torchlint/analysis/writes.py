"""In-place writes: where code writes into the array or tensor that a name holds.

A tensor made by `torch.from_numpy` or `torch.as_tensor` shares memory with its array, so a
write into either one after the call shows in the other; `torch.tensor`'s copy keeps them
apart. Whether such a write follows is read from the semantic model: the uses of the holding
name (or `self.` attribute) and, from each use up through views (`x[i]`, `x.T`,
`x.reshape(...)`), whether the code stores into it (`x[i] = v`, `x += v`), calls an in-place
method on it (`add_`, `fill_`, `fill`, `sort`), passes it as `out=` or to a function that
writes its first argument (`np.copyto`, `np.add.at`, `np.random.shuffle`,
`torch.nn.init.normal_`).
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from torchlint.analysis.model import SemanticModel

# numpy's ndarray methods that change the array's data in place (torch's end in `_`).
_ARRAY_METHODS = frozenset(
    {"fill", "sort", "put", "itemset", "resize", "partition", "byteswap", "setfield"}
)
# Trailing-underscore methods that change no data.
_NOT_WRITES = frozenset({"requires_grad_", "share_memory_"})
# Functions that write into their first argument, by their last name.
_WRITING_FUNCTIONS = frozenset(
    {"copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis", "shuffle", "at"}
)

Holder = cst.Name | cst.Attribute


def holder(model: SemanticModel, expr: cst.BaseExpression) -> Holder | None:
    """The name or `self.` attribute whose array `expr` reads or may view: `x` in
    `x[:, 0].reshape(-1)`, `self.images` in `self.images[i]`; None for a fresh value
    (a call of a function, arithmetic) or a module (`np` in `np.load(p)`)."""
    while True:
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            expr = expr.func.value  # a method may return a view of its receiver
        elif isinstance(expr, cst.Attribute):
            if isinstance(expr.value, cst.Name) and model.self_class(expr) is not None:
                return expr
            expr = expr.value
        elif isinstance(expr, cst.Name):
            bindings = model.all_bindings(expr)
            return None if any(b.kind == "import" for b in bindings) else expr
        else:
            return None


def result_holders(model: SemanticModel, call: cst.Call) -> list[Holder]:
    """The names or `self.` attributes the result of `call` is bound to (`t = torch.tensor(x)`,
    also through views and methods that may return it, `t = torch.tensor(x).float()`)."""
    node: cst.CSTNode = call
    parent = model.parents.get(node)
    while True:
        if isinstance(parent, cst.Subscript) and parent.value is node:
            node, parent = parent, model.parents.get(parent)
            continue
        grand = model.parents.get(parent) if isinstance(parent, cst.Attribute) else None
        if (
            isinstance(parent, cst.Attribute)
            and parent.value is node
            and isinstance(grand, cst.Call)
        ):
            node, parent = grand, model.parents.get(grand)
            continue
        break
    targets: list[cst.BaseExpression]
    if isinstance(parent, cst.Assign) and parent.value is node:
        targets = [t.target for t in parent.targets]
    elif isinstance(parent, cst.AnnAssign | cst.NamedExpr) and parent.value is node:
        targets = [parent.target]
    else:
        return []
    return [
        t
        for t in targets
        if isinstance(t, cst.Name)
        or (isinstance(t, cst.Attribute) and _is_self_attribute(model, t))
    ]


def written_after(model: SemanticModel, held: Holder, at: cst.CSTNode) -> cst.CSTNode | None:
    """A write into what `held` holds that may run after `at`: later in the same scope, anywhere
    in a loop around both, or in another scope (a function may run at any time), except a
    class's `__init__`, which runs before its other methods."""
    scope = model.scope_of(at)
    for use in _uses(model, held):
        write = _write(model, use)
        if write is None:
            continue
        where = model.scope_of(use)
        if where is scope:
            if _runs_after(model, write, at):
                return write
        elif not (_is_init(where) and isinstance(held, cst.Attribute)):
            return write
    return None


def _is_init(scope: cst.CSTNode) -> bool:
    return isinstance(scope, cst.FunctionDef) and scope.name.value == "__init__"


def _runs_after(model: SemanticModel, write: cst.CSTNode, at: cst.CSTNode) -> bool:
    if (model.enter(write) or 0) > (model.enter(at) or 0):
        return True
    return any(
        model.is_ancestor(loop, at) and model.is_ancestor(loop, write) for loop in model.loops
    )


def _uses(model: SemanticModel, held: Holder) -> Iterator[cst.CSTNode]:
    """Every use of the same variable: names resolving to the same scope; `self.x` in every
    method of the same class."""
    if isinstance(held, cst.Name):
        found_in = model.resolve(held.value, model.scope_of(held))[0]
        for name in model.names.get(held.value, ()):
            if model.resolve(name.value, model.scope_of(name))[0] is found_in:
                yield name
        return
    owner = model.self_class(held)
    for attribute in model.attributes.get(held.attr.value, ()):
        if isinstance(attribute.value, cst.Name) and model.self_class(attribute) is owner:
            yield attribute


def _write(model: SemanticModel, use: cst.CSTNode) -> cst.CSTNode | None:
    """The statement or call that writes into the value at `use`, through views of it; else None."""
    node, parent = use, model.parents.get(use)
    while True:
        if type(parent) is cst.Subscript and parent.value is node:
            node, parent = parent, model.parents.get(parent)
            continue
        if type(parent) is cst.Attribute and parent.value is node:
            grand = model.parents.get(parent)
            if isinstance(grand, cst.Call) and grand.func is parent:
                if _writing_method(parent.attr.value):
                    return grand
                node, parent = grand, model.parents.get(grand)  # a method's result may be a view
                continue
            node, parent = parent, model.parents.get(parent)
            continue
        if type(parent) is cst.Element and isinstance(model.parents.get(parent), cst.Tuple):
            node = model.parents[parent]  # `out=(x,)`
            parent = model.parents.get(node)
        break
    if type(parent) is cst.AssignTarget and parent.target is node:
        return parent if node is not use else None  # `x[i] = v` writes; `x = v` rebinds
    if type(parent) is cst.AugAssign and parent.target is node:
        return parent
    if isinstance(parent, cst.Arg) and parent.value is node:
        return _writing_argument(model, parent)
    return None


def _writing_method(name: str) -> bool:
    if name in _ARRAY_METHODS:
        return True
    return name.endswith("_") and not name.startswith("_") and name not in _NOT_WRITES


def _writing_argument(model: SemanticModel, arg: cst.Arg) -> cst.CSTNode | None:
    call = model.parents.get(arg)
    if not isinstance(call, cst.Call):
        return None
    if arg.keyword is not None:
        return call if arg.keyword.value == "out" else None
    if not call.args or call.args[0] is not arg:
        return None
    func = call.func
    if isinstance(func, cst.Attribute):
        name = func.attr.value
    else:  # `fn(x)`; not `fns[0](x)` or `make()(x)`, whose `.value` is a node
        name = func.value if isinstance(func, cst.Name) else ""
    return call if name in _WRITING_FUNCTIONS or _writing_method(name) else None


def _is_self_attribute(model: SemanticModel, node: cst.BaseExpression) -> bool:
    return (
        isinstance(node, cst.Attribute)
        and isinstance(node.value, cst.Name)
        and model.self_class(node) is not None
    )
