"""The semantic model of one file: every binding, scope, load and call, from one walk.

Every fact asks the same few questions: "what was this name bound to here?", "which scope
is this in?", "who calls this function?", "where is every `forward` / `.eval()` / loop?".
One walk per file records each node's parent and source position, every binding in textual
order with its kind, every load with its scope, the names, attributes, functions, classes,
assignments, calls and loops by kind, and the same-file call graph, so each later question
is a few dictionary lookups instead of another walk. Value kinds (tensors, arrays, loaders),
per-batch loops and grad mode are facts built on top of it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, cast

import libcst as cst

from torchlint.analysis.names import NOT_CALLABLE_MODULES
from torchlint.analysis.nodes import LEAF_TYPES, children
from torchlint.analysis.symbols import dotted

if TYPE_CHECKING:
    from torchlint.analysis.context import FileContext

Scope = (
    cst.Module
    | cst.FunctionDef
    | cst.Lambda
    | cst.ClassDef
    | cst.ListComp
    | cst.SetComp
    | cst.DictComp
    | cst.GeneratorExp
)
_SCOPES = (
    cst.FunctionDef,
    cst.Lambda,
    cst.ClassDef,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.GeneratorExp,
)
_SCOPE_TYPES = frozenset(_SCOPES)
_NESTED_SCOPES = frozenset({cst.FunctionDef, cst.Lambda, cst.ClassDef})
# Exact types for tests the model makes of every call, target or scope: `isinstance` of a libcst
# class goes through ABCMeta's hook whenever the answer is no (most of the time), and no libcst
# node type has subclasses.
_NAME_OR_ATTRIBUTE = frozenset({cst.Name, cst.Attribute})
_SUITES = (cst.Module, cst.IndentedBlock, cst.SimpleStatementSuite)
_HELD_DEPTH = 4  # assignments, factories and call sites followed to find the function a value holds
# Methods that return the module they are called on (`Net().cuda().eval()` is still a `Net`).
_MODULE_CHAIN = frozenset(
    {"to", "cuda", "cpu", "eval", "train", "half", "float", "double", "bfloat16", "requires_grad_"}
)


class BindingKind(str, Enum):
    """How a name is bound, which says what a binding's `value` is."""

    ASSIGN = "assign"  # value: the expression bound
    UNPACK = "unpack"  # value: the whole right-hand side of a destructuring assignment
    AUGMENT = "augment"  # node: the AugAssign, value: its operand
    LOOP = "loop"  # value: the iterable, path: the name's position in the target
    PARAM = "param"
    DEF = "def"
    IMPORT = "import"
    WITH = "with"  # value: the context manager
    OTHER = "other"


@dataclass(frozen=True)
class Binding:
    """One place that binds a name; its `kind` says what `value` holds."""

    kind: BindingKind
    node: cst.CSTNode
    value: cst.BaseExpression | None
    order: int
    path: tuple[int, ...] = ()

    @property
    def exact(self) -> cst.BaseExpression | None:
        """The expression the name evidently holds: the value of an assignment, else None."""
        return self.value if self.kind is BindingKind.ASSIGN else None

    @property
    def function(self) -> cst.FunctionDef | None:
        return self.node if isinstance(self.node, cst.FunctionDef) else None

    @property
    def annotation(self) -> cst.BaseExpression | None:
        """A parameter's annotation."""
        if isinstance(self.node, cst.Param) and self.node.annotation is not None:
            return self.node.annotation.annotation
        return None

    @property
    def effect(self) -> cst.CSTNode:
        """Where the binding takes effect: a loop's, `with`'s or handler's target is bound before its body runs."""
        node = self.node
        if isinstance(node, cst.For | cst.CompFor):
            return node.target
        if isinstance(node, cst.WithItem) and node.asname is not None:
            return node.asname
        if isinstance(node, cst.ExceptHandler) and node.name is not None:
            return node.name
        return node


class SemanticModel:
    """Bindings, loads, call sites and nodes by kind of one file, built once by `ctx.fact(SemanticModel)`."""

    def __init__(self, ctx: FileContext) -> None:
        # After the engine's traversal its parent map is complete and shared; before, build one.
        self.parents: dict[cst.CSTNode, cst.CSTNode] = ctx.parents if ctx.traversed else {}
        # Every inner node's syntax children: the traversal's when it is over, else this walk's.
        self.kids: dict[cst.CSTNode, list[cst.CSTNode]] = ctx.children if ctx.traversed else {}
        self.scope_parent: dict[Scope, Scope | None] = {}
        self.bindings: dict[Scope, dict[str, list[Binding]]] = defaultdict(
            lambda: defaultdict(list)
        )
        self.attr_bindings: dict[str, list[Binding]] = defaultdict(
            list
        )  # "self.loader" -> bindings
        self.loads: dict[Scope, dict[str, list[cst.Name]]] = defaultdict(lambda: defaultdict(list))
        self.declared: dict[Scope, dict[str, str]] = defaultdict(
            dict
        )  # name -> "global" | "nonlocal"
        self.mutated: dict[Scope, set[str]] = defaultdict(
            set
        )  # names with item or attribute stores: `batch[k] = ...`
        self.name_scope: dict[cst.Name, Scope] = {}
        self.order: dict[cst.CSTNode, int] = {}
        self.callers: dict[cst.FunctionDef, list[cst.Call]] = defaultdict(list)
        self.callees: dict[cst.Call, list[cst.FunctionDef]] = {}
        self.callbacks: set[tuple[cst.Call, cst.FunctionDef]] = (
            set()
        )  # edges to a function passed as an argument
        self.calls: list[cst.Call] = []  # every call, in textual order
        self.loops: list[cst.For | cst.While] = []  # every loop, in textual order
        self.strings: list[cst.SimpleString] = []
        # Nodes by kind, for questions asked by name: `forward`, `.eval()`, a class's methods.
        self.functions: dict[str, list[cst.FunctionDef]] = defaultdict(list)
        self.classes: dict[str, cst.ClassDef] = {}
        self.names: dict[str, list[cst.Name]] = defaultdict(list)  # every Name, loads and stores
        self.attributes: dict[str, list[cst.Attribute]] = defaultdict(list)
        self.assigns: list[
            tuple[cst.BaseExpression, cst.BaseExpression]
        ] = []  # (target, value), plain and annotated
        self.names_in: dict[tuple[Scope, str], list[cst.Name]] = defaultdict(
            list
        )  # every Name of a scope, in order
        self.class_attrs: dict[tuple[cst.ClassDef, str], list[Binding]] = defaultdict(
            list
        )  # `self.x = ...` in methods
        self._exit: dict[cst.CSTNode, int] = {}
        self._statements: dict[cst.CSTNode, cst.CSTNode | None] = {}
        self._returned: dict[cst.FunctionDef, list[cst.FunctionDef]] = {}
        self.module = ctx.module
        self.path = ctx.path
        self.project = ctx.project  # the project's other modules; None for text not on disk
        self.symbols = ctx.symbols  # read at query time: the traversal may still be adding imports
        walker = _Walker(self)
        walker.walk(ctx.module)
        self._resolve_calls(walker.calls)

    # -- queries -----------------------------------------------------------------------
    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        parent = self.parents.get(node)
        while parent is not None:
            yield parent
            parent = self.parents.get(parent)

    def statement_of(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The innermost statement holding `node` (amortised O(1): the path walked is remembered)."""
        path: list[cst.CSTNode] = []
        current: cst.CSTNode | None = node
        while current is not None and not isinstance(
            current, cst.SimpleStatementLine | cst.BaseCompoundStatement
        ):
            if current in self._statements:
                current = self._statements[current]
                break
            path.append(current)
            current = self.parents.get(current)
        for visited in path:
            self._statements[visited] = current
        return current

    def scope_of(self, node: cst.CSTNode) -> Scope:
        """The innermost function, lambda, class, comprehension or module holding `node`."""
        if type(node) is cst.Name and node in self.name_scope:
            return self.name_scope[node]
        for parent in self.ancestors(node):
            if type(parent) in _SCOPE_TYPES:  # exact types: isinstance goes through ABCMeta
                return cast(Scope, parent)
        return self.module

    def read_in_nested_scope(self, name: str, scope: Scope) -> bool:
        """Whether a function, lambda or comprehension inside `scope` reads `scope`'s `name`."""
        nested, readers = self._nested.get(scope, []), self._readers.get(name, [])
        pool = (
            nested if len(nested) <= len(readers) else readers
        )  # both hold the answer; walk the shorter
        return any(
            other is not scope
            and name in self.loads.get(other, ())
            and self.resolve(name, other)[0] is scope
            for other in pool
        )

    def reads_of(self, name: str, scope: Scope) -> list[cst.Name]:
        """Every read of `scope`'s `name`, in `scope` and in the functions, lambdas and
        comprehensions inside it that see that binding (`zip(preds, labels)` as a
        comprehension's iterable is read in the comprehension's scope here)."""
        return [
            read
            for other in self._readers.get(name, [])
            if other is scope or self.resolve(name, other)[0] is scope
            for read in self.loads[other].get(name, [])
        ]

    @cached_property
    def _readers(self) -> dict[str, list[Scope]]:
        """The scopes that read each name."""
        found: dict[str, list[Scope]] = defaultdict(list)
        for scope, loads in self.loads.items():
            for name in loads:
                found[name].append(scope)
        return found

    @cached_property
    def _nested(self) -> dict[Scope, list[Scope]]:
        """The scopes inside each scope that read anything: only those can read its names as free variables."""
        found: dict[Scope, list[Scope]] = defaultdict(list)
        for inner in self.loads:
            outer = self.scope_parent.get(inner)
            while outer is not None:
                found[outer].append(inner)
                outer = self.scope_parent.get(outer)
        return found

    def resolve(self, name: str, scope: Scope) -> tuple[Scope, list[Binding]]:
        """The scope that binds `name` as seen from `scope`, and its bindings there (Python's rules)."""
        start = scope
        kind = self.declared[scope].get(name)
        if kind == "global":
            return self.module, self.bindings[self.module].get(name, [])
        current: Scope | None = scope
        while current is not None:
            skip = type(current) is cst.ClassDef and current is not start
            found = self.bindings[current].get(name) if not skip else None
            if found and not (current is start and kind == "nonlocal"):
                return current, found
            current = self.scope_parent.get(current)
        return self.module, []

    def reaching(self, name: cst.Name) -> list[Binding]:
        """The bindings of a loaded name that most likely hold its value at that point.

        Textual order stands in for control flow: the last plain binding before the use and
        the augmented assignments after it. Where nothing precedes the use (a loop's back
        edge, a closure, a global), every binding counts. A binding in a branch of an `if`
        that leaves the function (ends in `return` or `raise`) reaches nothing after that
        branch (`if args.phase == "analysis": loader = ...; ...; return`).
        """
        scope = self.scope_of(name)
        found_in, bindings = self.resolve(name.value, scope)
        at = self.order.get(name)
        if not self._runs_in_place(scope, found_in) or at is None:
            return list(bindings)
        count = bisect_left(bindings, at, key=lambda b: b.order)  # bindings are recorded in order
        if not count:
            return list(bindings)
        reach: list[Binding] = []
        for binding in reversed(bindings[:count]):
            if self._left_before(binding, name):
                continue
            reach.append(binding)
            if binding.kind is not BindingKind.AUGMENT:
                break
        return reach[::-1] if reach else list(bindings)

    def _left_before(self, binding: Binding, use: cst.Name) -> bool:
        """Whether `binding` sits in a branch of an `if` (its body or `else`) that ends by
        leaving the function, `return` or `raise` as its last statement, and `use` lies
        outside that branch: control never gets from the binding to the use."""
        for parent in self.ancestors(binding.node):
            if isinstance(parent, cst.FunctionDef | cst.Lambda | cst.ClassDef | cst.Module):
                return False
            if not isinstance(parent, cst.IndentedBlock):
                continue
            owner = self.parents.get(parent)
            if isinstance(owner, cst.If | cst.Else) and not self.is_ancestor(parent, use):
                last = parent.body[-1] if parent.body else None
                if isinstance(last, cst.SimpleStatementLine) and isinstance(
                    last.body[-1], cst.Return | cst.Raise
                ):
                    return True
        return False

    def shadows_import(self, name: cst.Name) -> bool:
        """Whether a binding other than an import reaches the read `name` of an imported name:
        `import model` then `model = model.RNNModel(...)` read in a function, or a parameter
        named like a module the file imports. The import table still names the module there,
        but the name holds the value the file bound."""
        return any(b.kind is not BindingKind.IMPORT for b in self.reaching(name))

    def _runs_in_place(self, scope: Scope, found_in: Scope) -> bool:
        """Whether code of `scope` runs where it stands in `found_in`: the same scope, or list, set
        and dict comprehensions inside it, which run at once (a generator may run later)."""
        while scope is not found_in:
            parent = self.scope_parent[scope]
            if parent is None or not isinstance(scope, cst.ListComp | cst.SetComp | cst.DictComp):
                return False
            scope = parent
        return True

    def all_bindings(self, node: cst.BaseExpression) -> list[Binding]:
        """Every binding of a name or `self.attr`-style chain, wherever in the file."""
        if isinstance(node, cst.Name):
            return list(self.resolve(node.value, self.scope_of(node))[1])
        key = dotted(node)
        return list(self.attr_bindings.get(key, [])) if key else []

    def built_by_calls(self, name: cst.Name) -> list[str] | None:
        """The callees, as written, of the calls that build every value `name` can hold in its
        scope (`wrapper = op.WrapperPython()`, past methods that return their receiver), or
        None when some binding of it is not such a call (a parameter, a loop target)."""
        bindings = self.all_bindings(name)
        callees = [dotted(_constructor(b.exact) or cst.Name("_")) for b in bindings]
        if not bindings or any(b.exact is None or _constructor(b.exact) is None for b in bindings):
            return None
        return [c for c in callees if c] if all(callees) else None

    def function_of(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        for parent in self.ancestors(node):
            if type(parent) is cst.FunctionDef:
                return parent
        return None

    @property
    def for_loops(self) -> list[cst.For]:
        return [loop for loop in self.loops if isinstance(loop, cst.For)]

    # -- positions ---------------------------------------------------------------------
    def enter(self, node: cst.CSTNode) -> int | None:
        """The node's pre-order position; None for nodes the walk does not see (inside imports)."""
        return self.order.get(node)

    def exit(self, node: cst.CSTNode) -> int:
        """The position of the last node inside `node`: positions in between are its descendants."""
        found = self._exit.get(node)
        if found is not None:
            return found
        last = node
        while True:
            inner = [c for c in children(last) if c in self.order]
            if not inner:
                break
            last = inner[-1]
        found = self._exit[node] = self.order[last]
        return found

    def is_ancestor(self, ancestor: cst.CSTNode | None, node: cst.CSTNode) -> bool:
        """Whether `node` lies inside `ancestor` (or is it)."""
        if ancestor is None or ancestor not in self.order or node not in self.order:
            return False
        return self.order[ancestor] <= self.order[node] <= self.exit(ancestor)

    # -- dominating bindings -------------------------------------------------------------
    def dominating(self, name: cst.Name) -> list[Binding] | None:
        """The bindings that surely give `name` its value where it is used; None when that is unclear.

        Stricter than `reaching`: in the scope that binds it, the one binding that dominates
        the use (not one in a branch that may not have run, nor one a loop may redo after the
        use); in an enclosing scope (a global, a closure), every binding there.
        """
        scope = self.scope_of(name)
        if self.declared[scope].get(name.value) == "global":
            scope = self.module
        current: Scope | None = scope
        while current is not None:
            found = [
                b
                for b in self.bindings[current].get(name.value, ())
                if b.kind is not BindingKind.AUGMENT
            ]
            if found and not (isinstance(current, cst.ClassDef) and current is not scope):
                if current is not scope:
                    return found
                single = self._dominating(found, name)
                return [single] if single is not None else None
            current = self.scope_parent.get(current)
        return None

    def value_of(self, name: cst.Name) -> cst.BaseExpression | None:
        """The expression `name` evidently holds at its use, if one dominating binding gives it."""
        found = self.dominating(name)
        return found[0].exact if found and len(found) == 1 else None

    def qualname(self, node: cst.BaseExpression, depth: int = 0) -> str | None:
        """The imported name `node` (`DP`, `nn.DataParallel`) stands for where it is used, through
        the bindings of its head that reach it: an import, or an alias bound to one
        (`Parallel = nn.DataParallel`). None when anything else binds it there (a local
        `DataParallel = MyWrapper`, a parameter, a class): the import table alone is
        file-wide and would still answer `torch.nn.DataParallel`."""
        head = node
        while isinstance(head, cst.Attribute):
            head = head.value
        if not isinstance(head, cst.Name) or depth > _HELD_DEPTH:
            return None
        if head not in self.order:  # not seen by the walk (inside an import statement)
            return self.symbols.qualname(node)
        bindings = self.reaching(head)
        if not bindings or all(b.kind is BindingKind.IMPORT for b in bindings):
            return self.symbols.qualname(node)
        found = {
            self.qualname(b.exact, depth + 1)
            if b.exact is not None and isinstance(b.exact, cst.Name | cst.Attribute)
            else None
            for b in bindings
        }
        if len(found) != 1 or None in found:
            return None
        (full,) = found
        rest = (dotted(node) or "").partition(".")[2]
        return f"{full}.{rest}" if full and rest else full

    # -- is it a module ------------------------------------------------------------------
    @cached_property
    def module_classes(self) -> set[str]:
        """The file's classes that are nn.Modules: they define `forward`, or derive (directly or
        through each other) from a torch.nn class, a module class of another project module, or
        a base whose name says it (`...Module`, `PreTrainedModel`) when nothing resolves it."""
        found = {name for name, node in self.classes.items() if _defines_forward(node)}
        changed = True
        while changed:
            changed = False
            for name, node in self.classes.items():
                if name not in found and any(
                    self._is_module_base(b.value, found) for b in node.bases
                ):
                    found.add(name)
                    changed = True
        return found

    def _is_module_base(self, base: cst.BaseExpression, known: set[str]) -> bool:
        if _torch_module(self.symbols.qualname(base) or "") or (
            isinstance(base, cst.Name) and base.value in known
        ):
            return True
        if self._project_module_class(dotted(base) or ""):
            return True
        # Relative imports (`from .module import Module`, `from ...modeling_utils import
        # PreTrainedModel`) that the project index cannot follow: their names still say it.
        last = (dotted(base) or "").rsplit(".", 1)[-1]
        return (last.endswith("Module") and not last.endswith("DataModule")) or last.endswith(
            "PreTrainedModel"
        )

    def class_is_module(self, callee: cst.BaseExpression) -> bool | None:
        """Whether the class a constructor call names (`nn.Linear`, the file's `Net`, `Scorer`
        imported from another module of the project) is an nn.Module; None when unknown (not a
        class the file, torch.nn or the project resolves)."""
        name = dotted(callee)
        if name is None:
            return None
        if isinstance(callee, cst.Name):
            klass = self._class_named(callee.value, self.scope_of(callee))
            if klass is not None:
                return (
                    True
                    if callee.value in self.module_classes
                    else (False if not klass.bases else None)
                )
        if not name.rsplit(".", 1)[-1][:1].isupper():
            # a function (`os.path.join`, `build_model`): classes are capitalised, unless the
            # project index resolves the name to a module class (`vgg16` of a detection codebase)
            return True if self._project_module_class(name) else None
        full = self.symbols.qualname(callee)
        if full is not None and full.startswith("torch.nn."):
            return _torch_module(full)
        return self._project_module_class(name)

    def _project_module_class(self, name: str) -> bool | None:
        """The project index's answer for a class name as written here, asked once per name."""
        if not name or self.project is None:
            return None
        if name not in self._project_classes:
            self._project_classes[name] = self.project.is_module_class(Path(self.path), name)
        return self._project_classes[name]

    @cached_property
    def _project_classes(self) -> dict[str, bool | None]:
        return {}

    def alias_of(self, name: cst.BaseExpression) -> cst.Name | cst.Attribute | None:
        """What a local alias stands for: `to_tensor` after `to_tensor = torch.tensor`, when that
        one binding is the only one and dominates the use."""
        if not isinstance(name, cst.Name):
            return None
        found = self.dominating(name)
        if not found or len(found) != 1 or len(self.all_bindings(name)) != 1:
            return None
        value = found[0].exact
        return value if isinstance(value, cst.Name | cst.Attribute) else None

    def uses(self, scope: Scope, name: str) -> list[cst.Name]:
        """Every `Name` spelled `name` in `scope` (loads and stores), in source order."""
        return self.names_in.get((scope, name), [])

    def attribute_values(self, owner: cst.ClassDef, attr: str) -> list[cst.BaseExpression | None]:
        """What `self.<attr> = ...` assigns in the methods of `owner` (None where not exact).

        An assignment that a later one in the same method always overwrites (same block, or
        a block around it) is left out: `self.x = df` then `self.x = self.x.values`.
        """
        found = self.class_attrs.get((owner, attr), [])
        return [
            b.exact
            for b in found
            if not any(self._overwrites(later.node, b.node) for later in found)
        ]

    def method_class(self, function: cst.FunctionDef) -> cst.ClassDef | None:
        """The class `function` is a method of (a statement of the class's body), else None."""
        block = self.parents.get(function)
        owner = self.parents.get(block) if block is not None else None
        return owner if isinstance(owner, cst.ClassDef) else None

    def self_class(self, attribute: cst.Attribute) -> cst.ClassDef | None:
        """The class when `attribute` is `self.x` inside one of its methods (`self` = first parameter)."""
        function = self.scope_of(attribute)
        if not isinstance(function, cst.FunctionDef) or not isinstance(attribute.value, cst.Name):
            return None
        params = function.params.params
        if not params or params[0].name.value != attribute.value.value:
            return None
        owner = self.scope_parent.get(function)
        return owner if isinstance(owner, cst.ClassDef) else None

    def own_nodes(self, scope: cst.FunctionDef | cst.Module) -> Iterator[cst.CSTNode]:
        """Nodes of a function's body or of a module, not descending into nested functions, lambdas or classes."""
        todo: list[cst.CSTNode] = (
            list(scope.body) if isinstance(scope, cst.Module) else [scope.body]
        )
        known = self.kids
        while todo:
            node = todo.pop()
            yield node
            kind = type(node)
            if kind not in _NESTED_SCOPES and kind not in LEAF_TYPES:
                kids = known.get(node)
                todo.extend(kids if kids is not None else children(node))

    def _overwrites(self, later: cst.CSTNode, earlier: cst.CSTNode) -> bool:
        if (
            later is earlier
            or self.order[later] <= self.exit(earlier)
            or self.scope_of(later) is not self.scope_of(earlier)
        ):
            return False
        return self.is_ancestor(self._suite(later), earlier)

    def _dominating(self, found: list[Binding], use: cst.Name) -> Binding | None:
        at = self.order[use]
        before = [
            b
            for b in found
            if b.effect in self.order and (self.exit(b.effect) < at or b.kind is BindingKind.PARAM)
        ]
        if not before:
            return None
        last = max(before, key=lambda b: self.exit(b.effect))
        if last.kind is not BindingKind.PARAM and not self.is_ancestor(
            self._suite(last.effect), use
        ):
            return None
        for loop in self._loops_around(use):
            if self.is_ancestor(loop, last.effect):
                break
            if any(
                b.effect in self.order
                and self.order[b.effect] > at
                and self.is_ancestor(loop, b.effect)
                for b in found
            ):
                return None
        return last

    def _suite(self, node: cst.CSTNode) -> cst.CSTNode | None:
        parent = self.parents.get(node)
        while parent is not None and not isinstance(parent, _SUITES):
            parent = self.parents.get(parent)
        return parent

    def _loops_around(self, node: cst.CSTNode) -> Iterator[cst.For | cst.While]:
        parent = self.parents.get(node)
        while parent is not None and not isinstance(parent, _SCOPES):
            if isinstance(parent, cst.For | cst.While):
                yield parent
            parent = self.parents.get(parent)

    # -- call graph --------------------------------------------------------------------
    def _resolve_calls(self, calls: list[tuple[cst.Call, Scope]]) -> None:
        unresolved: list[tuple[cst.Call, Scope]] = []
        for call, scope in calls:
            self.calls.append(call)
            targets = self._targets(call, scope)
            self._link(call, targets)
            if not targets and type(call.func) in _NAME_OR_ATTRIBUTE:
                unresolved.append((call, scope))
        # Calling what a parameter or a factory's result holds needs the edges found above:
        # `step_fn(x, y)` where every caller passes `train_step_fn = make_train_step_fn(model)`.
        for call, scope in unresolved:
            self._link(call, self._held_functions(call.func, scope, 0))

    def _link(self, call: cst.Call, targets: list[cst.FunctionDef]) -> None:
        if targets:
            self.callees[call] = targets
        for target in targets:
            self.callers[target].append(call)

    def _held_functions(
        self, value: cst.BaseExpression, scope: Scope, depth: int
    ) -> list[cst.FunctionDef]:
        """The functions of this file a value evidently holds: a `def`, a name or `self.` attribute
        bound to one, the function a factory of the file returns, or what every caller passes
        for a parameter."""
        if depth > _HELD_DEPTH:
            return []
        if type(value) is cst.Call:
            return [
                f
                for factory in self.callees.get(value, ())
                for f in self.returned_functions(factory)
            ]
        if type(value) is cst.Attribute:
            bindings = self.attr_bindings.get(dotted(value) or "", [])
            return [
                f
                for b in bindings
                if b.exact is not None
                for f in self._held_functions(b.exact, self.scope_of(b.node), depth + 1)
            ]
        if not isinstance(value, cst.Name):
            return []
        found_in, bindings = self.resolve(value.value, scope)
        functions: list[cst.FunctionDef] = []
        for binding in bindings:
            if binding.kind is BindingKind.DEF and isinstance(binding.node, cst.FunctionDef):
                functions.append(binding.node)
            elif binding.exact is not None:
                functions += self._held_functions(binding.exact, found_in, depth + 1)
            elif binding.kind is BindingKind.PARAM and isinstance(binding.node, cst.Param):
                functions += self._passed_functions(binding.node, depth)
        return functions

    def returned_functions(self, factory: cst.FunctionDef) -> list[cst.FunctionDef]:
        """The nested functions a factory returns by name (`return perform_train_step`), found
        once per factory: every call of it asks again."""
        known = self._returned.get(factory)
        if known is None:
            known = self._returned[factory] = self._returned_functions(factory)
        return known

    def _returned_functions(self, factory: cst.FunctionDef) -> list[cst.FunctionDef]:
        found = []
        for node in self.own_nodes(factory):
            if type(node) is cst.Return and type(node.value) is cst.Name:
                bindings = self.bindings[factory].get(node.value.value, [])
                found += [
                    b.node
                    for b in bindings
                    if b.kind is BindingKind.DEF and isinstance(b.node, cst.FunctionDef)
                ]
        return found

    def _passed_functions(self, param: cst.Param, depth: int) -> list[cst.FunctionDef]:
        """What the file's callers of the parameter's function pass for it, as functions."""
        found = []
        for call, arg in self.arguments(param):
            if arg is not None:
                found += self._held_functions(arg, self.scope_of(call), depth + 1)
        return found

    def arguments(self, param: cst.Param) -> list[tuple[cst.Call, cst.BaseExpression | None]]:
        """Each call of the file that runs `param`'s function, with what it passes for `param` (None
        where that is not known: left out, or after a `*args`). Calls that hand the function over
        as a callback are left out: the callee, not that call, passes its arguments."""
        params = self.parents.get(param)
        function = self.parents.get(params) if isinstance(params, cst.Parameters) else None
        if not isinstance(function, cst.FunctionDef) or not isinstance(params, cst.Parameters):
            return []
        positional = [*params.posonly_params, *params.params]
        index = next((i for i, p in enumerate(positional) if p is param), None)
        if index is not None and positional[0].name.value in ("self", "cls"):
            index -= 1  # `self.f(x)`, `model(x)`: the receiver binds the first parameter
        return [
            (call, passed_argument(call, param.name.value, index))
            for call in self.callers.get(function, ())
            if (call, function) not in self.callbacks
        ]

    def _targets(self, call: cst.Call, scope: Scope) -> list[cst.FunctionDef]:
        """The functions of this file a call runs: `f(x)`; `self.f(x)`; `model(x)` -> the `forward` of
        the file's class `model` was built from; and functions passed to it (`optimizer.step(closure)`,
        callbacks), which the callee calls."""
        callbacks = self._callbacks(call, scope)
        self.callbacks.update((call, function) for function in callbacks)
        return self._direct_targets(call, scope) + callbacks

    def _direct_targets(self, call: cst.Call, scope: Scope) -> list[cst.FunctionDef]:
        func = call.func
        if type(func) is cst.Name:
            bindings = self._bindings_at(func.value, scope, call)
            found = [
                b.node
                for b in bindings
                if b.kind is BindingKind.DEF and isinstance(b.node, cst.FunctionDef)
            ]
            return found or self._forwards([b.exact for b in bindings], scope)
        if (
            isinstance(func, cst.Attribute)
            and type(func.value) is cst.Name
            and func.value.value in ("self", "cls")
        ):
            klass = next((p for p in self.ancestors(call) if type(p) is cst.ClassDef), None)
            if klass is None:
                return []
            methods = self._own_methods(klass, func.attr.value)
            methods += self.overrides(klass, func.attr.value)
            return methods or self._forwards(
                [b.exact for b in self.attr_bindings.get(dotted(func) or "", [])], scope
            )
        if isinstance(func, cst.Attribute):
            return self._instance_method(func, scope)
        return []

    def _own_methods(self, klass: cst.ClassDef, name: str) -> list[cst.FunctionDef]:
        """The `def name` statements in the body of `klass` itself."""
        return [
            b.node
            for b in self.bindings[klass].get(name, [])
            if b.kind is BindingKind.DEF and isinstance(b.node, cst.FunctionDef)
        ]

    def overrides(self, klass: cst.ClassDef, name: str) -> list[cst.FunctionDef]:
        """The methods `name` that the file's subclasses of `klass` (at any depth) define: what
        `self.name(...)` in a method of `klass` runs when `self` is one of them (a base trainer's
        loop calling `self.forward_propagation(batch)`, which each subclass overrides)."""
        if name not in self._method_names:
            return []  # no class of the file defines it: most self calls of a flat class end here
        found: list[cst.FunctionDef] = []
        seen = {klass}
        pending = list(self._subclasses.get(klass, ()))
        while pending:
            sub = pending.pop()
            if sub in seen:
                continue
            seen.add(sub)
            found += self._own_methods(sub, name)
            pending += self._subclasses.get(sub, ())
        return found

    @cached_property
    def _subclasses(self) -> dict[cst.ClassDef, list[cst.ClassDef]]:
        """The file's classes each class of the file is a direct base of, from the bases as
        written (`class MlmTrainer(Trainer)`); a base named from elsewhere links nothing."""
        found: dict[cst.ClassDef, list[cst.ClassDef]] = defaultdict(list)
        for klass in self.classes.values():
            for base in klass.bases:
                parent = (
                    self.classes.get(base.value.value) if type(base.value) is cst.Name else None
                )
                if parent is not None and parent is not klass:
                    found[parent].append(klass)
        return found

    def _instance_method(self, func: cst.Attribute, scope: Scope) -> list[cst.FunctionDef]:
        """`lm.generate(x)` where every binding of `lm` builds the file's class `LM`: `LM.generate`."""
        if func.attr.value not in self._method_names:
            return []  # no class of the file defines it: most attribute calls end here
        built = self.built_from(func.value, scope)
        if not isinstance(built, cst.Name):
            return []
        klass = self._class_named(built.value, scope)
        if klass is None:
            return []
        found = self.bindings[klass].get(func.attr.value, [])
        return [b.node for b in found if b.kind == "def" and isinstance(b.node, cst.FunctionDef)]

    @cached_property
    def _method_names(self) -> frozenset[str]:
        return frozenset(
            s.name.value
            for klass in self.classes.values()
            if isinstance(klass.body, cst.IndentedBlock)
            for s in klass.body.body
            if isinstance(s, cst.FunctionDef)
        )

    def built_from(self, value: cst.BaseExpression, scope: Scope) -> cst.BaseExpression | None:
        """The callee that built what `value` (a name or `self.` attribute) holds, when every
        binding agrees: `LM` for `lm = LM(cfg).cuda()`, `AutoModel.from_pretrained` for
        `m = AutoModel.from_pretrained(p)`. None when unknown."""
        if type(value) is cst.Name:
            bindings = self.resolve(value.value, scope)[1]
        elif isinstance(value, cst.Attribute) and dotted(value.value) == "self":
            bindings = self.attr_bindings.get(dotted(value) or "", [])
        else:
            return None
        found: dict[str, cst.BaseExpression] = {}
        for binding in bindings:
            if _rebinds_itself(binding.exact, value):
                continue  # `model = model.cuda()` keeps what `model` was built from
            callee = _constructor(binding.exact)
            if callee is None or (key := dotted(callee)) is None:
                return None
            found[key] = callee
        return next(iter(found.values())) if len(found) == 1 else None

    def builders(self, value: cst.BaseExpression, depth: int = 2) -> list[cst.BaseExpression]:
        """The callees that built what `value` (a name used in the file, or a `self.`
        attribute) may hold where it is used: each binding that reaches the use, and for a
        parameter what every call of the file passes for it (`generate(model, q)` after `model
        = PeftModel.from_pretrained(...)`), `depth` calls up. Empty when any of them is unknown."""
        if isinstance(value, cst.Name):
            bindings = self.reaching(value)
        elif isinstance(value, cst.Attribute) and dotted(value.value) == "self":
            bindings = self.attr_bindings.get(dotted(value) or "", [])
        else:
            return []
        found: list[cst.BaseExpression] = []
        for binding in bindings:
            built = self._binding_builders(binding, depth)
            if not built:
                return []
            found += built
        return found

    def _binding_builders(self, binding: Binding, depth: int) -> list[cst.BaseExpression]:
        if binding.kind is BindingKind.UNPACK and type(binding.value) is cst.Call:
            return self._returned_builders(binding.value, binding.path, depth) or []
        if binding.kind is BindingKind.ASSIGN:
            call = _construction(binding.exact)
            if call is not None:
                return self._returned_builders(call, (), depth) or [call.func]
            held = _chain_receiver(binding.exact)  # `model = model.cuda()`: what it held
            return self.builders(held, depth - 1) if held is not None and depth > 0 else []
        if binding.kind is not BindingKind.PARAM or depth == 0:
            return []
        assert isinstance(binding.node, cst.Param)
        passed = self.arguments(binding.node)
        found: list[cst.BaseExpression] = []
        for _, argument in passed:
            built = self.builders(argument, depth - 1) if argument is not None else []
            if not built:
                return []
            found += built
        return found

    def _returned_builders(
        self, call: cst.Call, path: tuple[int, ...], depth: int
    ) -> list[cst.BaseExpression] | None:
        """For a call of this file's own functions, the callees that built the part `path` of
        what they return (`model, tok = load_model(p)`, whose `return model, tokenizer` hands
        back `AutoModelForCausalLM.from_pretrained(p)`), `depth` calls down; empty when any
        return is unknown. None when `call` runs no function of this file."""
        functions = self.callees.get(call)
        if not functions:
            return None
        found: list[cst.BaseExpression] = []
        for function in functions:
            returns = [n for n in self.own_nodes(function) if type(n) is cst.Return]
            if depth == 0 or not returns:
                return []
            for node in returns:
                part = _element(node.value, path) if node.value is not None else None
                built = self.builders(part, depth - 1) if part is not None else []
                if not built:
                    return []
                found += built
        return found

    def outside_callee(self, call: cst.Call) -> tuple[str, str | None] | None:
        """What a call runs when it is defined outside this file, as written here: `("evaluate",
        None)` for `evaluate(...)` or `("utils.evaluate", None)` for `utils.evaluate(...)`, and
        `("Meter", "update")` for `meter.update(...)` where `meter = Meter()`. None for calls
        of the file's own functions and for what cannot be told."""
        if call in self.callees:
            return None
        func = call.func
        if type(func) is cst.Name:
            return (func.value, None)
        if not isinstance(func, cst.Attribute):
            return None
        built = self.built_from(func.value, self.scope_of(call))
        if built is not None:
            name = dotted(built)
            return (name, func.attr.value) if name else None
        name = dotted(func)
        return (name, None) if name and dotted(func.value) != "self" else None

    def _class_named(self, name: str, scope: Scope) -> cst.ClassDef | None:
        nodes = {b.node for b in self.resolve(name, scope)[1] if b.kind == "def"}
        node = nodes.pop() if len(nodes) == 1 else None
        return node if isinstance(node, cst.ClassDef) else None

    def _bindings_at(self, name: str, scope: Scope, call: cst.Call) -> list[Binding]:
        """The bindings of `name` a call may run. In the scope that binds it, straight-line code runs the
        last one before the call (a notebook that redefines `train` calls each version in turn);
        from another scope, or before any binding, every one may."""
        found_in, bindings = self.resolve(name, scope)
        at = self.order.get(call)
        if found_in is not scope or at is None:
            return list(bindings)
        earlier = [b for b in bindings if b.order < at]
        return earlier[-1:] if earlier else list(bindings)

    def _forwards(
        self, values: list[cst.BaseExpression | None], scope: Scope
    ) -> list[cst.FunctionDef]:
        """The `forward` a module built from one of the file's classes runs when called:
        `model = Tagger(...).cuda()` then `model(x)`. Every binding must agree on the class."""
        classes = {self.built_class(value, scope) for value in values}
        if len(classes) != 1 or None in classes:
            return []
        (klass,) = classes
        body = klass.body.body if isinstance(klass.body, cst.IndentedBlock) else ()  # type: ignore[union-attr]
        return [s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == "forward"]

    def built_class(self, value: cst.BaseExpression | None, scope: Scope) -> cst.ClassDef | None:
        """The file's class whose instance `value` builds (`Net(...).cuda()`), seen from `scope`."""
        while (
            type(value) is cst.Call
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in _MODULE_CHAIN
        ):
            value = value.func.value
        if type(value) is not cst.Call or type(value.func) is not cst.Name:
            return None
        bindings = self.resolve(value.func.value, scope)[1]
        nodes = {b.node for b in bindings if b.kind is BindingKind.DEF}
        node = nodes.pop() if len(nodes) == 1 else None
        return node if isinstance(node, cst.ClassDef) else None

    def _callbacks(self, call: cst.Call, scope: Scope) -> list[cst.FunctionDef]:
        found = []
        for arg in call.args:
            if type(arg.value) is cst.Name and not arg.star:
                _, bindings = self.resolve(arg.value.value, scope)
                found += [
                    b.node
                    for b in bindings
                    if b.kind is BindingKind.DEF and isinstance(b.node, cst.FunctionDef)
                ]
        return found


def _defines_forward(node: cst.ClassDef) -> bool:
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    return any(isinstance(s, cst.FunctionDef) and s.name.value == "forward" for s in body)


def _torch_module(full: str) -> bool:
    """A torch.nn class that runs a forward (not a container or parameter)."""
    return full.startswith("torch.nn.") and full.rsplit(".", 1)[-1] not in NOT_CALLABLE_MODULES


def _constructor(value: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """The callee of the call that builds `value`, past methods that return their receiver
    (`Net().cuda().eval()` -> `Net`)."""
    built = _construction(value)
    return built.func if built is not None else None


def _construction(value: cst.BaseExpression | None) -> cst.Call | None:
    """The call that builds `value`, past methods that return their receiver
    (`Net().cuda().eval()` -> `Net()`)."""
    while (
        type(value) is cst.Call
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value in _MODULE_CHAIN
    ):
        value = value.func.value
    return value if type(value) is cst.Call else None


def _chain_receiver(value: cst.BaseExpression | None) -> cst.Name | None:
    """The name whose module `value` hands back through methods that return their receiver
    (`base.cuda().eval()` -> `base`), or None when `value` is no such chain on a name."""
    held = _chain_base(value)
    return held if type(held) is cst.Name else None


def _rebinds_itself(value: cst.BaseExpression | None, name: cst.BaseExpression) -> bool:
    """`model = model.cuda()`, `self.net = self.net.to(device)`: the name bound again to what
    it held, through methods that return their receiver."""
    base = _chain_base(value)
    held = dotted(base) if isinstance(base, cst.Name | cst.Attribute) else None
    return held is not None and held == dotted(name)


def _chain_base(value: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """What a chain of methods that return their receiver starts from (`base` of
    `base.cuda().eval()`), or None when `value` is no such chain."""
    if not _chained(value):
        return None
    while _chained(value):
        value = value.func.value  # type: ignore[union-attr]
    return value


def _chained(value: cst.BaseExpression | None) -> bool:
    return (
        type(value) is cst.Call
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value in _MODULE_CHAIN
    )


def passed_argument(call: cst.Call, name: str, index: int | None) -> cst.BaseExpression | None:
    """The argument a call passes for a parameter: by keyword, else by position (unknown after a `*args`)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    if index is None or index < 0 or any(a.star for a in call.args):
        return None
    positional = [a.value for a in call.args if a.keyword is None]
    return positional[index] if index < len(positional) else None


def target_names(
    target: cst.BaseExpression, path: tuple[int, ...] = ()
) -> Iterator[tuple[cst.BaseExpression, tuple[int, ...]]]:
    """Names and attribute chains a target binds, with their position in a destructuring."""
    if type(target) is cst.Tuple or type(target) is cst.List:
        for i, element in enumerate(target.elements):
            yield from target_names(element.value, (*path, i))
    elif type(target) is cst.StarredElement:
        yield from target_names(target.value, path)
    elif type(target) is cst.Name or type(target) is cst.Attribute:
        yield target, path


def _element(value: cst.BaseExpression, path: tuple[int, ...]) -> cst.BaseExpression | None:
    """The part of a literal tuple/list right-hand side that lands on `path`, if exact."""
    for i in path:
        if type(value) is not cst.Tuple and type(value) is not cst.List:
            return None
        elements = value.elements
        if i >= len(elements) or any(isinstance(e, cst.StarredElement) for e in elements):
            return None
        value = elements[i].value
    return value


class _Walker:
    def __init__(self, scopes: SemanticModel) -> None:
        self.s = scopes
        self.scopes: list[Scope] = [scopes.module]
        self.stores: set[cst.CSTNode] = set()
        self.calls: list[tuple[cst.Call, Scope]] = []
        # Assignments bind after their right-hand side is evaluated: held until the node is left.
        self.pending: dict[
            cst.CSTNode,
            list[
                tuple[
                    cst.BaseExpression,
                    BindingKind,
                    cst.BaseExpression | None,
                    tuple[int, ...],
                    Scope,
                ]
            ],
        ] = {}
        self.counter = 0
        self.parent: cst.CSTNode | None = None  # the parent of the node being visited
        self.needs_leave = False  # whether the node being visited has work to do when left
        scopes.scope_parent[scopes.module] = None

    # -- generic bookkeeping -------------------------------------------------------------
    def walk(self, root: cst.Module) -> None:
        """Pre-order visits and post-order leaves in libcst's order, iteratively (no recursion limit).

        The loop runs once per node of the file: only nodes with a bucket, a handler or a scope
        (`_DISPATCH`) are handed to Python methods, and leaves are not asked for children. The
        children and parents the engine's traversal found are read, not found again; before the
        traversal is over, this walk records them."""
        # A node to visit is pushed as itself, one to leave wrapped in a 1-tuple (no node is a
        # tuple), and a handled node's parent is read from the parent map: no triple per node.
        todo: list[cst.CSTNode | tuple[cst.CSTNode]] = [root]
        model = self.s
        parents, order, known = model.parents, model.order, model.kids
        dispatch = _DISPATCH.get
        counter = self.counter
        while todo:
            item = todo.pop()
            if type(item) is tuple:
                self.counter = counter
                self._leave(item[0])
                continue
            node: cst.CSTNode = item  # type: ignore[assignment]  # not a tuple: a node
            counter += 1
            order[node] = counter
            kind = type(node)
            entry = dispatch(kind)
            descend = None
            if entry is not None:
                self.counter = counter
                self.parent, self.needs_leave = parents.get(node), False
                bucket, handler, scope = entry
                if bucket is not None:
                    bucket(model, node)
                if handler is not None:
                    descend = handler(self, node)
                if scope:
                    self._push(cast(Scope, node))  # its exact type is one of the scopes
                    self.needs_leave = True
                if self.needs_leave:
                    todo.append((node,))
            if descend is False or kind in LEAF_TYPES:
                continue
            kids = known.get(node)
            if kids is None:
                kids = known[node] = children(node)
                for child in kids:
                    parents[child] = node
            todo.extend(reversed(kids))
        self.counter = counter

    def _leave(self, node: cst.CSTNode) -> None:
        if type(node) in _SCOPE_TYPES:
            self.scopes.pop()
        for target, kind, value, path, scope in self.pending.pop(node, ()):
            self._record(target, Binding(kind, node, value, self.counter, path), scope)

    def _push(self, scope: Scope) -> None:
        self.s.scope_parent[scope] = self.scopes[-1]
        self.scopes.append(scope)

    def _bind(
        self,
        target: cst.BaseExpression,
        kind: BindingKind,
        node: cst.CSTNode,
        value: cst.BaseExpression | None,
        path: tuple[int, ...] = (),
    ) -> None:
        """Bind now (loop targets, parameters, defs): the rest of the node already sees the name."""
        self.stores.add(target)
        self._record(target, Binding(kind, node, value, self.counter, path), self.scopes[-1])

    def _bind_later(
        self,
        target: cst.BaseExpression,
        kind: BindingKind,
        node: cst.CSTNode,
        value: cst.BaseExpression | None,
        path: tuple[int, ...] = (),
    ) -> None:
        """Bind when `node` is left, so its own right-hand side still sees the old binding."""
        self.stores.add(target)
        self.pending.setdefault(node, []).append((target, kind, value, path, self.scopes[-1]))
        self.needs_leave = True

    def _record(self, target: cst.BaseExpression, binding: Binding, scope: Scope) -> None:
        if type(target) is cst.Name:
            self.s.bindings[scope][target.value].append(binding)
            return
        key = dotted(target)
        if key:
            self.s.attr_bindings[key].append(binding)
        if (
            binding.kind in (BindingKind.ASSIGN, BindingKind.UNPACK)
            and isinstance(target, cst.Attribute)
            and isinstance(scope, cst.FunctionDef)
        ):
            owner = self.s.scope_parent.get(scope)
            params = scope.params.params
            if (
                isinstance(owner, cst.ClassDef)
                and params
                and _is_name(target.value, params[0].name.value)
            ):
                self.s.class_attrs[(owner, target.attr.value)].append(binding)

    def _bind_target(
        self, target: cst.BaseExpression, node: cst.CSTNode, value: cst.BaseExpression | None
    ) -> None:
        self._note_mutation(target)
        for name, path in target_names(target):
            exact = _element(value, path) if value is not None else None
            if exact is not None:
                self._bind_later(name, BindingKind.ASSIGN, node, exact)
            else:
                self._bind_later(name, BindingKind.UNPACK, node, value, path)

    # -- binding sites -----------------------------------------------------------------
    def _on_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind_target(target.target, node, node.value)

    def _on_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind_target(node.target, node, node.value)
        else:
            self.stores.add(node.target)

    def _note_mutation(self, target: cst.BaseExpression) -> None:
        """`batch[k] = v.to(device)` changes what `batch` holds without rebinding it."""
        if type(target) is cst.Tuple or type(target) is cst.List:
            for element in target.elements:
                self._note_mutation(element.value)
            return
        if type(target) is not cst.Subscript and type(target) is not cst.Attribute:
            return
        root = target.value
        while type(root) is cst.Subscript or type(root) is cst.Attribute:
            root = root.value
        if isinstance(root, cst.Name):
            self.s.mutated[self.scopes[-1]].add(root.value)

    def _on_AugAssign(self, node: cst.AugAssign) -> None:
        self._note_mutation(node.target)
        if isinstance(node.target, cst.Name | cst.Attribute):
            self._bind_later(node.target, BindingKind.AUGMENT, node, node.value)

    def _on_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind_target(node.target, node, node.value)

    def _on_While(self, node: cst.While) -> None:
        self.s.loops.append(node)

    def _on_For(self, node: cst.For) -> None:
        self.s.loops.append(node)
        for name, path in target_names(node.target):
            self._bind(name, BindingKind.LOOP, node, node.iter, path)

    def _on_CompFor(self, node: cst.CompFor) -> None:
        for name, path in target_names(node.target):
            self._bind(name, BindingKind.LOOP, node, node.iter, path)

    def _on_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            for name, path in target_names(node.asname.name):
                self._bind(
                    name, BindingKind.WITH if not path else BindingKind.OTHER, node, node.item, path
                )

    def _on_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bind(node.name.name, BindingKind.OTHER, node, None)

    def _on_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._bind(node.name, BindingKind.DEF, node, None)

    def _on_ClassDef(self, node: cst.ClassDef) -> None:
        self._bind(node.name, BindingKind.DEF, node, None)

    def _on_Param(self, node: cst.Param) -> None:
        # Parameters belong to the function or lambda being entered, pushed just before.
        self._bind(node.name, BindingKind.PARAM, node, None)

    def _on_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            local: cst.BaseExpression = alias.asname.name if alias.asname else alias.name
            while isinstance(local, cst.Attribute):  # `import a.b` binds `a`
                local = local.value
            if isinstance(local, cst.Name):
                self._bind(local, BindingKind.IMPORT, node, None)
        return False

    def _on_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                local = alias.asname.name if alias.asname else alias.name
                if isinstance(local, cst.Name):
                    self._bind(local, BindingKind.IMPORT, node, None)
        return False

    def _on_Global(self, node: cst.Global) -> bool:
        for item in node.names:
            self.s.declared[self.scopes[-1]][item.name.value] = "global"
        return False

    def _on_Nonlocal(self, node: cst.Nonlocal) -> bool:
        for item in node.names:
            self.s.declared[self.scopes[-1]][item.name.value] = "nonlocal"
        return False

    # -- uses --------------------------------------------------------------------------
    def _on_Call(self, node: cst.Call) -> None:
        self.calls.append((node, self.scopes[-1]))

    def _on_SimpleString(self, node: cst.SimpleString) -> None:
        self.s.strings.append(node)

    def _on_Name(self, node: cst.Name) -> None:
        # Every Name, loads and stores, recorded here rather than by a bucket: one call less each.
        self.s.names[node.value].append(node)
        parent = self.parent
        kind = type(parent)
        if kind in (cst.FunctionDef, cst.ClassDef) and parent.name is node:  # type: ignore[union-attr]
            scope = self.scopes[
                -2
            ]  # a def's own name lives where the def is (its scope is pushed already)
        else:
            scope = self.scopes[-1]
        self.s.name_scope[node] = scope
        self.s.names_in[(scope, node.value)].append(node)
        if node in self.stores:
            return
        if kind is cst.Attribute:
            load = parent.value is node  # type: ignore[union-attr]
        elif kind is cst.Arg:
            load = parent.keyword is not node  # type: ignore[union-attr]
        else:
            load = kind not in (cst.Param, cst.FunctionDef, cst.ClassDef, cst.AsName)
        if load:
            self.s.loads[scope][node.value].append(node)


def _is_name(node: cst.BaseExpression, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def _bucket_assign(model: SemanticModel, node: cst.Assign) -> None:
    model.assigns.extend((t.target, node.value) for t in node.targets)


def _bucket_ann_assign(model: SemanticModel, node: cst.AnnAssign) -> None:
    if node.value is not None:
        model.assigns.append((node.target, node.value))


_BUCKETS = {
    cst.Attribute: lambda model, node: model.attributes[node.attr.value].append(node),
    cst.Assign: _bucket_assign,
    cst.AnnAssign: _bucket_ann_assign,
    cst.FunctionDef: lambda model, node: model.functions[node.name.value].append(node),
    cst.ClassDef: lambda model, node: model.classes.__setitem__(node.name.value, node),
}

_HANDLERS = {
    getattr(cst, name[len("_on_") :]): function
    for name, function in vars(_Walker).items()
    if name.startswith("_on_")
}
# What the walk does at a node of each type: (bucket, handler, whether it opens a scope).
_DISPATCH = {
    kind: (_BUCKETS.get(kind), _HANDLERS.get(kind), kind in _SCOPE_TYPES)
    for kind in {*_BUCKETS, *_HANDLERS, *_SCOPE_TYPES}
}
