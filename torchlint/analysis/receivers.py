"""What the receiver of a method call can hold, read with CPython's `ast` for the project index.

`x.start()` in another module is a call of the project's `Demo.start` only if `x` can hold a
`Demo`. Callers found by the method's name alone (`ProjectIndex._method_sites`) include calls on
receivers that cannot: `wrapper.start()` where `wrapper = op.WrapperPython()`, a class of another
library. A local name bound in its function only by calls (`x = Klass(...)`, past methods that
return their receiver such as `.to(device)`) holds what those calls build; any other binding
(a parameter, a loop target, an unpacking, `global`) leaves it unknown.
"""

from __future__ import annotations

import ast

from torchlint.analysis.ast_names import ast_dotted

# Methods that return the object they are called on: `Net().cuda().eval()` is still a `Net`.
_CHAIN = frozenset({"to", "cuda", "cpu", "eval", "train", "half", "float", "double"})
# Alternate constructors: class methods that hand back an instance of the class they are called
# on (Hugging Face's `from_pretrained`/`from_config`, Lightning's `load_from_checkpoint`).
_ALTERNATE_CONSTRUCTORS = frozenset({"from_pretrained", "from_config", "load_from_checkpoint"})
# (function key, local name) -> the callees of the calls its every binding is; per content digest
_BUILT: dict[str, dict[tuple[str, str], tuple[str, ...]]] = {}


def built_locals(digest: str, tree: ast.Module) -> dict[tuple[str, str], tuple[str, ...]]:
    """For each module-level function (`f`) and method of a module-level class (`Class.m`) of
    `tree`, the local names bound only by assignments of calls, with those calls' callees as
    written (`op.WrapperPython`). Cached per content digest."""
    if digest not in _BUILT:
        _BUILT[digest] = _built_locals(tree)
    return _BUILT[digest]


def cached_locals(digest: str) -> dict[tuple[str, str], tuple[str, ...]] | None:
    """`built_locals` of a content asked about before, else None."""
    return _BUILT.get(digest)


def _built_locals(tree: ast.Module) -> dict[tuple[str, str], tuple[str, ...]]:
    found: dict[tuple[str, str], tuple[str, ...]] = {}
    for key, function in _functions(tree):
        for name, callees in _call_bound_names(function).items():
            found[key, name] = callees
    return found


def _functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    functions: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            functions.append((node.name, node))
        elif isinstance(node, ast.ClassDef):
            functions += [
                (f"{node.name}.{s.name}", s)
                for s in node.body
                if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
            ]
    return functions


def _call_bound_names(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
) -> dict[str, tuple[str, ...]]:
    """The names `function` binds only by `name = call(...)`: every other way a name is bound
    (parameters, loop and `with` targets, unpacking, augmented assignment, imports, `except ...
    as`, nested definitions, `global`/`nonlocal` declarations), anywhere in its body, nested
    scopes included, makes the name unknown."""
    arguments = function.args
    unknown = {
        a.arg
        for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        + [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    }
    callees: dict[str, list[str]] = {}
    assigned: set[int] = set()  # ids of the Name targets of `name = call(...)`
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, callee = node.targets[0], built_by(node.value)
            if isinstance(target, ast.Name) and callee is not None:
                callees.setdefault(target.id, []).append(callee)
                assigned.add(id(target))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            if id(node) not in assigned:
                unknown.add(node.id)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            unknown.update(node.names)
        elif isinstance(node, ast.alias):
            unknown.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            unknown.add(node.name)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node is not function:
                unknown.add(node.name)
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            unknown.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            unknown.add(node.rest)
    return {name: tuple(found) for name, found in callees.items() if name not in unknown}


def built_by(value: ast.expr) -> str | None:
    """The callee whose result `value` is, past methods that return their receiver."""
    while (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in _CHAIN
    ):
        value = value.func.value
    return ast_dotted(value.func) if isinstance(value, ast.Call) else None


def constructed_class(callee: str) -> str:
    """The class whose instance a call of `callee` builds, as written: `OtherLM` for
    `OtherLM.load_from_checkpoint`, an alternate constructor called on a class (a name written
    as classes are); `callee` itself otherwise."""
    klass, _, method = callee.rpartition(".")
    if method in _ALTERNATE_CONSTRUCTORS and klass.rpartition(".")[2][:1].isupper():
        return klass
    return callee


def attribute_builders(klass: ast.ClassDef, attribute: str) -> tuple[str, ...] | None:
    """The callees of the calls every binding of `self.<attribute>` in the methods of `klass`
    is (`self.model = PPOModel(cfg)`, past methods that return their receiver), as written;
    None when one is bound otherwise (a parameter's value, an unpacking, a `for` or `with`
    target, augmented, deleted), `setattr` is called, or the class body binds the name to
    anything but a literal (its default)."""
    callees: list[str] = []
    for node in klass.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            named = any(isinstance(t, ast.Name) and t.id == attribute for t in targets)
            if named and not isinstance(node.value, ast.Constant):
                return None
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        params = node.args.posonlyargs + node.args.args
        if not params or any(
            isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list
        ):
            continue
        me = params[0].arg
        assigned: set[int] = set()
        for inner in ast.walk(node):
            if isinstance(inner, ast.Assign | ast.AnnAssign) and inner.value is not None:
                targets = inner.targets if isinstance(inner, ast.Assign) else [inner.target]
                for target in targets:
                    if _is_attribute_of(target, me, attribute):
                        callee = built_by(inner.value)
                        if callee is None:
                            return None
                        callees.append(callee)
                        assigned.add(id(target))
            elif isinstance(inner, ast.Attribute) and isinstance(inner.ctx, ast.Store | ast.Del):
                if _is_attribute_of(inner, me, attribute) and id(inner) not in assigned:
                    return None
            elif (
                isinstance(inner, ast.Call)
                and isinstance(inner.func, ast.Name)
                and inner.func.id == "setattr"
            ):
                return None
    return tuple(callees)


def _is_attribute_of(node: ast.expr, me: str, attribute: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == attribute
        and isinstance(node.value, ast.Name)
        and node.value.id == me
    )
