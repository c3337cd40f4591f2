"""The syntax children of a libcst node, read straight from its fields.

libcst's own `children` runs a visitor over every token and whitespace node, and `isinstance`
against its abstract node classes goes through `ABCMeta`; on a whole package those two cost
more than the analysis. Here a node's children are the values of its non-token fields whose
type is a concrete libcst node class, looked up in a set.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import libcst as cst


def _concrete_node_types() -> frozenset[type]:
    found: set[type] = set()
    todo = [cst.CSTNode]
    while todo:
        kind = todo.pop()
        todo.extend(kind.__subclasses__())
        found.add(kind)
    return frozenset(found)


NODE_TYPES = _concrete_node_types()


def _identity_in_c() -> None:
    """Give every node class object's own `__hash__` and `__eq__`.

    libcst nodes hash and compare by identity, but through Python methods (`CSTNode.__hash__`
    returns `id(self)`, `__eq__` is `self is other`), so every lookup in a dict or set keyed by
    nodes (parents, scopes, bindings, orders: about a million per package) pays a Python call.
    object's slots mean the same identity, in C. Only the hash values change (a pointer rotated,
    not the pointer), and with them no meaning: nodes are told apart by identity either way."""
    for kind in NODE_TYPES:
        kind.__hash__ = object.__hash__  # type: ignore[method-assign, assignment]
        kind.__eq__ = object.__eq__  # type: ignore[method-assign, assignment]


_identity_in_c()

# Fields that hold tokens and whitespace: no analysis looks at those as nodes of their own,
# and skipping them leaves about a third of the nodes libcst's visitor goes through.
_TOKEN_FIELDS = frozenset(
    "asynchronous colon comma comment conversion default_indent default_newline dot empty_lines encoding equal "
    "first_colon first_line footer has_trailing_newline header indent last_line lbrace lbracket leading_lines "
    "leading_whitespace lines_after_decorators lpar newline operator posonly_ind rbrace rbracket relative rpar "
    "second_colon semicolon star trailing_comma trailing_whitespace".split()
)
_FIRST = frozenset(
    {"decorators", "keyword"}
)  # libcst visits these before fields declared above them


def _child_fields(kind: type) -> tuple[str, ...]:
    """The fields of `kind` that may hold syntax nodes, in libcst's visiting order: not tokens,
    not whitespace, not text (`Name.value`, a string's quotes and characters)."""
    names = [
        f.name
        for f in dataclasses.fields(kind)
        if f.name not in _TOKEN_FIELDS and not f.name.startswith("whitespace") and f.type is not str
    ]
    return tuple(sorted(names, key=lambda n: n not in _FIRST))


_CHILD_FIELDS = {kind: _child_fields(kind) for kind in NODE_TYPES}
# Nodes that never have syntax children (names, numbers, strings' text, `pass`): a third of all
# nodes are names, so walks skip the `children` call for these.
LEAF_TYPES = frozenset(kind for kind, fields in _CHILD_FIELDS.items() if not fields)


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Syntax children of `node` in source order (no tokens, no whitespace)."""
    kids: list[cst.CSTNode] = []
    for name in _CHILD_FIELDS[type(node)]:
        value = getattr(node, name)
        kind = type(value)
        if kind in NODE_TYPES:
            kids.append(value)
        elif kind is tuple or kind is list:
            kids.extend([v for v in value if type(v) in NODE_TYPES])
    return kids


# Comprehensions: each runs its element once per item, a loop of its own.
COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def in_loop_body(loop: cst.For | cst.While, child: cst.CSTNode) -> bool:
    """Whether `child`, a child of `loop`, runs on every iteration: the body, or a `while` test
    (not a `for`'s iterable, evaluated once, nor an `else`)."""
    return child is loop.body or (isinstance(loop, cst.While) and child is loop.test)


def find_all(node: cst.CSTNode, kinds: type | tuple[type, ...]) -> list[cst.CSTNode]:
    """`node` and the syntax nodes below it that are of `kinds`, in source order: what
    `libcst.matchers.findall` finds for a node matcher with no fields, without importing the
    matchers (their import costs a tenth of a second, more than the rules take on most files)."""
    found: list[cst.CSTNode] = []
    todo = [node]
    while todo:
        current = todo.pop()
        if isinstance(current, kinds):
            found.append(current)
        todo.extend(reversed(children(current)))
    return found


def past_methods(expr: cst.BaseExpression, methods: frozenset[str]) -> cst.BaseExpression:
    """`x` for `x.to(device).eval()` where both methods are in `methods`: the receiver a chain
    of calls of such methods starts from (methods that hand back their receiver, or the same
    module or wrapper)."""
    while (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value in methods
    ):
        expr = expr.func.value
    return expr


def is_name(node: cst.CSTNode | None, value: str) -> bool:
    """`node` is the bare name `value`."""
    return type(node) is cst.Name and node.value == value


def is_attribute(node: cst.CSTNode | None, *names: str) -> bool:
    """`node` is an attribute access `x.name` for one of `names` (any `x`)."""
    return type(node) is cst.Attribute and node.attr.value in names


def returned_values(function: cst.FunctionDef) -> list[cst.BaseExpression]:
    """What the function's own `return` statements give (bare returns left out)."""
    return [r.value for r in own_returns(function) if r.value is not None]


# What holds none of a function's own returns: statements on one line, expressions, nested
# functions, classes and lambdas. Their concrete types, looked up as a set: isinstance against
# libcst's abstract classes goes through ABCMeta, in Python, once per class. Read off each
# class's MRO: `issubclass` against those ABCs costs 30 ms at import, a tenth of a small run.
_NO_OWN_RETURN_BASES = (
    cst.BaseSmallStatement,
    cst.BaseExpression,
    cst.FunctionDef,
    cst.ClassDef,
    cst.Lambda,
)
_NO_OWN_RETURNS = frozenset(
    kind for kind in NODE_TYPES if any(base in kind.__mro__ for base in _NO_OWN_RETURN_BASES)
)


def own_returns(function: cst.FunctionDef) -> list[cst.Return]:
    """The function's own return statements (not those of nested functions, classes or lambdas)."""
    found: list[cst.Return] = []
    todo: list[cst.CSTNode] = [function.body]
    while todo:
        node = todo.pop()
        if type(node) is cst.Return:
            found.append(node)
        elif type(node) not in _NO_OWN_RETURNS:
            todo.extend(children(node))  # no return hides in an expression
    return found


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """`node` and every syntax node below it, iteratively (no recursion limit)."""
    todo = [node]
    while todo:
        current = todo.pop()
        yield current
        todo.extend(children(current))


def is_main_guard(statement: cst.CSTNode) -> bool:
    """`if __name__ == "__main__":` (a string on the right, as written)."""
    if type(statement) is not cst.If or type(statement.test) is not cst.Comparison:
        return False
    test = statement.test
    if not isinstance(test.left, cst.Name) or test.left.value != "__name__":
        return False
    if len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    return isinstance(target.operator, cst.Equal) and isinstance(
        target.comparator, cst.SimpleString
    )
