"""One pass over the tree that runs every enabled rule's visitor methods.

Dispatch tables are built once per rule class. Each rule method runs under its own guard,
so a bug in one rule becomes a TL999 finding for that rule and file while the others go on.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import cast

import libcst as cst

from torchlint.analysis.context import FileContext
from torchlint.analysis.nodes import LEAF_TYPES, children
from torchlint.rule import Rule


class RuleCrash(Exception):
    def __init__(self, rule: Rule, error: BaseException) -> None:
        super().__init__(f"{rule.code} {rule.name}: {type(error).__name__}: {error}")
        self.rule = rule
        self.error = error


_HOOKS: dict[type[Rule], tuple[tuple[str, str], ...]] = {}


def _hooks(rule_class: type[Rule]) -> tuple[tuple[str, str], ...]:
    """(kind, node type name) for every visit_X/leave_X method the rule defines, found once per
    rule class."""
    found = _HOOKS.get(rule_class)
    if found is None:
        hooks = []
        for attr in dir(rule_class):
            kind, _, node_type = attr.partition("_")
            if kind in ("visit", "leave") and node_type and hasattr(cst, node_type):
                hooks.append((kind, node_type))
        found = _HOOKS[rule_class] = tuple(hooks)
    return found


class _Dispatcher:
    """Walks syntax nodes iteratively (no recursion limit) calling the rules' hooks.

    Pre-order `visit_X`, post-order `leave_X`, in libcst's order. The parents map is filled as
    it goes (a node's ancestors are known when its hooks run); a node gets a second, leaving
    visit only when some rule has a `leave_` hook for its type.
    """

    def __init__(self, ctx: FileContext, rules: list[Rule]) -> None:
        self.ctx = ctx
        self.failed: dict[Rule, BaseException] = {}
        self.visits: dict[str, list[tuple[Rule, Callable]]] = defaultdict(list)
        self.leaves: dict[str, list[tuple[Rule, Callable]]] = defaultdict(list)
        for rule in rules:
            for kind, node_type in _hooks(type(rule)):
                table = self.visits if kind == "visit" else self.leaves
                table[node_type].append((rule, getattr(rule, f"{kind}_{node_type}")))

    def _run(self, methods: list[tuple[Rule, Callable]], node: cst.CSTNode) -> None:
        for rule, method in methods:
            if rule in self.failed:
                continue
            try:
                method(node)
            except RecursionError:
                raise
            except Exception as error:  # noqa: BLE001 - one rule's bug must not stop the others
                self.failed[rule] = error

    def walk(self, root: cst.Module) -> None:
        ctx, visits, leaves = self.ctx, self.visits, self.leaves
        parents, children_of = ctx.parents, ctx.children
        # A node to visit is pushed as itself, one to leave wrapped in a 1-tuple (no node is a
        # tuple): no pair is built per node of the file.
        todo: list[cst.CSTNode | tuple[cst.CSTNode]] = [root]
        while todo:
            item = todo.pop()
            if type(item) is tuple:
                node = item[0]
                ctx.current = node
                self._run(leaves[type(node).__name__], node)
                continue
            node = item  # type: ignore[assignment]  # not a tuple: a node (no cast call per node)
            kind = type(node)
            name = kind.__name__
            if kind is cst.Import or kind is cst.ImportFrom:
                ctx.symbols.add(cast("cst.Import | cst.ImportFrom", node))  # its exact type, above
            if name in visits:
                ctx.current = node
                self._run(visits[name], node)
            if name in leaves:
                todo.append((node,))
            if kind in LEAF_TYPES:
                continue
            kids = children_of[node] = children(node)
            for child in kids:
                parents[child] = node
            todo.extend(reversed(kids))
        ctx.current = None
        ctx.traversed = True


def run_rules(ctx: FileContext, rules: list[Rule]) -> dict[Rule, BaseException]:
    """Run `rules` over `ctx.module`; returns the rules that raised, with their error."""
    dispatcher = _Dispatcher(ctx, rules)
    dispatcher.walk(ctx.module)
    for rule in rules:
        if rule in dispatcher.failed:
            continue
        try:
            rule.finish()
        except RecursionError:
            raise
        except Exception as error:  # noqa: BLE001
            dispatcher.failed[rule] = error
    return dispatcher.failed
