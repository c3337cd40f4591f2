"""The grad mode layer: where autograd records, and whether code needs it.

`Grad` answers, for code in any file: the grad mode at a node (`with torch.no_grad()` /
`inference_mode()` / `set_grad_enabled(False)`, decorators of those, `enable_grad()`, and
callers: a function only called from grad-disabled code in the file runs without grad too),
the mode a call's work runs in (a callee decorated no_grad in this file or another module of
the project, a framework method that turns grad off itself), and whether code needs autograd
(backward, `autograd.grad`, `requires_grad`, an optimizer step, or a call of a function in the
file that does). TL001's evaluation judgement (`evaluation.py`) sits on top of it.

It leans towards "not known" whenever the code is dynamic: a finding built on it should be one
a PyTorch expert acts on.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from enum import Enum
from functools import cached_property
from typing import TYPE_CHECKING, cast

import libcst as cst

from torchlint.analysis.entry_points import EntryPoints
from torchlint.analysis.frameworks import (
    NEW_WORKER_CALLS,
    NO_GRAD_METHOD_NAMES,
    STAGE_NAMES,
    UNWRAP_METHOD_NAMES,
    WITHOUT_GRAD_NAMES,
    Framework,
    framework_of,
)
from torchlint.analysis.loops import LoopFacts
from torchlint.analysis.model import SemanticModel
from torchlint.analysis.names import (
    is_eval_name,
    is_optimizer_name,
    name_tokens,
)
from torchlint.analysis.nodes import children, find_all, is_attribute, is_name, own_returns
from torchlint.analysis.symbols import dotted

if TYPE_CHECKING:
    from torchlint.analysis.context import FileContext

# A list of statements: what `.body` of a block holds.
Block = cst.IndentedBlock | cst.Module


class GradMode(Enum):
    RECORDING = "recording"  # nothing in the file turns autograd off here
    DISABLED = (
        "disabled"  # no_grad / inference_mode / set_grad_enabled(False), or only called from there
    )
    ENABLED = "enabled"  # explicitly re-enabled: enable_grad / set_grad_enabled(True)
    MANAGED = "managed"  # set by code whose effect is not known statically


_GRAD_APIS = frozenset(
    {"no_grad", "inference_mode", "set_grad_enabled", "enable_grad", "_set_grad_enabled"}
)
_GRAD_FUNCTIONAL = frozenset(
    {
        "grad",
        "backward",
        "vjp",
        "jvp",
        "jacrev",
        "jacfwd",
        "hessian",
        "jacobian",
        "grad_and_value",
        "hvp",
        "vhp",
    }
)
# A module's `zero_grad` is not here: it clears gradients under `no_grad` as well, and a test
# loop copied from the training loop keeps it (`model.zero_grad()` before a forward whose loss is
# only read). An optimizer's `zero_grad` starts an update (`_call_needs_grad`).
_NEEDS_GRAD_METHODS = frozenset({"backward", "manual_backward", "requires_grad_", "retain_grad"})
_MODE_SWITCHES = frozenset({"eval", "train"})
# How many hand-offs `Grad._hands_off_mode` follows: `forward` -> `run` -> a grad-off method.
_HAND_OFF_DEPTH = 3
# Builtins whose work records nothing (what a hand-off may do besides its grad-off calls).
_INERT_BUILTINS = frozenset(
    {"range", "len", "type", "isinstance", "list", "tuple", "dict", "int", "float", "str", "bool"}
)
# torch factories: a new tensor made of sizes or data, no graph behind it.
_INERT_FACTORIES = frozenset(
    f"torch.{name}"
    for name in (
        "zeros",
        "ones",
        "empty",
        "full",
        "tensor",
        "as_tensor",
        "arange",
        "zeros_like",
        "ones_like",
        "empty_like",
        "full_like",
    )
)


def is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def literal_bool(expr: cst.BaseExpression) -> bool | None:
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return expr.value == "True"
    return None


def _first_arg(call: cst.Call, keyword: str) -> cst.Arg | None:
    for i, arg in enumerate(call.args):
        if (arg.keyword is None and i == 0 and not arg.star) or (
            arg.keyword is not None and arg.keyword.value == keyword
        ):
            return arg
    return None


def _only_stages(test: cst.BaseExpression, stage: str, framework: Framework) -> bool:
    """Whether `test` holds only for `framework`'s evaluation stages of the parameter `stage`:
    `stage == sb.Stage.VALID`, `stage != Stage.TRAIN`, an `or` of such tests, an `and` with one."""
    if isinstance(test, cst.BooleanOperation):
        left = _only_stages(test.left, stage, framework)
        right = _only_stages(test.right, stage, framework)
        return (left and right) if isinstance(test.operator, cst.Or) else (left or right)
    if not (
        isinstance(test, cst.Comparison)
        and is_name(test.left, stage)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].comparator, cst.Attribute)
    ):
        return False
    target = test.comparisons[0]
    named = cast(cst.Attribute, target.comparator).attr.value
    if isinstance(target.operator, cst.Equal | cst.Is):
        return named in framework.eval_stages
    return isinstance(target.operator, cst.NotEqual | cst.IsNot) and named in framework.train_stages


class Shared:
    """The semantic model and the tree helpers both facts use."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx

    @property
    def model(self) -> SemanticModel:
        return self.ctx.fact(SemanticModel)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.ctx.parents.get(node)

    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        for parent in self.ctx.ancestors(node):
            if type(parent) is cst.FunctionDef:  # isinstance would go through ABCMeta
                return parent
        return None

    def calls_in(self, function: cst.FunctionDef) -> list[cst.Call]:
        """The calls whose innermost enclosing function is `function`."""
        return self._calls_by_function.get(function, [])

    @cached_property
    def _calls_by_function(self) -> dict[cst.FunctionDef | None, list[cst.Call]]:
        found: dict[cst.FunctionDef | None, list[cst.Call]] = defaultdict(list)
        for call in self.model.calls:
            found[self.enclosing_function(call)].append(call)
        return found

    def enclosing_class(self, function: cst.FunctionDef) -> cst.ClassDef | None:
        """The class `function` is a method of (directly in its body), else None."""
        return self.model.method_class(function)

    def call_sites(self, function: cst.FunctionDef) -> list[cst.Call] | None:
        """Every call of `function` in the file; None when it is also referenced other than by a call."""
        name = function.name.value
        refs: Iterable[cst.CSTNode]
        if self.enclosing_class(function) is not None:
            refs = self.model.attributes.get(name, ())
        else:
            refs = [n for n in self.model.names.get(name, ()) if self._is_load(n)]
        sites = []
        for ref in refs:
            if self._other_receiver(ref, function):
                continue
            parent = self.parent(ref)
            if not (isinstance(parent, cst.Call) and parent.func is ref):
                return None
            sites.append(parent)
        return sites

    def _other_receiver(self, ref: cst.CSTNode, method: cst.FunctionDef) -> bool:
        """Whether `ref` (`x.name`, for the method `method`) reads the attribute of an object
        that cannot be an instance of `method`'s class: `self` of a class unrelated to it, or a
        name bound only to what calls build that cannot be one (`op.WrapperPython()`, a class
        of another library). Then `x.start()` is no call of this class's `start`."""
        klass = self.enclosing_class(method)
        project = self.ctx.project
        if (
            klass is None
            or project is None
            or not isinstance(ref, cst.Attribute)
            or not isinstance(ref.value, cst.Name)
        ):
            return False
        path = self.ctx.absolute_path
        holder = self.model.self_class(ref)
        if holder is not None:
            return holder is not klass and not project.may_be_instance(
                path, holder.name.value, klass.name.value
            )
        built = self.model.built_by_calls(ref.value)
        return built is not None and all(
            project.builds_unrelated(path, callee, klass.name.value) for callee in built
        )

    def _is_load(self, name: cst.Name) -> bool:
        """Whether `name` reads a variable (not an attribute name, keyword, parameter, def or import)."""
        parent = self.parent(name)
        if isinstance(parent, cst.Attribute) and parent.attr is name:
            return False
        if isinstance(parent, cst.Arg) and parent.keyword is name:
            return False
        if isinstance(
            parent, cst.FunctionDef | cst.ClassDef | cst.Param | cst.ImportAlias | cst.AsName
        ):
            return False
        return not isinstance(parent, cst.AssignTarget)


class Grad(Shared):
    """Grad mode at a node and whether code needs autograd."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self._callers: dict[cst.FunctionDef, GradMode | None] = {}
        self._busy: set[cst.FunctionDef] = set()
        self._withs: dict[cst.With, GradMode | None] = {}
        self._uses_grad_api: dict[cst.FunctionDef, bool] = {}
        self._hands_off: dict[tuple[cst.FunctionDef, int], GradMode | None] = {}
        self._stage_branches: dict[cst.If, bool] = {}

    # -- grad mode ----------------------------------------------------------------------
    def mode(self, node: cst.CSTNode) -> GradMode:
        """The grad mode `node` runs in, as far as this file shows."""
        found = self._mode_within(node, None)
        assert found is not None  # only a `stop` function ends the walk without a mode
        return found

    def _mode_within(self, node: cst.CSTNode, stop: cst.FunctionDef | None) -> GradMode | None:
        """The grad mode `node` runs in; None when nothing inside `stop` (an ancestor function)
        sets one, so that `node` runs in whatever mode `stop` itself runs in."""
        child = node
        for parent in self.ctx.ancestors(node):
            if parent is stop:
                return None
            if type(parent) is cst.With and child is parent.body:
                found = self._with_mode(parent)
                if found is not None:
                    return found
            elif type(parent) is cst.If and child is parent.body:
                if self._evaluation_stage_branch(parent):
                    return GradMode.DISABLED
            elif type(parent) is cst.Lambda or type(parent) is cst.GeneratorExp:
                if type(parent) is cst.Lambda and self._runs_in_new_worker(parent):
                    return GradMode.RECORDING  # a new thread or process starts with grad on
                return GradMode.MANAGED  # runs later, wherever it is consumed
            elif type(parent) is cst.FunctionDef:
                found = self._function_mode(parent)
                if found is not None:
                    return found
            child = parent
        return GradMode.MANAGED if self._module_sets_grad() else GradMode.RECORDING

    def _runs_in_new_worker(self, function: cst.Lambda) -> bool:
        """A lambda handed to a call that runs it in a new worker process or thread
        (`register_trainable(name, lambda cfg, rpt: eval_tta(cfg, rpt))`: `NEW_WORKER_CALLS`),
        where grad mode is on whatever the caller's."""
        argument = self.parent(function)
        call = self.parent(argument) if type(argument) is cst.Arg else None
        return type(call) is cst.Call and self.ctx.symbols.qualname(call.func) in NEW_WORKER_CALLS

    def _evaluation_stage_branch(self, branch: cst.If) -> bool:
        """`if stage == sb.Stage.VALID:` in a framework's stage hook (speechbrain's
        `on_stage_end`, which its evaluation loops call under no_grad): the branch runs only
        for an evaluation stage, so without grad."""
        if branch not in self._stage_branches:
            self._stage_branches[branch] = self._evaluation_stage_branch_now(branch)
        return self._stage_branches[branch]

    def _evaluation_stage_branch_now(self, branch: cst.If) -> bool:
        if not any(n.value in STAGE_NAMES for n in find_all(branch.test, cst.Name)):  # type: ignore[attr-defined]
            return False  # the cheap gate: no stage named
        function = self.enclosing_function(branch)
        if function is None or not function.params.params:
            return False
        framework = self.ctx.fact(EntryPoints).stage_hook(function)
        params = function.params.params
        stage = params[1] if params[0].name.value == "self" and len(params) > 1 else params[0]
        return framework is not None and _only_stages(branch.test, stage.name.value, framework)

    def disabled(self, node: cst.CSTNode) -> bool:
        return self.mode(node) is GradMode.DISABLED

    def call_mode(self, call: cst.Call) -> GradMode:
        """The grad mode the work of `call` runs in: the caller's, unless the callee sets its own
        (a no_grad/inference_mode decorator on the function or method called, in this file or in
        another module of the project, or a framework method that turns grad off itself, such as
        a Hugging Face model's `generate`)."""
        own = self._callee_mode(call)
        return own if own is not None else self.mode(call)

    def _callee_mode(self, call: cst.Call, depth: int = 0) -> GradMode | None:
        targets = [
            f for f in self.model.callees.get(call, ()) if (call, f) not in self.model.callbacks
        ]
        if targets:
            modes = {
                self._decorated_mode(f) or self._body_mode(f) or self._hands_off_mode(f, depth)
                for f in targets
            }
            return modes.pop() if len(modes) == 1 else None
        func = call.func
        if isinstance(func, cst.Attribute) and self._framework_turns_grad_off(func):
            return GradMode.DISABLED
        if self.ctx.project is None:
            return None
        outside = self._instance_forward(call) or self.model.outside_callee(call)
        if outside is not None and self.ctx.project.decorated_grad_off(
            self.ctx.absolute_path, *outside
        ):
            return GradMode.DISABLED
        return self._unseen_receiver_mode(call) if outside is None or outside[1] is None else None

    def _unseen_receiver_mode(self, call: cst.Call) -> GradMode | None:
        """`model.recognize(x)` on a name the file binds to nothing it can see the class of (a
        parameter, a builder's result), where every project class defining `recognize`
        decorates it no_grad (`ProjectIndex.grad_off_by_name`): it runs without grad."""
        func = call.func
        if not isinstance(func, cst.Attribute) or dotted(func.value) in (None, "self"):
            return None
        if self.ctx.symbols.qualname(func) is not None:
            return None  # a function of an imported module: `outside_callee` answered it
        project = self.ctx.project
        found = project is not None and project.grad_off_by_name(func.attr.value)
        return GradMode.DISABLED if found else None

    def _instance_forward(self, call: cst.Call) -> tuple[str, str] | None:
        """`("Net", "forward")` for `model(x)` or `self.net(x)` where every binding builds it
        from the class `Net` another module defines: calling a module runs its `forward`."""
        func = call.func
        if call in self.model.callees or not (
            isinstance(func, cst.Name)
            or (isinstance(func, cst.Attribute) and dotted(func.value) == "self")
        ):
            return None
        built = self.model.built_from(func, self.model.scope_of(call))
        name = dotted(built) if built is not None else None
        if not name or not name.rsplit(".", 1)[-1][:1].isupper():
            return None  # a factory function's result: which class it builds is not known here
        return (name, "forward")

    def _framework_turns_grad_off(self, func: cst.Attribute) -> bool:
        """`model.generate(...)` where everything `model` may hold there was built by a
        framework whose `generate` turns grad off itself (a Hugging Face model, a PEFT wrapper
        of one), also when `model` is a parameter the file's calls pass such a model for."""
        if func.attr.value not in NO_GRAD_METHOD_NAMES:
            return False
        built = self.model.builders(func.value)
        return bool(built) and all(self._built_turns_off(b, func.attr.value, 0) for b in built)

    def _built_turns_off(self, built: cst.BaseExpression, method: str, depth: int) -> bool:
        """Whether what the callee `built` returns runs `method` without grad: a framework's
        class or factory whose `method` is in the table's `no_grad_methods`, or a method of
        such an object that hands back the model it wraps (`model = model.merge_and_unload()`
        of a PEFT wrapper, the table's `unwrap_methods`), judged by what built the receiver."""
        framework = framework_of(self.ctx.symbols.qualname(built) or "")
        if framework is not None:
            return method in framework.no_grad_methods
        if self._project_class_hands_over(built, method):
            return True
        if not isinstance(built, cst.Attribute) or built.attr.value not in UNWRAP_METHOD_NAMES:
            return False
        inner = self.model.builders(built.value) if depth < 2 else []
        return bool(inner) and all(
            (wrapper := framework_of(self.ctx.symbols.qualname(b) or "")) is not None
            and built.attr.value in wrapper.unwrap_methods
            and method in wrapper.no_grad_methods
            for b in inner
        )

    def _project_class_hands_over(self, built: cst.BaseExpression, method: str) -> bool:
        """`PromptForGeneration(plm)` of another project module, a subclass of transformers'
        `GenerationMixin` whose `generate` is the library's or calls `super().generate(...)`:
        the framework's `method` (the table's `no_grad_methods`) does the work, without grad."""
        name = dotted(built)
        project = self.ctx.project
        if project is None or not name or not name.rsplit(".", 1)[-1][:1].isupper():
            return False
        outside = project.method_from_outside(self.ctx.absolute_path, name, method)
        return any(
            (framework := framework_of(base)) is not None and method in framework.no_grad_methods
            for base in outside
        )

    def _decorated_mode(self, function: cst.FunctionDef) -> GradMode | None:
        """The mode a function's own decorators set, if any."""
        for decorator in reversed(function.decorators):
            found = self.context_mode(decorator.decorator)
            if found is not None:
                return found
        return None

    def _body_mode(self, function: cst.FunctionDef) -> GradMode | None:
        """The mode a function's whole body runs in when, past its docstring, it is one `with`
        block that sets one (`def forward(self, x): with torch.no_grad(): ...`): its callers'
        mode does not reach its work, as with a decorator."""
        body = function.body
        if not isinstance(body, cst.IndentedBlock):
            return None
        statements = list(body.body)
        if function.get_docstring() is not None:
            statements = statements[1:]
        if len(statements) != 1 or not isinstance(statements[0], cst.With):
            return None
        return self._with_mode(statements[0])

    def _hands_off_mode(self, function: cst.FunctionDef, depth: int) -> GradMode | None:
        """DISABLED for a function that only hands its work on to callees of the file that run
        without grad (`def forward(self, idx, state): ... return self.forward_one(idx, state)`,
        `forward_one` decorated no_grad or wholly under `with torch.no_grad():`): every return
        gives back such a call's result, and what else it runs records nothing (builtins, torch
        factories, more grad-off calls; arithmetic only in indices and sizes). Its callers'
        mode then reaches no work that records, as with a decorator. Followed
        `_HAND_OFF_DEPTH` calls deep; anything else stays unknown."""
        key = (function, depth)
        if key not in self._hands_off:
            self._hands_off[key] = None  # a recursive hand-off proves nothing
            self._hands_off[key] = self._hands_off_now(function, depth)
        return self._hands_off[key]

    def _hands_off_now(self, function: cst.FunctionDef, depth: int) -> GradMode | None:
        if depth >= _HAND_OFF_DEPTH:
            return None
        handed = [ret.value for ret in own_returns(function)]
        if not handed or not all(isinstance(value, cst.Call) for value in handed):
            return None
        for call in self.calls_in(function):
            if (
                not self._inert(call)
                and self._callee_mode(call, depth + 1) is not GradMode.DISABLED
            ):
                return None  # the handed-over calls are among these
        return None if self._computes(function) else GradMode.DISABLED

    def _inert(self, call: cst.Call) -> bool:
        """A builtin or a torch factory: a call whose work records no graph."""
        func = call.func
        qualname = self.ctx.symbols.qualname(func)
        if qualname is not None:
            return qualname in _INERT_FACTORIES
        if not isinstance(func, cst.Name) or func.value not in _INERT_BUILTINS:
            return False
        return not self.model.resolve(func.value, self.model.scope_of(call))[1]

    def _computes(self, function: cst.FunctionDef) -> bool:
        """Whether `function`'s own code does arithmetic other than in an index or in the
        arguments of a builtin or torch factory (`range(n * 3)`, `state[i * 3 + 1]`,
        `torch.zeros(d // h)`): `x * w` may record on a tensor that needs grad."""
        todo: list[cst.CSTNode] = [function.body]
        while todo:
            node = todo.pop()
            kind = type(node)
            if kind in (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.SubscriptElement):
                continue  # runs later, or an index
            if kind is cst.Call and self._inert(cast(cst.Call, node)):
                todo.append(cast(cst.Call, node).func)
                continue
            if kind in (cst.BinaryOperation, cst.AugAssign) or (
                kind is cst.UnaryOperation
                and not isinstance(cast(cst.UnaryOperation, node).operator, cst.Not)
            ):
                return True
            todo.extend(children(node))
        return False

    def context_mode(self, expr: cst.BaseExpression) -> GradMode | None:
        """The mode a context manager or decorator expression sets; None when it is not about grad."""
        target, call = (expr.func, expr) if isinstance(expr, cst.Call) else (expr, None)
        name = dotted(target)
        if name is None:
            return GradMode.MANAGED if self._mentions_grad_api(expr) else None
        last = name.rsplit(".", 1)[-1]
        if last not in _GRAD_APIS:
            return self._bound_mode(name, expr)
        if not (self.ctx.symbols.qualname(target) or "").startswith("torch."):
            return GradMode.MANAGED  # someone's own no_grad helper
        if last == "no_grad":
            return GradMode.DISABLED
        if last == "enable_grad":
            return GradMode.ENABLED
        arg = _first_arg(call, "mode") if call is not None else None
        if last == "inference_mode":
            flag = True if arg is None else literal_bool(arg.value)
            return GradMode.DISABLED if flag else (None if flag is False else GradMode.MANAGED)
        flag = literal_bool(arg.value) if arg is not None else None
        if flag is None:
            return GradMode.MANAGED
        return GradMode.ENABLED if flag else GradMode.DISABLED

    def _bound_mode(self, name: str, expr: cst.BaseExpression) -> GradMode | None:
        """A context manager or decorator of the file's own that may set the grad mode.

        Named for it (`smart_inference_mode()`), bound to an expression using a grad API
        (`ctx = torch.no_grad() if eval else nullcontext()`), or a function of this file whose
        body uses one (`with self._set_training_mode(False):`).
        """
        if any("grad" in t or "inference" in t for t in name_tokens(name.rsplit(".", 1)[-1])):
            return GradMode.MANAGED
        if isinstance(expr, cst.Call):
            functions = self._callees(expr)
        else:
            functions = self._callees(cst.Call(func=expr))
            if any(
                dotted(target) == name and self._mentions_grad_api(value)
                for target, value in self.model.assigns
            ):
                return GradMode.MANAGED
        if any(self._function_uses_grad_api(f) for f in functions):
            return GradMode.MANAGED
        return self._project_context_mode(expr)

    def _project_context_mode(self, expr: cst.BaseExpression) -> GradMode | None:
        """DISABLED for `eval_mode(net)` where `eval_mode` is another module's context manager
        that yields only with grad off (the project index's `grad_off_context`)."""
        project = self.ctx.project
        if project is None or not isinstance(expr, cst.Call):
            return None
        outside = self.model.outside_callee(expr)
        if outside is None or outside[1] is not None:
            return None
        return (
            GradMode.DISABLED
            if project.grad_off_context(self.ctx.absolute_path, outside[0])
            else None
        )

    def _function_uses_grad_api(self, function: cst.FunctionDef) -> bool:
        if function not in self._uses_grad_api:
            self._uses_grad_api[function] = self._mentions_grad_api(function.body)
        return self._uses_grad_api[function]

    def _mentions_grad_api(self, expr: cst.CSTNode) -> bool:
        return any(name.value in _GRAD_APIS for name in find_all(expr, cst.Name))  # type: ignore[attr-defined]

    def _with_mode(self, node: cst.With) -> GradMode | None:
        if node not in self._withs:
            modes = [
                mode for item in node.items if (mode := self.context_mode(item.item)) is not None
            ]
            self._withs[node] = modes[-1] if modes else None  # the last item is the innermost
        return self._withs[node]

    def _function_mode(self, function: cst.FunctionDef) -> GradMode | None:
        found = self._decorated_mode(function)  # the decorator nearest `def` sets the mode last
        if found is not None:
            return found
        if function.name.value in WITHOUT_GRAD_NAMES and self.ctx.fact(
            EntryPoints
        ).runs_without_grad(function):
            return GradMode.DISABLED  # a framework's evaluation hook: its loop turned grad off
        if function in self._stray_grad_calls:
            return GradMode.MANAGED
        return self.callers_mode(function)

    def _module_sets_grad(self) -> bool:
        """Module-level code that switches grad mode globally (`torch.set_grad_enabled(False)`)."""
        return None in self._stray_grad_calls

    @cached_property
    def _stray_grad_calls(self) -> set[cst.FunctionDef | None]:
        """Functions (None: module level) calling a grad API other than as a with item or decorator.

        `torch.set_grad_enabled(False)` as a statement, or `stack.enter_context(torch.no_grad())`,
        switch the mode for the rest of that code in a way a walk up the tree cannot see.
        """
        found: set[cst.FunctionDef | None] = set()
        for call in self.model.calls:
            name = dotted(call.func) or ""
            if name.rsplit(".", 1)[-1] in _GRAD_APIS and not isinstance(
                self.parent(call), cst.WithItem | cst.Decorator
            ):
                found.add(self.enclosing_function(call))
        return found

    def callers_mode(self, function: cst.FunctionDef) -> GradMode | None:
        """The mode every in-file call of `function` runs in; None when its callers are not all visible."""
        if function in self._callers:
            return self._callers[function]
        if function in self._busy:
            return None
        self._busy.add(function)
        try:
            found = self._combine(function, self.call_sites(function))
        finally:
            self._busy.discard(function)
        self._callers[function] = found
        return found

    def _combine(self, function: cst.FunctionDef, sites: list[cst.Call] | None) -> GradMode | None:
        """The one mode `sites` call `function` in. A site inside `function` itself that no
        block there puts in a mode of its own (a recursive call, or `self.head.eval()` in a
        method named `eval`, which the receiver test cannot tell apart) runs in `function`'s
        own mode, so it adds nothing: the sites outside decide."""
        if sites is None:
            return None
        modes = {m for site in sites if (m := self._mode_within(site, function)) is not None}
        if not modes:
            return None
        if len(modes) == 1:
            return modes.pop()
        if GradMode.RECORDING in modes:
            return GradMode.RECORDING
        return GradMode.MANAGED

    # -- needing autograd -----------------------------------------------------------------
    def needs_grad(self, nodes: Iterable[cst.CSTNode]) -> bool:
        """Whether running `nodes` may need autograd: backward, autograd.grad, requires_grad, an optimizer step,
        or a call of a function of this file that needs it."""
        return any(node in self._around_needy for node in nodes)

    def manages_grad(self, nodes: Iterable[cst.CSTNode]) -> bool:
        """Whether `nodes` switch grad on, or dynamically, somewhere (enable_grad, set_grad_enabled(flag))."""
        return any(node in self._around_switches for node in nodes)

    @cached_property
    def _around_needy(self) -> set[cst.CSTNode]:
        """The nodes that need autograd and every node around them: "is one inside X" becomes "is X here"."""
        return self._with_ancestors(self._needy)

    @cached_property
    def _around_switches(self) -> set[cst.CSTNode]:
        switches = [
            call
            for call in self._grad_api_calls
            if self.context_mode(call) in (GradMode.ENABLED, GradMode.MANAGED)
        ]
        return self._with_ancestors(switches)

    def _with_ancestors(self, nodes: Iterable[cst.CSTNode]) -> set[cst.CSTNode]:
        found: set[cst.CSTNode] = set()
        for node in nodes:
            found.add(node)
            for parent in self.ctx.ancestors(node):
                if parent in found:
                    break
                found.add(parent)
        return found

    def needy_within(self, function: cst.FunctionDef) -> list[cst.CSTNode]:
        """The nodes of `function`'s own body (not a nested function's) that need autograd:
        backward, an optimizer step, a call of a function of the file that needs it."""
        return [n for n in self._needy if self.enclosing_function(n) is function]

    def feeds_training(
        self, function: cst.FunctionDef, busy: frozenset[cst.FunctionDef] = frozenset()
    ) -> bool:
        """Whether a call of `function` sits in a loop body or function that itself runs backward,
        or, with grad on, in a function not named for evaluation that does so in turn.

        `loss = criterion(predict(x), y); loss.backward()` needs the graph `predict` builds, and
        so does `predict_poses(x)` called by the `process_batch(x)` a training loop
        backpropagates; a loop that calls `train_one_epoch()` and then `validate()` does not
        make `validate` training.
        """
        calls = self._calls_of(function)
        sites = {
            self._innermost_loop_or_function(site) for site in calls if not self.between_steps(site)
        }
        sites.discard(None)
        if not sites.isdisjoint(self._needy_owners) or self._feeds_training_elsewhere(function):
            return True
        busy = busy | {function}
        for site in calls:
            caller = self.enclosing_function(site)
            if (
                caller is None
                or caller in busy
                or is_eval_name(caller.name.value)
                or self.between_steps(site)
                or self.mode(site) is not GradMode.RECORDING
            ):
                continue
            if self.feeds_training(caller, busy):
                return True
        return False

    def _calls_of(self, function: cst.FunctionDef) -> list[cst.Call]:
        """The file's calls of `function`: by its name, or, when it is handed over as a value
        (`train(loader, net_g, predict, opt)`), the calls the semantic model resolves to it
        through what the callee's parameter receives (`pred = predict(fake)` in `train`)."""
        sites = self.call_sites(function)
        if sites is not None:
            return sites
        return [
            call
            for call in self.model.callers.get(function, ())
            if (call, function) not in self.model.callbacks
        ]

    def _feeds_training_elsewhere(self, function: cst.FunctionDef) -> bool:
        """Whether another module of the project calls `function` (a module-level function or a
        method of a module-level class, by name) in a loop body or function that runs a
        training step itself: a solver's `step` calling `self.compute_predictions(batch)`
        defined in its base class's module."""
        project = self.ctx.project
        owner = self.enclosing_class(function)
        if project is None or not isinstance(self.parent(owner or function), cst.Module):
            return False
        key = f"{owner.name.value}.{function.name.value}" if owner else function.name.value
        return project.feeds_training_elsewhere(self.ctx.absolute_path, key)

    def between_steps(self, site: cst.CSTNode) -> bool:
        """`if step % 100 == 0: rewards.append(test_env())`: a periodic call, in a branch that needs no
        autograd itself (no backward, step or training function), runs between training steps and
        feeds none of them."""
        guard = self.ctx.fact(LoopFacts).periodic_guard(site)
        return guard is not None and guard not in self._around_needy

    @cached_property
    def _needy_owners(self) -> set[cst.CSTNode | None]:
        return {self._innermost_loop_or_function(node) for node in self._direct_needy}

    def _innermost_loop_or_function(self, node: cst.CSTNode) -> cst.CSTNode | None:
        for parent in self.ctx.ancestors(node):
            if isinstance(parent, cst.For | cst.While | cst.FunctionDef):
                return parent
        return None

    @cached_property
    def _grad_api_calls(self) -> list[cst.Call]:
        return [
            call
            for call in self.model.calls
            if (dotted(call.func) or "").rsplit(".", 1)[-1] in _GRAD_APIS
        ]

    @cached_property
    def _direct_needy(self) -> list[cst.CSTNode]:
        """Nodes that need autograd themselves: backward, autograd.grad, `x.requires_grad = True`, optimizer steps."""
        model = self.model
        found: list[cst.CSTNode] = [t for t, _ in model.assigns if is_attribute(t, "requires_grad")]
        return found + [call for call in model.calls if self._call_needs_grad(call)]

    @cached_property
    def _needy(self) -> list[cst.CSTNode]:
        """Nodes that need autograd: direct ones, and calls of functions in the file that contain one."""
        model = self.model
        found = self._direct_needy
        needy_functions: set[cst.FunctionDef] = set()
        frontier = found
        while frontier:
            new = {
                f
                for node in frontier
                for f in self.ctx.ancestors(node)
                if isinstance(f, cst.FunctionDef)
            } - needy_functions
            needy_functions |= new
            frontier = [call for call in model.calls if any(f in new for f in self._callees(call))]
            found = found + frontier
        return found

    def _call_needs_grad(self, call: cst.Call) -> bool:
        func = call.func
        if type(func) is cst.Attribute:
            attr = func.attr.value
            if attr in _NEEDS_GRAD_METHODS:
                return True
            if attr in ("step", "zero_grad") and is_optimizer_name(dotted(func.value) or ""):
                return True
        qualname = self.ctx.symbols.qualname(func) or ""
        return (
            qualname.startswith(("torch.autograd.", "torch.func.", "functorch."))
            and qualname.rsplit(".", 1)[-1] in _GRAD_FUNCTIONAL
        )

    def _callees(self, call: cst.Call) -> list[cst.FunctionDef]:
        """Functions of this file `call` may run, by name (methods by attribute name; not the
        dunder protocol methods such as `super().__init__()`, whose grad mode nothing asks about)."""
        func = call.func
        if type(func) is cst.Name:
            return self._functions_by_name[0].get(func.value, [])
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value not in _MODE_SWITCHES
            and not is_dunder(func.attr.value)
        ):
            return self._functions_by_name[1].get(func.attr.value, [])
        return []

    @cached_property
    def _functions_by_name(
        self,
    ) -> tuple[dict[str, list[cst.FunctionDef]], dict[str, list[cst.FunctionDef]]]:
        """Plain functions and methods of the file, by name."""
        plain: dict[str, list[cst.FunctionDef]] = defaultdict(list)
        methods: dict[str, list[cst.FunctionDef]] = defaultdict(list)
        for name, functions in self.model.functions.items():
            for function in functions:
                (plain if self.enclosing_class(function) is None else methods)[name].append(
                    function
                )
        return plain, methods
